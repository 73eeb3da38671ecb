"""Regression (issue 17 §7, issue 18 §3): SRU paging that served a page twice, or too much.

``numberOfRecords 4`` (or 5) with no record on the page answered ``has_more`` with a cursor
back to the same start ("ok, 0 of 5"); ``limit: 1`` returned every record an over-delivering
upstream sent. Now a count with nothing delivered is ``API_ERROR``, a page holds at most what
was asked, and the next cursor starts right after the last record kept. On loopback.
"""

from __future__ import annotations

import pytest
from tests.heritage.loopback import on_loopback, xml_answer

from readingroom.heritage.catalogue_paging import SruCursor, decode_cursor
from readingroom.heritage.fake import canned

pytestmark = pytest.mark.anyio

CLAIMS_FOUR = (b'<?xml version="1.0"?><searchRetrieveResponse '
               b'xmlns="http://www.loc.gov/zing/srw/"><version>1.2</version>'
               b"<numberOfRecords>4</numberOfRecords><nextRecordPosition>1</nextRecordPosition>"
               b"</searchRetrieveResponse>")


async def test_a_count_with_nothing_delivered_is_an_error_not_a_cursor_to_the_same_page():
    async with on_loopback() as h:
        h.script(lambda p, _path, _q, _b: xml_answer(CLAIMS_FOUR) if p == "sru" else None)
        env, _text, error = await h.call("heritage_search_helveticat", {
            "query": "Volksschule", "response_format": "json"})
    assert error and env["error"]["code"] == "API_ERROR"
    assert env["error"]["details"]["reason"] == "count_without_records"
    assert "next_cursor" not in (env.get("data") or {})


async def test_limit_one_returns_one_and_the_cursor_moves_past_it():
    body = canned("helveticat_sru.xml")  # three records, whatever was asked
    async with on_loopback() as h:
        h.script(lambda p, _path, _q, _b: xml_answer(body) if p == "sru" else None)
        env, _text, error = await h.call("heritage_search_helveticat", {
            "query": "Volksschule", "limit": 1, "response_format": "json"})
        sent = h.fake.requests("sru")[-1].params
    assert not error and sent["maximumRecords"] == "1"
    assert env["result"]["returned"] == 1 and len(env["items"]) == 1
    cursor = decode_cursor(env["data"]["next_cursor"])
    assert isinstance(cursor, SruCursor) and cursor.start == 2
    assert env["result"]["next_start"] == 2
