"""jstage-mcp's original held its lock only for the wait and released it before sending
(japan-apis.md §1.12, §3.3): requests were spaced a second apart at their *starts*, so a slow
answer let the next request arrive while it was still running, or right after it ended. Now
the lock is held across the request: every request starts at least one second after the
previous one *ended* (on an injected clock, the upstream taking 0.8 s per answer)."""

from __future__ import annotations

import anyio
import pytest
from tests.jstage.upstream import Upstream, service

from readingroom.core.clock import FakeClock

pytestmark = pytest.mark.anyio


async def test_each_request_starts_a_second_after_the_previous_one_ended():
    up = Upstream(FakeClock(), work=0.8)
    svc = service(up)
    async with anyio.create_task_group() as tg:
        for word in ("一", "二", "三"):
            tg.start_soon(svc.search_articles, {"article": word})
        tg.start_soon(svc.list_issues, {"cdjournal": "rrkiyo"})
        tg.start_soon(svc.get_article_by_doi, "10.99999/rrkiyo.12.1_1")
    assert len(up.seen) == 5
    gaps = [b.started - a.ended for a, b in zip(up.seen, up.seen[1:], strict=False)]
    assert min(gaps) >= 1.0, gaps
