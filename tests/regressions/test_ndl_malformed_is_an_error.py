"""ndl-mcp: a malformed answer is an error, never an empty result (issue 18 §3).

Before, ndl-mcp read every answer it could parse as data: ``numberOfRecords`` "many" with
``<records>oops</records>`` was ``empty`` (total unknown, status empty, receipt "empty"),
``numberOfRecords`` 5 with no record delivered was "ok, 0 of 5", a page whose every record was
unreadable was "ok" with no items, and ``numberOfRecords`` -1 had a breadth of "none". The rule
now: a count that is missing, not a number or negative, a count above zero with nothing
delivered, and a page whose every record is unreadable are ``API_ERROR`` with a diagnostic,
and the receipt records exactly that. NDL's own zero (the "Record does not exist" diagnostic)
stays ``empty``, and a page past the end of a real result stays a success.
The answers are hand-made variations of the canned ``books.xml`` (whose records are shaped on
the real samples); no real NDL answer of these shapes has been recorded.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx
import pytest

from readingroom.core.clock import FakeClock
from readingroom.ndl.fake import canned
from readingroom.ndl.service import NdlService
from readingroom.ndl.upstreams.ndl_search import NdlClient

pytestmark = pytest.mark.anyio
BOOKS = canned("books.xml").decode("utf-8")


def _with_count(text: str) -> str:
    return re.sub(r"<numberOfRecords>\d+</numberOfRecords>", f"<numberOfRecords>{text}"
                  "</numberOfRecords>", BOOKS)


def _records(inner: str, count: str = "5") -> str:
    return re.sub(r"<records>.*</records>", f"<records>{inner}</records>", _with_count(count),
                  flags=re.S)


UNREADABLE = ("<record><recordSchema>info:srw/schema/1/dc-v1.1</recordSchema>"
              "<recordPacking>xml</recordPacking><recordData><rdf:RDF xmlns:rdf="
              '"http://www.w3.org/1999/02/22-rdf-syntax-ns#"/></recordData>'
              "<recordPosition>{n}</recordPosition></record>")

MALFORMED = {
    "count 'many', records 'oops'": _records("oops", "many"),
    "count 5, no record": _records("", "5"),
    "count 5, records a text": _records("oops", "5"),
    "count missing": BOOKS.replace("<numberOfRecords>1234</numberOfRecords>", ""),
    "count not a number": _with_count("many"),
    "count negative": _with_count("-1"),
    "every record unreadable": _records("".join(UNREADABLE.format(n=n) for n in (1, 2, 3))),
}


async def _search(body: str, tmp_path: Path, start: int = 1) -> tuple[dict, dict]:
    ledger = tmp_path / "receipts.jsonl"
    client = NdlClient("https://ndl.test/api/sru", clock=FakeClock(), transport=httpx.MockTransport(
        lambda request: httpx.Response(200, content=body.encode("utf-8"),
                                       headers={"Content-Type": "text/xml"})))
    service = NdlService(client, env={"MCP_RECEIPT_LOG": str(ledger)})
    env = await service.search("ndl_search_books", ("iss-ndl-opac",), {"title": "こころ"},
                               start=start, count=20)
    await client.aclose()
    line = json.loads(ledger.read_text("utf-8").splitlines()[-1])
    return env.to_data(), line


@pytest.mark.parametrize("name", sorted(MALFORMED))
async def test_a_malformed_answer_is_an_api_error_and_its_receipt_says_so(name, tmp_path):
    data, receipt = await _search(MALFORMED[name], tmp_path)
    assert data.get("error", {}).get("code") == "API_ERROR", (name, data.get("result"))
    assert "result" not in data and not data["items"]
    # "malformed" here; a reader of the SRU envelope may refuse a non-numeric count itself.
    assert data["error"]["details"].get("reason"), name
    assert (receipt["outcome"], receipt["total"], receipt["returned"]) == ("API_ERROR", None, 0)
    assert data["receipt"]["ledger_hash"] == receipt["hash"]


async def test_ndls_own_zero_stays_empty(tmp_path):
    data, receipt = await _search(canned("no_records.xml").decode(), tmp_path)
    assert "error" not in data and data["result"]["total"] == 0
    assert "ZERO_RESULT" in [d["code"] for d in data["diagnostics"]]
    assert (receipt["outcome"], receipt["total"]) == ("empty", 0)


async def test_a_page_past_the_end_of_a_real_result_is_not_an_error(tmp_path):
    data, receipt = await _search(_records("", "5"), tmp_path, start=21)
    assert "error" not in data
    assert (data["result"]["total"], data["result"]["returned"]) == (5, 0)
    assert receipt["outcome"] == "ok"


async def test_a_page_with_some_unreadable_records_keeps_the_readable_ones(tmp_path):
    mixed = BOOKS.replace("</records>", UNREADABLE.format(n=4) + "</records>")
    data, receipt = await _search(mixed, tmp_path)
    assert "error" not in data and len(data["items"]) == 3
    assert "RECORD_UNREADABLE" in [d["code"] for d in data["diagnostics"]]
    assert (receipt["outcome"], receipt["returned"]) == ("ok", 3)
