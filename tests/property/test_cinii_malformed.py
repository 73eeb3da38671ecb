"""Property (issue 18 §3): a damaged CiNii answer is a valid result or a structured error.

Every canned answer (``app/readingroom/cinii/canned``) and every real sample
(``$READINGROOM_SAMPLES/cinii``) is damaged by :func:`tests.property.mutate.json_mutants` (a
wrong type, a null, a huge or negative number, a very deep value, a missing key, an emptied
container) and answered by cinii-mcp's service through a mock transport: search answers by a
search, records by ``cinii_get_record``. The answer must be valid against the published schema
or a structured error; never ``INTERNAL_ERROR``; never a zero the answer does not state (a
count of 0); and the receipt must record what the envelope says.

Examples: ``PROPERTY_EXAMPLES`` (``READINGROOM_PROPERTY_EXAMPLES``, default 40) spread over the
samples, at least three each, plus each sample undamaged.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import pytest
from hypothesis import given

from readingroom.core.clock import FakeClock
from readingroom.core.envelope import response_schema
from tests.cinii.upstream import Upstream, service
from tests.conftest import samples_dir
from tests.property.mutate import PROPERTY_EXAMPLES, json_mutants, property_settings

VALIDATOR = jsonschema.Draft202012Validator(response_schema())


def _samples() -> list[Any]:
    canned = resources.files("readingroom.cinii").joinpath("canned")
    found = [(f"canned/{p.name}", json.loads(p.read_text("utf-8"))) for p in sorted(
        canned.iterdir(), key=lambda p: p.name) if p.name.endswith(".json")]
    real = samples_dir() / "cinii"
    if real.is_dir():
        found += [(f"real/{p.name}", json.loads(p.read_bytes())) for p in sorted(
            real.glob("*.json"))]
    return [pytest.param(payload, "record" if "crid" in name else "search", id=name)
            for name, payload in found]


SAMPLES = _samples()
EACH = max(3, PROPERTY_EXAMPLES // max(1, len(SAMPLES)))


def _stated_zero(payload: Any) -> bool:
    channel = payload
    if isinstance(payload, dict) and isinstance(payload.get("@graph"), list) and payload[
            "@graph"] and isinstance(payload["@graph"][0], dict):
        channel = payload["@graph"][0]
    return isinstance(channel, dict) and channel.get("opensearch:totalResults") in (0, "0")


def _answer(payload: Any, kind: str, ledger: Path) -> tuple[dict, dict]:
    body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
    up = Upstream(FakeClock(), work=0.0, script=lambda path, params: (200, {}, body))

    async def run() -> dict:
        svc = service(up, ledger)
        try:
            if kind == "record":
                env = await svc.get_record("9990000000000000001")
            else:
                env = await svc.search("cinii_search_all", "all", {"q": "漱石"}, count=20)
        finally:
            await svc.aclose()
        return env.to_data()

    data = anyio.run(run)
    return data, json.loads(ledger.read_text("utf-8").splitlines()[-1])


def _check(what: str, payload: Any, kind: str, data: dict, receipt: dict) -> None:
    VALIDATOR.validate(data)
    assert data["attribution"], what
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
    if kind == "record":
        assert (total, result["returned"]) == (1, 1), what
    if total == 0:
        assert _stated_zero(payload), f"{what}: a zero the answer does not state"
        assert all(s["status"] == "empty" for s in data["sources"]), what
    assert receipt["outcome"] == ("ok" if total else "empty"), what
    assert (receipt["total"], receipt["returned"]) == (total, result["returned"]), what


@pytest.mark.parametrize(("original", "kind"), SAMPLES)
def test_every_damaged_answer_is_a_result_or_a_structured_error(original: Any, kind: str,
                                                                 tmp_path: Path) -> None:
    ledger = tmp_path / "receipts.jsonl"
    data, receipt = _answer(original, kind, ledger)
    _check("undamaged", original, kind, data, receipt)

    @property_settings(EACH)
    @given(json_mutants(original))
    def damaged(mutant: tuple[str, Any]) -> None:
        what, payload = mutant
        data, receipt = _answer(payload, kind, ledger)
        _check(what, payload, kind, data, receipt)

    damaged()
