"""fan_out: several sources at once, one deadline, one outcome per source."""

from __future__ import annotations

import anyio
import httpx
import pytest

from readingroom.core import fanout as fanout_module
from readingroom.core.clock import FakeClock
from readingroom.core.errors import Code, CoreError
from readingroom.core.fanout import Outcome, Status, fan_out
from readingroom.core.http import HttpClient, Politeness

pytestmark = pytest.mark.anyio

# Short on purpose: a source that never answers is abandoned after this many real seconds.
DEADLINE = 0.02
HTTP_DEADLINE = 1.0
"""The deadline of the seven-host test, whose six answers go through a real client."""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def answer(value: object) -> object:
    return value


async def never() -> object:
    await anyio.Event().wait()
    raise AssertionError("unreachable")


async def refused() -> object:
    raise CoreError(Code.RATE_LIMITED, "slow down")


async def broken() -> object:
    raise ValueError("parser failed on https://x.example/?q=SECRET123")


async def test_every_source_answers_in_the_given_order() -> None:
    result = await fan_out({"b": lambda: answer(2), "a": lambda: answer(1)}, deadline=5)
    assert list(result) == ["b", "a"]
    assert [(o.status, o.value, o.error, o.ok, o.code) for o in result.values()] == [
        (Status.ok, 2, None, True, None),
        (Status.ok, 1, None, True, None),
    ]


async def test_a_failing_source_is_its_own_error() -> None:
    result = await fan_out({"ok": lambda: answer("yes"), "busy": refused}, deadline=5)
    assert result["ok"].value == "yes"
    busy = result["busy"]
    assert busy.status is Status.error and not busy.ok
    assert busy.code is Code.RATE_LIMITED and busy.error.message == "slow down"
    assert busy.value is None


async def test_an_unexpected_exception_is_an_internal_error_that_quotes_nothing() -> None:
    result = await fan_out({"broken": broken}, deadline=5)
    outcome = result["broken"]
    assert outcome.status is Status.error and outcome.code is Code.INTERNAL_ERROR
    assert outcome.error.details == {"source": "broken", "error": "ValueError"}
    assert "SECRET123" not in outcome.error.message


async def test_a_source_past_the_deadline_times_out_alone() -> None:
    with anyio.fail_after(2):
        result = await fan_out({"slow": never, "quick": lambda: answer(1)}, deadline=DEADLINE)
    slow = result["slow"]
    assert slow.status is Status.timeout and not slow.ok
    assert slow.code is Code.DEADLINE_EXCEEDED
    assert slow.error.details == {"source": "slow", "deadline_s": DEADLINE}
    assert result["quick"].status is Status.ok


async def test_one_slow_provider_of_seven_over_http() -> None:
    """Seven hosts through one polite client; the one that never answers is its own timeout."""
    clock = FakeClock()

    async def handler(request: httpx.Request) -> httpx.Response:
        if request.url.host == "p6.example.org":
            await anyio.Event().wait()
        return httpx.Response(200, json={"host": request.url.host})

    client = HttpClient(politeness=Politeness(min_interval=1.0, serial=True),
                        user_agent="t/1", transport=httpx.MockTransport(handler), clock=clock)
    async with client:
        sources = {f"p{i}": (lambda i=i: client.get_json(f"https://p{i}.example.org/search"))
                   for i in range(7)}
        # Real seconds: six requests through the client must fit before it on a loaded
        # machine (20 ms did not, with three test workers on two cores).
        with anyio.fail_after(10):
            result = await fan_out(sources, deadline=HTTP_DEADLINE, clock=clock)
    assert [o.status for o in result.values()] == [Status.ok] * 6 + [Status.timeout]
    assert result["p3"].value == {"host": "p3.example.org"}
    assert result["p6"].code is Code.DEADLINE_EXCEEDED


async def test_seconds_are_read_on_the_injected_clock() -> None:
    clock = FakeClock()

    async def takes_three() -> str:
        await clock.sleep(3.0)
        return "done"

    result = await fan_out({"x": takes_three}, deadline=5, clock=clock)
    assert result["x"] == Outcome("x", Status.ok, value="done", seconds=pytest.approx(3.0))


async def test_cancelling_the_caller_cancels_every_source() -> None:
    started = anyio.Event()
    stopped: list[str] = []

    async def waits() -> object:
        started.set()
        try:
            await anyio.Event().wait()
        finally:
            stopped.append("waits")
        return None

    with anyio.fail_after(2):
        async with anyio.create_task_group() as tg:
            tg.start_soon(lambda: fan_out({"w": waits}, deadline=60))
            await started.wait()
            tg.cancel_scope.cancel()
    assert stopped == ["waits"]


@pytest.mark.parametrize("deadline", [0, -1.0, float("nan")])
async def test_a_deadline_must_be_positive(deadline: float) -> None:
    with pytest.raises(ValueError):
        await fan_out({"a": lambda: answer(1)}, deadline=deadline)


def test_all_is_honest() -> None:
    assert sorted(fanout_module.__all__) == ["Outcome", "Status", "fan_out"]
    for name in fanout_module.__all__:
        assert hasattr(fanout_module, name)


@pytest.mark.anyio
async def test_unexpected_failures_say_what_happened() -> None:
    import errno

    async def deep() -> None:
        raise RecursionError("maximum recursion depth exceeded")

    async def full() -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    outcomes = await fan_out({"deep": deep, "full": full}, deadline=5)
    assert outcomes["deep"].code is Code.API_ERROR
    assert "too deeply" in outcomes["deep"].error.message
    assert outcomes["full"].code is Code.INTERNAL_ERROR
    assert "the disk is full" in outcomes["full"].error.message
    assert "OSError" not in outcomes["full"].error.message
