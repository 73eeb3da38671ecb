"""Attack: nine concurrent calls to ndl-mcp against an upstream that never answers.

Issue 9 §2. The deadline used to start when a call got one of the worker slots, so with a
10 s deadline the nine calls were answered at 10, 10, 10, 10, 20, 20, 20, 20, 30 s — past a
host's own limit, without the promised structured error. Now the deadline counts from each
call's arrival: all nine answer ``DEADLINE_EXCEEDED`` at the deadline. The test uses the 1 s
floor to stay fast (measured at 10 s over stdio: all nine within 10.15 s).
"""

from __future__ import annotations

import time

import anyio
import httpx
import pytest
from mcp.shared.memory import create_connected_server_and_client_session

from readingroom.ndl.server import build_ndl_server
from readingroom.ndl.upstreams.ndl_search import NdlClient

pytestmark = pytest.mark.anyio
DEADLINE_S = 1.0
MARGIN_S = 0.9
CALLS = 9


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_nine_stalling_calls_all_answer_at_their_deadline() -> None:
    arrived = 0

    async def stalls(_request: httpx.Request) -> httpx.Response:
        nonlocal arrived
        arrived += 1
        await anyio.Event().wait()  # never answers
        raise AssertionError("unreachable")

    client = NdlClient("https://ndl.test/api/sru", transport=httpx.MockTransport(stalls))
    server = build_ndl_server(client, env={"READINGROOM_TOOL_DEADLINE": str(DEADLINE_S),
                                           "READINGROOM_CONCURRENCY": "4"})
    answers: list[tuple[float, dict, bool]] = []

    async with create_connected_server_and_client_session(server) as session:

        async def call(n: int) -> None:
            res = await session.call_tool("ndl_search_books", {"title": f"こころ {n}"})
            answers.append((time.monotonic() - began, res.structuredContent or {}, res.isError))

        began = time.monotonic()
        with anyio.fail_after(10 * DEADLINE_S):
            async with anyio.create_task_group() as tg:
                for n in range(CALLS):
                    tg.start_soon(call, n)
    await client.aclose()

    assert len(answers) == CALLS
    took = sorted(t for t, _, _ in answers)
    assert took[-1] < DEADLINE_S + MARGIN_S, f"answered at {took}"
    for _, envelope, is_error in answers:
        assert is_error and envelope["error"]["code"] == "DEADLINE_EXCEEDED"
        assert envelope["attribution"], "credit on every answer, failures included"
    assert arrived == 1, "the upstream still saw one request at a time"
