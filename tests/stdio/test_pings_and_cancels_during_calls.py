"""Pings and cancels are answered during any call (issue 18 §2), proved in the core.

A tool whose work runs in :func:`readingroom.core.offload.run_blocking` (a bounded worker pool)
leaves the event loop free: while it is busy, ``ping`` is answered at once, and a
``notifications/cancelled`` for it is answered at once too (the SDK's code-0 "Request
cancelled"), without the python-sdk #2416 crash (the server exits 0 afterwards). Over real
stdio, with the raw client.
"""

from __future__ import annotations

import os
import sys
import time

from tests.conftest import REPO_ROOT

from readingroom.core.rawstdio import RawStdioClient

BUSY_S = 2.5
PROMPT_S = 1.0
"""A ping or cancel must be answered this soon while the tool works for BUSY_S seconds."""


def test_ping_and_cancel_are_answered_while_a_tool_works() -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    with RawStdioClient([sys.executable, "-m", "tests.mcp.busy_toy"], env=env,
                        cwd=str(REPO_ROOT)) as server:
        server.initialize()
        began = time.monotonic()
        first = server.send_request("tools/call", {"name": "busy",
                                                   "arguments": {"seconds": BUSY_S}})
        second = server.send_request("tools/call", {"name": "busy",
                                                    "arguments": {"seconds": BUSY_S}})
        time.sleep(0.3)  # both calls are under way (nothing to await from outside)
        sent = time.monotonic()
        assert server.request("ping", {}, timeout=BUSY_S)["result"] == {}
        assert time.monotonic() - sent < PROMPT_S, "ping waited for the busy tool"
        sent = time.monotonic()
        server.notify("notifications/cancelled", {"requestId": first, "reason": "test"})
        cancelled = server.wait(first, timeout=BUSY_S)
        assert time.monotonic() - sent < PROMPT_S, "the cancel waited for the busy tool"
        assert cancelled["error"]["code"] == 0 and "cancel" in cancelled["error"]["message"].lower()
        assert server.request("ping", {}, timeout=BUSY_S)["result"] == {}
        done = server.wait(second, timeout=3 * BUSY_S)
        assert done["result"]["isError"] is False
        assert done["result"]["structuredContent"]["data"]["turns"] > 0
        assert time.monotonic() - began >= BUSY_S
        assert server.close() == 0
        assert server.stdout_problems() == []
