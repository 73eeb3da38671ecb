"""Regression (issue 18 §2): a valid body of huge numbers of tiny JSON containers.

A 19 MiB answer of millions of ``{}`` became ~420 MB of objects, parsed and turned into items
on the event loop: for seconds the server answered nothing, not even ``ping``. Now the body's
containers are counted against what a page of the records asked for may hold before anything
is parsed (``API_ERROR``, reason ``too_many_items``), parsing runs in a worker thread, and the
event loop keeps ticking. Shown with 100,000 containers (300 KB) for ``limit: 5``; the
19 MiB body of the issue is refused the same way. On loopback.
"""

from __future__ import annotations

import json
import time

import anyio
import pytest
from tests.heritage.loopback import on_loopback

pytestmark = pytest.mark.anyio

N = 100_000
BODY = json.dumps({"success": True, "result": {"records": [{}] * N,
                                                "total": N, "fields": []}}).encode()


async def test_a_page_of_tiny_containers_is_refused_and_the_loop_keeps_serving():
    gaps: list[float] = []
    last_tick = [time.monotonic()]

    async def tick() -> None:
        while True:
            await anyio.sleep(0.01)
            now = time.monotonic()
            gaps.append(now - last_tick[0])
            last_tick[0] = now

    async with on_loopback() as h:
        h.script(lambda p, path, _q, _b: (200, {"Content-Type": "application/json"}, BODY)
                 if path == "datastore_search" else None)
        async with anyio.create_task_group() as tg:
            tg.start_soon(tick)
            began = last_tick[0] = time.monotonic()
            env, text, error = await h.call("heritage_search_artists", {
                "query": "Probe", "limit": 5, "response_format": "json"})
            took = time.monotonic() - began
            pinged = time.monotonic()
            await h.session.send_ping()
            ping_s = time.monotonic() - pinged
            # The stretch since the last tick counts too: an answer before the first tick
            # leaves no gap in the list, and a loop blocked to the end would leave none either.
            gaps.append(time.monotonic() - last_tick[0])
            tg.cancel_scope.cancel()
    assert error and env["error"]["code"] == "API_ERROR", text[:300]
    assert env["error"]["details"]["reason"] == "too_many_items"
    assert env["error"]["details"]["containers"] > N
    assert took < 5.0 and ping_s < 1.0
    assert max(gaps) < 1.0  # generous for a loaded 2-core machine; unbounded work took seconds
