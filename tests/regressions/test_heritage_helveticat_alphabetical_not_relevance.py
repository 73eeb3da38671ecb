"""Regression: the original's SRU "top 10" was Alma's title order, presented as a ranking.

No sortBy was sent and nothing said the order was alphabetical. Ex Libris documents no
relevance sort key for SRU, so none is sent; every answer states title order, never relevance.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.heritage.helveticat.helpers import FakeHelveticat, service_for


@pytest.mark.anyio
async def test_sru_answer_states_title_order_not_relevance(samples: Path):
    body = (samples / "heritage" / "helveticat_sru_dc_sammlung_3of12675.xml").read_bytes()
    fake = FakeHelveticat(lambda r: body)
    env = await service_for(fake).search(query="Sammlung", limit=3)
    assert "sortBy" not in fake.params()["query"]
    assert env.data["order"] == "title"
    assert "not relevance" in env.data["order_note"]
    assert "not relevance" in env.coverage_note
    assert "relevance" not in env.data["order"]
    assert [i["title"][:3] for i in env.items] == ["...", "...", "'I "]  # punctuation first
