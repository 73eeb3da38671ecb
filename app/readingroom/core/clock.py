"""Time as an injected dependency: a real clock for servers, a fake one for tests.

Everything that paces, backs off or stamps a receipt takes a :class:`Clock`, so tests run
with :class:`FakeClock` and never really sleep.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Protocol

import anyio

__all__ = ["Clock", "FakeClock", "SystemClock"]


class Clock(Protocol):
    """A source of monotonic time, wall-clock time and sleeping."""

    def monotonic(self) -> float:
        """Seconds on a clock that never goes backwards; only differences are meaningful."""
        ...

    def now(self) -> datetime:
        """The current wall-clock time, timezone-aware in UTC."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Suspend the calling task for ``seconds``."""
        ...


class SystemClock:
    """The real clock: ``time.monotonic``, ``datetime.now(UTC)`` and ``anyio.sleep``."""

    def monotonic(self) -> float:
        """Seconds from ``time.monotonic()``."""
        return time.monotonic()

    def now(self) -> datetime:
        """The current time, aware UTC."""
        return datetime.now(UTC)

    async def sleep(self, seconds: float) -> None:
        """Sleep for ``seconds`` on the running event loop."""
        await anyio.sleep(seconds)


class FakeClock:
    """A clock that moves only when slept on or advanced; for tests.

    Each :meth:`sleep` advances both readings by exactly the slept seconds, records the
    seconds in :attr:`sleeps` and yields once to the event loop, so concurrent tasks interleave
    as they would with real time but the test never waits.

    Args:
        start_monotonic: the first :meth:`monotonic` reading.
        start_now: the first :meth:`now` reading; must be timezone-aware.
    """

    def __init__(
        self,
        start_monotonic: float = 1000.0,
        start_now: datetime = datetime(2026, 1, 1, tzinfo=UTC),
    ) -> None:
        if start_now.tzinfo is None:
            raise ValueError("start_now must be timezone-aware")
        self._start_monotonic = start_monotonic
        self._start_now = start_now.astimezone(UTC)
        self._elapsed = 0.0
        self.sleeps: list[float] = []

    def monotonic(self) -> float:
        """The start reading plus every second slept or advanced so far."""
        return self._start_monotonic + self._elapsed

    def now(self) -> datetime:
        """The start time plus every second slept or advanced so far, aware UTC."""
        return self._start_now + timedelta(seconds=self._elapsed)

    def advance(self, seconds: float) -> None:
        """Move both readings forward by ``seconds`` without sleeping or recording.

        Raises:
            ValueError: if ``seconds`` is negative (time never runs backwards).
        """
        if not seconds >= 0:
            raise ValueError(f"cannot advance a clock by {seconds!r} seconds")
        self._elapsed += seconds

    async def sleep(self, seconds: float) -> None:
        """Record ``seconds``, advance by it (negative counts as zero) and yield once."""
        # Like anyio.sleep, a negative sleep returns at once rather than failing.
        seconds = max(0.0, seconds)
        self.sleeps.append(seconds)
        self._elapsed += seconds
        await anyio.sleep(0)
