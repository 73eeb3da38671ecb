"""Property (issue 18 §3): a damaged J-STAGE answer is a valid result or a structured error.

Every canned answer (``app/readingroom/jstage/canned``) and every real sample
(``$READINGROOM_SAMPLES/jstage``) is damaged by :func:`tests.property.mutate.xml_mutants` (an
element dropped, renamed, duplicated, its text replaced by a word, a negative or a huge number,
its children by text, the bytes cut) and answered by jstage-mcp's service through a mock
transport: volume lists by ``jstage_list_issues``, article feeds by ``jstage_search_articles``.
The answer must be valid against the published schema or a structured error; never
``INTERNAL_ERROR``; never a zero the answer does not state (a count of 0, or ``ERR_001``); and
the receipt must record what the envelope says.
"""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path

import anyio
import jsonschema
import pytest
from hypothesis import given

from readingroom.core.clock import FakeClock
from readingroom.core.envelope import response_schema
from tests.conftest import samples_dir
from tests.jstage.upstream import Upstream, service
from tests.property.mutate import PROPERTY_EXAMPLES, property_settings, xml_mutants

VALIDATOR = jsonschema.Draft202012Validator(response_schema())
_STATED_ZERO = re.compile(rb"totalResults>\s*0\s*<|<status>\s*ERR_001\s*</status>")


def _samples() -> list:
    canned = resources.files("readingroom.jstage").joinpath("canned")
    found = [(f"canned/{p.name}", p.read_bytes()) for p in sorted(
        canned.iterdir(), key=lambda p: p.name) if p.name.endswith(".xml")]
    real = samples_dir() / "jstage"
    if real.is_dir():
        found += [(f"real/{p.name}", p.read_bytes()) for p in sorted(real.glob("*.xml"))]
    return [pytest.param(body, "issues" if b"<servicecd>2<" in body else "articles", id=name)
            for name, body in found]


SAMPLES = _samples()
EACH = max(3, PROPERTY_EXAMPLES // max(1, len(SAMPLES)))


def _answer(body: bytes, kind: str, ledger: Path) -> tuple[dict, dict]:
    up = Upstream(FakeClock(), work=0.0, script=lambda params: (200, {}, body))

    async def run() -> dict:
        svc = service(up, ledger)
        try:
            if kind == "issues":
                env = await svc.list_issues({"cdjournal": "rrkiyo"}, count=20)
            else:
                env = await svc.search_articles({"article": "漱石"}, count=20)
        finally:
            await svc.aclose()
        return env.to_data()

    data = anyio.run(run)
    return data, json.loads(ledger.read_text("utf-8").splitlines()[-1])


def _check(what: str, body: bytes, data: dict, receipt: dict) -> None:
    VALIDATOR.validate(data)
    assert any("Powered by J-STAGE" in a for a in data["attribution"]), what
    error = data.get("error")
    if error is not None:
        assert error["code"] != "INTERNAL_ERROR", (what, error)
        assert "result" not in data and not data["items"], what
        assert receipt["outcome"] == error["code"] and receipt["total"] is None, what
        return
    result = data["result"]
    total = result["total"]
    assert isinstance(total, int) and total >= 0, (what, result)
    assert result["returned"] == len(data["items"]), what
    if total == 0:
        assert _STATED_ZERO.search(body), f"{what}: a zero the answer does not state"
        assert all(s["status"] == "empty" for s in data["sources"]), what
    assert receipt["outcome"] == ("ok" if total else "empty"), what
    assert (receipt["total"], receipt["returned"]) == (total, result["returned"]), what


@pytest.mark.parametrize(("original", "kind"), SAMPLES)
def test_every_damaged_answer_is_a_result_or_a_structured_error(original: bytes, kind: str,
                                                                 tmp_path: Path) -> None:
    ledger = tmp_path / "receipts.jsonl"
    data, receipt = _answer(original, kind, ledger)
    _check("undamaged", original, data, receipt)

    @property_settings(EACH)
    @given(xml_mutants(original))
    def damaged(mutant: tuple[str, bytes]) -> None:
        what, body = mutant
        data, receipt = _answer(body, kind, ledger)
        _check(what, body, data, receipt)

    damaged()
