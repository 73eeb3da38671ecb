"""Regression (issue 17 §7, issue 18 §3): an SRU answer without a usable count read as zero.

No ``numberOfRecords`` (or ``many``) with no records was "none, nothing matched"; ``many``
with ``<records>oops</records>`` too. Now a damaged answer is ``API_ERROR`` with a diagnostic,
and one with records but no count says "total unknown". On loopback.
"""

from __future__ import annotations

import pytest
from tests.heritage.loopback import on_loopback, xml_answer

from readingroom.heritage.fake import canned

pytestmark = pytest.mark.anyio

HEAD = (b'<?xml version="1.0"?><searchRetrieveResponse xmlns="http://www.loc.gov/zing/srw/">'
        b"<version>1.2</version>")
TAIL = b"</searchRetrieveResponse>"
RECORDS = canned("helveticat_sru.xml")


@pytest.mark.parametrize(("body", "reason"), [
    (HEAD + TAIL, "no_count_no_records"),
    (HEAD + b"<numberOfRecords>many</numberOfRecords><records>oops</records>" + TAIL,
     "malformed_sru"),
    (HEAD + b"<numberOfRecords>NaN</numberOfRecords>" + TAIL, "malformed_sru"),
])
async def test_no_usable_count_and_no_records_is_an_error(body: bytes, reason: str):
    async with on_loopback() as h:
        h.script(lambda p, _path, _q, _b: xml_answer(body) if p == "sru" else None)
        env, _text, error = await h.call("heritage_search_helveticat", {
            "query": "Volksschule", "response_format": "json"})
    assert error and env["error"]["code"] == "API_ERROR"
    assert env["error"]["details"]["reason"] == reason
    assert "result" not in env or env["result"] is None  # no fabricated zero
    assert env["sources"][0]["status"] == "error"


async def test_records_without_a_count_have_an_unknown_total():
    body = RECORDS.replace(b"<numberOfRecords>3</numberOfRecords>", b"")
    assert body != RECORDS
    async with on_loopback() as h:
        h.script(lambda p, _path, _q, _b: xml_answer(body) if p == "sru" else None)
        env, text, error = await h.call("heritage_search_helveticat", {"query": "Volksschule"})
    assert not error and env["items"] and env["result"].get("total") is None
    assert env["result"]["match_type"] == "exact" and "total unknown" in text
