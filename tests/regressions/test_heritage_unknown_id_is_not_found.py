"""Regression (issue 17 §9): three fetch tools, two rules for an unknown id.

``heritage_get_publication`` answered an unknown id with ``NOT_FOUND``; ``heritage_get_artist``
and ``heritage_get_memory_item`` with a successful ``none``. The suite's rule now holds for
all (and for ``heritage_browse_collection``'s resource id): an id the upstream says does not
exist is a ``NOT_FOUND`` error whose remediation names the search tool, the source ``empty``,
the receipt's outcome ``NOT_FOUND``; an upstream failure stays an upstream failure. On
loopback.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.heritage.loopback import on_loopback

pytestmark = pytest.mark.anyio

CALLS = [
    ("heritage_get_publication", {"identifier": "990000000000000009"},
     "heritage_search_helveticat"),
    ("heritage_get_artist", {"artist_id": "1"}, "heritage_search_artists"),
    ("heritage_get_memory_item", {"collection": "memobase", "item_id": "nope-1"},
     "heritage_search_memory"),
    ("heritage_get_memory_item", {"collection": "dodis", "item_id": "G1"},
     "heritage_search_memory"),
    ("heritage_browse_collection", {"resource_id": "99999999-0000-0000-0000-000000000000"},
     "heritage_search_museum_datasets"),
]


async def test_every_fetch_tool_answers_an_unknown_id_with_not_found(tmp_path: Path):
    ledger = tmp_path / "receipts.jsonl"
    async with on_loopback(ledger) as h:
        for name, args, search_tool in CALLS:
            env, text, error = await h.call(name, args)
            assert error, name
            assert env["error"]["code"] == "NOT_FOUND", (name, env["error"])
            assert search_tool in env["error"]["remediation"], name
            assert [s["status"] for s in env["sources"]] == ["empty"], name
            assert "Error `NOT_FOUND`" in text
        h.fake.modes["memobase"] = "broken"
        broken, _, error = await h.call("heritage_get_memory_item", {
            "collection": "memobase", "item_id": "tst-001-1"})
    assert error and broken["error"]["code"] == "API_ERROR"  # a failure is not "not found"
    outcomes = [json.loads(line)["outcome"] for line in ledger.read_text().splitlines()]
    assert outcomes.count("NOT_FOUND") == len(CALLS) and outcomes[-1] == "API_ERROR"
