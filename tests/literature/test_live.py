"""Opt-in live smoke: one small Crossref query through the real provider (READINGROOM_LIVE=1)."""

from __future__ import annotations

import os

import pytest

from readingroom.literature.history import History
from readingroom.literature.models import SearchRequest
from readingroom.literature.service import LiteratureService

pytestmark = [
    pytest.mark.live,
    pytest.mark.anyio,
    pytest.mark.skipif(os.environ.get("READINGROOM_LIVE") != "1",
                       reason="live smoke: set READINGROOM_LIVE=1 to query Crossref"),
]


async def test_a_small_crossref_query(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "CROSSREF_URL"}
    service = LiteratureService(env=env, history=History(tmp_path))
    try:
        result = await service.search(SearchRequest(query="reciprocal rank fusion", limit=3),
                                      ["crossref"])
    finally:
        await service.aclose()
    crossref = next(s for s in result.sources if s.id == "crossref")
    assert str(crossref.status) in {"ok", "rate_limited"}
    if str(crossref.status) == "ok":
        assert result.items and all(i.get("doi") for i in result.items)
