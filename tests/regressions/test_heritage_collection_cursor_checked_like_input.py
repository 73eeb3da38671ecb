"""Regression (issue 17 §7): a collection cursor was trusted, and lost its change-date window.

* A cursor combined with a new ``from_date``/``until_date`` was sent without the dates (the
  resumption token decides the window): now refused, clearly, before anything is sent.
* A crafted cursor (a set that is no OAI set, a format the set is not published in, a token
  with control characters, an invalid date) was sent as it was: now refused like fresh input.
* The window of the first request was dropped from the cursor on the token's page; it is kept,
  so a repeat of the same dates with the cursor is accepted.
On loopback.
"""

from __future__ import annotations

import base64
import json

import pytest
from tests.heritage.loopback import on_loopback

from readingroom.heritage.catalogue_paging import OaiCursor, decode_cursor

pytestmark = pytest.mark.anyio


def _forge(**fields: object) -> str:
    data = {"p": "oai", "set": "swissbook", "m": "marc21", "k": 0, **fields}
    raw = json.dumps(data).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


async def test_new_dates_with_a_cursor_are_refused_and_the_window_is_kept():
    async with on_loopback() as h:
        window = {"set_spec": "swissbook", "from_date": "2025-01-01",
                  "until_date": "2025-12-31", "limit": 50, "response_format": "json"}
        one, _, error = await h.call("heritage_search_helveticat", window)
        assert not error and one["result"]["has_more"]
        cursor = decode_cursor(one["data"]["next_cursor"])
        assert isinstance(cursor, OaiCursor) and cursor.token is not None
        assert (cursor.from_date, cursor.until_date) == ("2025-01-01", "2025-12-31")
        sent_before = len(h.fake.requests("oai"))
        refused, _text, error = await h.call("heritage_search_helveticat", {
            **window, "from_date": "2020-01-01", "cursor": one["data"]["next_cursor"]})
        assert error and refused["error"]["code"] == "INVALID_INPUT"
        assert "change-date window" in refused["error"]["message"]
        assert len(h.fake.requests("oai")) == sent_before  # nothing sent
        same, _, error = await h.call("heritage_search_helveticat", {
            **window, "cursor": one["data"]["next_cursor"]})
    assert not error and same["items"]


@pytest.mark.parametrize("cursor", [
    _forge(set="../../etc"),
    _forge(m="oai_dc"),                     # swissbook is published in marc21 only
    _forge(t="tok\nen"),
    _forge(fr="2025-13-45"),
    _forge(fr="2025-12-31", un="2025-01-01"),
    _forge(k=10**9),
    _forge(k=True),
], ids=["set", "format", "token", "date", "window", "skip", "bool-skip"])
async def test_a_crafted_cursor_is_refused_before_anything_is_sent(cursor: str):
    async with on_loopback() as h:
        env, _text, error = await h.call("heritage_search_helveticat", {
            "cursor": cursor, "response_format": "json"})
        sent = h.fake.requests("oai")
    assert error and env["error"]["code"] == "INVALID_INPUT" and sent == []
