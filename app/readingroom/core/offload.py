"""Blocking work off the event loop, in a bounded pool, left behind when its call is cancelled.

A server answers ``ping`` and ``notifications/cancelled`` on its event loop; a tool that parses
or computes on that loop silences both until it finishes. :func:`run_blocking` runs such work
in a worker thread of one process-wide pool of :data:`WORKERS` threads, awaited without
holding the loop:

* while the work runs, the loop answers pings, cancels and other calls;
* when the awaiting call is cancelled or runs out of time, it stops waiting at once; work that
  has not started yet never starts, and work already running finishes in its thread (Python
  cannot stop a thread) with its result dropped, so put any cache write *inside* the function;
* the pool is strictly bounded: abandoned work still holds its thread until it ends, unlike
  ``anyio.to_thread.run_sync(..., abandon_on_cancel=True)``, whose limiter forgets it.

Code that holds the GIL in one C call (``json.loads``, an lxml parse) blocks every thread for
that call's length: such work is bounded where the input arrives instead
(:mod:`readingroom.core.bounds`; :data:`readingroom.core.http.MAX_JSON_VALUES`,
:data:`readingroom.core.xmlsafe.MAX_TAGS`).
"""

from __future__ import annotations

import asyncio
import functools
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

__all__ = ["WORKERS", "run_blocking"]

T = TypeVar("T")

WORKERS = max(2, min(4, os.cpu_count() or 2))
"""Worker threads of the pool shared by every tool of a server process."""

_pool: ThreadPoolExecutor | None = None


def _forget_pool() -> None:
    # A forked child inherits the pool object but none of its threads: work queued on it would
    # wait for ever (a server forked from a process that had used the pool, as the test
    # suite's forked servers are, never answered its first offloaded call).
    global _pool
    _pool = None


if hasattr(os, "register_at_fork"):  # not on Windows, which has no fork
    os.register_at_fork(after_in_child=_forget_pool)


def _executor() -> ThreadPoolExecutor:
    global _pool
    if _pool is None:  # created on first use: a server answers initialize without threads
        _pool = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="readingroom-work")
    return _pool


async def run_blocking(fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """Run ``fn(*args, **kwargs)`` in the worker pool and return its result.

    Cancelling the caller stops the wait at once (see the module docstring for what happens
    to the work). Exceptions of ``fn`` are raised here.
    """
    future = _executor().submit(functools.partial(fn, *args, **kwargs))
    # wrap_future cancels the pool's future when this await is cancelled: queued work is
    # dropped before it starts, running work is left to finish.
    return await asyncio.wrap_future(future)
