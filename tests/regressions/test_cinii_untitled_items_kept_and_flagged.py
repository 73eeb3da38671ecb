"""CiNii items sometimes come without a title (a real recording has one). The original gave
such an item an empty title with nothing to say so. Now it is kept, marked ``title_missing``,
and a diagnostic counts them; it is never dropped from ``items``."""

from __future__ import annotations

import pytest
from tests.cinii.upstream import Upstream, service

from readingroom.core.clock import FakeClock

pytestmark = pytest.mark.anyio


async def test_an_untitled_item_is_kept_marked_and_counted():
    up = Upstream(FakeClock())
    env = await service(up).search("cinii_search_articles", "articles", {"q": "漱石"})
    untitled = [i for i in env.items if i.get("title_missing")]
    assert [i["crid"] for i in untitled] == ["9990000000000000002"]
    assert "title" not in untitled[0] and untitled[0]["creators"][0]["name"] == "夏目漱石"
    assert env.result is not None and env.result.returned == 3 == len(env.items)
    assert any("no title" in d.message and d.code == "UPSTREAM_DIAGNOSTIC"
               for d in env.diagnostics)
