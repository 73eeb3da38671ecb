"""jstage-mcp's original paired the n-th English author name with the n-th Japanese one, but
J-STAGE's two lists need not match: a real answer (``pyjstage_service3_search.xml``) names two
Japanese authors and one English one, so 内山 真 was given Sakae Takahashi's name. Now the two
lists are kept apart, each in its own order."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.jstage.upstream import Upstream, service

from readingroom.core.clock import FakeClock

pytestmark = pytest.mark.anyio


async def test_english_and_japanese_author_lists_stay_apart(samples: Path):
    body = (samples / "jstage" / "pyjstage_service3_search.xml").read_bytes()
    up = Upstream(FakeClock(), script=lambda params: (200, {}, body))
    env = await service(up).search_articles({"abst": "統合失調症"})
    third = env.items[2]
    assert third["authors_ja"] == ["高橋 栄", "内山 真"]
    assert third["authors_en"] == ["Sakae Takahashi"]
    assert "authors" not in third
