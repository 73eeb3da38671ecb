"""cinii-mcp's original sent every request at once: no pacing, no serial lock (japan-apis.md
§3.2, "no throttle at all"). Five calls fired together now reach CiNii one at a time, each at
least one second after the previous answer ended (on an injected clock)."""

from __future__ import annotations

import anyio
import pytest
from tests.cinii.upstream import Upstream, service

from readingroom.core.clock import FakeClock

pytestmark = pytest.mark.anyio


async def test_calls_fired_together_are_serial_and_a_second_apart():
    up = Upstream(FakeClock(), work=0.5)
    svc = service(up)
    async with anyio.create_task_group() as tg:
        for kind in ("articles", "books", "dissertations", "projects"):
            tg.start_soon(svc.search, f"cinii_search_{kind}", kind, {"q": "漱石"})
        tg.start_soon(svc.get_record, "9990000000000000001")
    assert len(up.seen) == 5
    gaps = [b.started - a.ended for a, b in zip(up.seen, up.seen[1:], strict=False)]
    assert min(gaps) >= 1.0, gaps
