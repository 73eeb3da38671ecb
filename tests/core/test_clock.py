"""The clock seam: the real clock's readings, and the fake clock tests pace with."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import anyio
import pytest

from readingroom.core import clock as clock_module
from readingroom.core.clock import Clock, FakeClock, SystemClock

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_system_clock_monotonic_moves_forward_across_a_sleep() -> None:
    clock: Clock = SystemClock()
    before = clock.monotonic()
    with anyio.fail_after(5):
        await clock.sleep(0.01)
    assert clock.monotonic() > before


async def test_system_clock_now_is_aware_utc() -> None:
    now = SystemClock().now()
    assert now.tzinfo is not None
    assert now.utcoffset() == timedelta(0)
    assert abs(now - datetime.now(UTC)) < timedelta(seconds=5)


def test_fake_clock_starts_at_its_defaults() -> None:
    clock = FakeClock()
    assert clock.monotonic() == 1000.0
    assert clock.now() == datetime(2026, 1, 1, tzinfo=UTC)
    assert clock.sleeps == []


def test_fake_clock_accepts_other_start_readings() -> None:
    tokyo = timezone(timedelta(hours=9))
    clock = FakeClock(start_monotonic=5.0, start_now=datetime(2026, 4, 1, 9, tzinfo=tokyo))
    assert clock.monotonic() == 5.0
    assert clock.now() == datetime(2026, 4, 1, 0, tzinfo=UTC)
    assert clock.now().utcoffset() == timedelta(0)


def test_fake_clock_refuses_a_naive_start() -> None:
    with pytest.raises(ValueError):
        FakeClock(start_now=datetime(2026, 1, 1))


async def test_fake_clock_sleep_advances_both_readings_and_records() -> None:
    clock = FakeClock()
    await clock.sleep(2.5)
    await clock.sleep(0.5)
    assert clock.sleeps == [2.5, 0.5]
    assert clock.monotonic() == 1003.0
    assert clock.now() == datetime(2026, 1, 1, 0, 0, 3, tzinfo=UTC)


async def test_fake_clock_negative_sleep_counts_as_zero() -> None:
    clock = FakeClock()
    await clock.sleep(-1.0)
    assert clock.monotonic() == 1000.0
    assert clock.sleeps == [0.0]


def test_fake_clock_advance_moves_time_without_recording_a_sleep() -> None:
    clock = FakeClock()
    clock.advance(7.0)
    assert clock.monotonic() == 1007.0
    assert clock.now() == datetime(2026, 1, 1, 0, 0, 7, tzinfo=UTC)
    assert clock.sleeps == []


def test_fake_clock_never_runs_backwards() -> None:
    with pytest.raises(ValueError):
        FakeClock().advance(-0.1)


async def test_fake_clock_sleep_yields_to_other_tasks() -> None:
    clock = FakeClock()
    ran: list[str] = []

    async def other() -> None:
        ran.append("other")

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(other)
            await clock.sleep(0)
            # The other task ran during the sleep's single yield, before this line.
            assert ran == ["other"]


def test_all_is_honest() -> None:
    assert sorted(clock_module.__all__) == ["Clock", "FakeClock", "SystemClock"]
    for name in clock_module.__all__:
        assert hasattr(clock_module, name)
