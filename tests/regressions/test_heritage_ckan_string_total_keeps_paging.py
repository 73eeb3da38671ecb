"""Regression (issue 17 §7, issue 18 §3): a CKAN ``total`` that is a string ended paging.

``"total": "oops"`` on a full page made ``has_more`` false with no word: the reader could not
tell "that was all" from "the count was unreadable". Now the total is unknown (not zero) with
a warning, a full page still offers the next one, and a total sent as digits is read. On
loopback.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.heritage.loopback import json_answer, on_loopback

pytestmark = pytest.mark.anyio


def _with_total(samples: Path, total: object) -> dict:
    payload = json.loads((samples / "heritage" /
                          "sikart_ckan_datastore_search_giacometti.json").read_bytes())
    payload["result"]["total"] = total
    return payload


@pytest.mark.parametrize(("total", "expected", "more"), [
    ("oops", None, True), ("12", 12, True), (None, None, True), (-5, None, True),
])
async def test_an_unreadable_total_is_unknown_and_a_full_page_pages_on(
        samples: Path, total: object, expected: int | None, more: bool):
    answer = json_answer(_with_total(samples, total))
    async with on_loopback() as h:
        h.script(lambda p, path, _q, _b: answer if path == "datastore_search" else None)
        env, text, error = await h.call("heritage_search_artists", {
            "query": "Giacometti", "limit": 3})
    result = env["result"]
    assert not error and result.get("total") == expected and result["has_more"] is more
    assert env["data"]["next_offset"] == 3 and "More results are available" in text
    if expected is None:
        assert "total unknown" in text
    if total not in (None, "12"):
        assert any("not a number" in d["message"] for d in env["diagnostics"])
