"""Property (issue 18 §3): a damaged NDL answer is a valid result or a structured error.

Every canned answer (``app/readingroom/ndl/canned``) and every real sample
(``$READINGROOM_SAMPLES/ndl``) is damaged by :func:`tests.property.mutate.xml_mutants` (an
element dropped, renamed, duplicated, its text replaced by a word, a negative or a huge number,
its children by text, the bytes cut) and answered by ndl-mcp's service through a mock
transport. The answer must be a success valid against the published schema or a structured
error; never ``INTERNAL_ERROR``; never a zero that the answer does not state (NDL's "Record does
not exist" diagnostic or a ``numberOfRecords`` of 0); and the receipt deposited must record
what the envelope says (its error code, or ``ok``/``empty`` and the same total).

Examples: ``PROPERTY_EXAMPLES`` (``READINGROOM_PROPERTY_EXAMPLES``, default 40) spread over the
samples, at least three each, plus each sample undamaged.
"""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path

import anyio
import httpx
import jsonschema
import pytest
from hypothesis import given

from readingroom.core.clock import FakeClock
from readingroom.core.envelope import response_schema
from readingroom.ndl.service import NdlService
from readingroom.ndl.upstreams.ndl_search import NdlClient
from tests.conftest import samples_dir
from tests.property.mutate import PROPERTY_EXAMPLES, property_settings, xml_mutants

VALIDATOR = jsonschema.Draft202012Validator(response_schema())
_STATED_ZERO = re.compile(rb"numberOfRecords>\s*0\s*<")


def _samples() -> list[pytest.param]:
    canned = resources.files("readingroom.ndl").joinpath("canned")
    found = [(f"canned/{p.name}", p.read_bytes()) for p in sorted(
        canned.iterdir(), key=lambda p: p.name) if p.name.endswith(".xml")]
    real = samples_dir() / "ndl"
    if real.is_dir():
        found += [(f"real/{p.name}", p.read_bytes()) for p in sorted(real.glob("*.xml"))]
    return [pytest.param(body, id=name) for name, body in found]


SAMPLES = _samples()
EACH = max(3, PROPERTY_EXAMPLES // max(1, len(SAMPLES)))


def _answer(body: bytes, ledger: Path) -> tuple[dict, dict]:
    """The envelope (as sent) and the receipt line of one search answered with ``body``."""

    async def run() -> tuple[dict, dict]:
        client = NdlClient("https://ndl.test/api/sru", clock=FakeClock(),
                           transport=httpx.MockTransport(lambda request: httpx.Response(
                               200, content=body, headers={"Content-Type": "text/xml"})))
        service = NdlService(client, env={"MCP_RECEIPT_LOG": str(ledger)})
        try:
            env = await service.search("ndl_search_all", ("iss-ndl-opac", "zassaku"),
                                       {"title": "こころ"}, count=20)
        finally:
            await client.aclose()
        return env.to_data(), json.loads(ledger.read_text("utf-8").splitlines()[-1])

    return anyio.run(run)


def _check(what: str, body: bytes, data: dict, receipt: dict) -> None:
    VALIDATOR.validate(data)
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
        stated = b"Record does not exist" in body or _STATED_ZERO.search(body)
        assert stated, f"{what}: a zero the answer does not state"
        assert all(s["status"] == "empty" for s in data["sources"]), what
    assert receipt["outcome"] == ("ok" if total else "empty"), what
    assert (receipt["total"], receipt["returned"]) == (total, result["returned"]), what


@pytest.mark.parametrize("original", SAMPLES)
def test_every_damaged_answer_is_a_result_or_a_structured_error(original: bytes,
                                                                 tmp_path: Path) -> None:
    ledger = tmp_path / "receipts.jsonl"
    data, receipt = _answer(original, ledger)
    _check("undamaged", original, data, receipt)

    @property_settings(EACH)
    @given(xml_mutants(original))
    def damaged(mutant: tuple[str, bytes]) -> None:
        what, body = mutant
        data, receipt = _answer(body, ledger)
        _check(what, body, data, receipt)

    damaged()
