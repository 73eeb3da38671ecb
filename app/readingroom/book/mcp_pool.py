"""book-agent's worker pool: blocking Core work off the event loop, in at most N threads.

``anyio.to_thread.run_sync(..., abandon_on_cancel=True)`` releases its limiter token when the
awaiting task is cancelled while the thread keeps running, so after a few deadlines or cancels
more threads run than the limit allows (research: mcp-sdk-v1.md §3). This pool owns its
threads instead: there are never more than ``size`` of them. A cancelled or timed-out call
abandons its *wait* at once (the cancellation propagates, never swallowed); a job still queued
is dropped before it starts, and a job already running finishes in its worker, where whatever
it loaded stays in the Core's cache for the next call. Python cannot stop native code
mid-call, so a worker stuck in one keeps its slot until that code returns.

Workers are daemon threads: a worker blocked in native code does not hold the process open
once stdin has closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

__all__ = ["THREAD_NAME_PREFIX", "PoolStats", "WorkerPool"]

THREAD_NAME_PREFIX = "book-worker"
T = TypeVar("T")


@dataclass(frozen=True)
class PoolStats:
    """A snapshot of the pool (``book_status`` reports it)."""

    limit: int
    threads: int
    peak_threads: int
    busy: int
    queued: int
    abandoned: int
    """Calls whose caller stopped waiting (deadline or cancel) before their job ended."""

    def to_data(self) -> dict[str, int]:
        """The snapshot as a JSON-ready dict."""
        return {"limit": self.limit, "threads": self.threads, "peak_threads": self.peak_threads,
                "busy": self.busy, "queued": self.queued, "abandoned": self.abandoned}


@dataclass(eq=False)
class _Job:
    fn: Callable[[], Any]
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[Any]
    abandoned: bool = field(default=False)


class WorkerPool:
    """At most ``size`` daemon threads running blocking callables for awaiting coroutines."""

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError("a worker pool needs at least one thread")
        self.size = size
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._busy = 0
        self._queued = 0
        self._peak = 0
        self._abandoned = 0

    async def run(self, fn: Callable[[], T]) -> T:
        """Run ``fn()`` in a worker and return its result (or raise its exception).

        Cancellation (a deadline, a client's cancel) abandons the wait and propagates.
        """
        loop = asyncio.get_running_loop()
        job = _Job(fn, loop, loop.create_future())
        with self._lock:
            self._queued += 1
            # Jobs that want a thread (running or waiting) outnumber the threads: add one.
            wanted = self._busy + self._queued
            spawn = wanted > len(self._threads) and len(self._threads) < self.size
            if spawn:
                thread = threading.Thread(target=self._work, daemon=True,
                                          name=f"{THREAD_NAME_PREFIX}-{len(self._threads) + 1}")
                self._threads.append(thread)
                self._peak = max(self._peak, len(self._threads))
        if spawn:
            thread.start()
        self._jobs.put(job)
        try:
            result: T = await job.future
        except asyncio.CancelledError:
            with self._lock:
                job.abandoned = True
                self._abandoned += 1
            raise
        return result

    def stats(self) -> PoolStats:
        """How many threads exist, ran at most, are busy, and how many jobs wait."""
        with self._lock:
            return PoolStats(limit=self.size, threads=len(self._threads), peak_threads=self._peak,
                             busy=self._busy, queued=self._queued, abandoned=self._abandoned)

    def _work(self) -> None:
        while True:
            job = self._jobs.get()
            with self._lock:
                self._queued -= 1
                skip = job.abandoned
                if not skip:
                    self._busy += 1
            if not skip:
                try:
                    outcome: tuple[bool, Any] = (True, job.fn())
                except BaseException as exc:  # delivered to the awaiting coroutine
                    outcome = (False, exc)
                finally:
                    with self._lock:
                        self._busy -= 1
                # RuntimeError: the event loop has closed, so nobody waits any more.
                with contextlib.suppress(RuntimeError):
                    job.loop.call_soon_threadsafe(_settle, job.future, outcome)


def _settle(future: asyncio.Future[Any], outcome: tuple[bool, Any]) -> None:
    if future.done():  # the caller was cancelled meanwhile
        return
    ok, value = outcome
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)
