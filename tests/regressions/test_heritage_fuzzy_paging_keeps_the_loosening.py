"""Regression (issue 17 §7): page two of a loosened SIKART or SNM search answered "none".

Page one of "Alberto Giacometti" said 3 of 12 (fuzzy: the longest word "Giacometti") with a
next offset; page two ran the exact query again at that offset, found nothing and answered
``none``, "Nothing matched". Now the cursor carries the loosening (one request), and an offset
alone re-derives it (the exact query's zero total is known at every page). On loopback, with
the real SIKART and SNM recordings.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.heritage.loopback import json_answer, on_loopback

pytestmark = pytest.mark.anyio

EMPTY_ROWS = {"success": True, "result": {"records": [], "total": 0, "fields": []}}
EMPTY_PACKAGES = {"success": True, "result": {"results": [], "count": 0}}


def _script(samples: Path):
    artists = (samples / "heritage" / "sikart_ckan_datastore_search_giacometti.json").read_bytes()
    datasets = (samples / "heritage" / "snm_ckan_package_search_museum.json").read_bytes()

    def script(prefix: str, path: str, params: dict[str, str], _body: str):
        if prefix != "ckan":
            return None
        if path == "datastore_search":
            hit = params.get("q") == "Giacometti"
            return (200, json_answer({})[1], artists) if hit else json_answer(EMPTY_ROWS)
        if path == "package_search":
            hit = " OR " in params.get("q", "")
            return (200, json_answer({})[1], datasets) if hit else json_answer(EMPTY_PACKAGES)
        return None

    return script


async def test_sikart_page_two_continues_the_loosened_search(samples: Path):
    async with on_loopback() as h:
        h.script(_script(samples))
        args = {"query": "Alberto Giacometti", "limit": 3, "response_format": "json"}
        one, _, _ = await h.call("heritage_search_artists", args)
        assert (one["result"]["match_type"], one["result"]["total"]) == ("fuzzy", 12)
        assert one["data"]["next_offset"] == 3
        h.fake.clear()
        by_offset, text, error = await h.call("heritage_search_artists", {**args, "offset": 3})
        assert not error and by_offset["result"]["match_type"] == "fuzzy", text
        assert by_offset["items"] and by_offset["result"]["start"] == 4
        assert "Nothing matched" not in text
        h.fake.clear()
        by_cursor, _, _ = await h.call("heritage_search_artists", {
            **args, "cursor": one["data"]["next_cursor"]})
        sent = [r.params.get("q") for r in h.fake.requests("ckan")]
    assert by_cursor["result"]["match_type"] == "fuzzy" and by_cursor["result"]["start"] == 4
    assert sent == ["Giacometti"]  # the cursor knows: one request, straight to the loosening


async def test_snm_page_two_continues_the_loosened_search(samples: Path):
    async with on_loopback() as h:
        h.script(_script(samples))
        args = {"query": "Museum Zeughaus", "limit": 3, "response_format": "json"}
        one, _, _ = await h.call("heritage_search_museum_datasets", args)
        assert (one["result"]["match_type"], one["result"]["total"]) == ("fuzzy", 10)
        two, text, error = await h.call("heritage_search_museum_datasets",
                                        {**args, "offset": one["data"]["next_offset"]})
        three, _, _ = await h.call("heritage_search_museum_datasets",
                                   {**args, "cursor": one["data"]["next_cursor"]})
    assert not error and two["result"]["match_type"] == "fuzzy" and two["items"], text
    assert three["result"]["match_type"] == "fuzzy" and three["result"]["start"] == 4
