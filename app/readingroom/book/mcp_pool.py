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

**Deadlines.** A job carries the deadline of the call that queued it (anyio's effective
deadline, on ``time.monotonic()``): a worker never starts a job whose deadline has passed, even
when the event loop has not yet delivered the call's cancellation, and :func:`job_deadline`
lets the job itself wait no longer than that.

**Native work in child processes.** MuPDF holds the GIL for the whole of a page render and its
PNG encoding (25 + 80 ms for an A4 page at 150 dpi). Four workers rendering at once left the
event loop a turn about every 80 ms (p95 440 ms), and the SDK's stdio transport needs a thread
hop per line read and per answer written: 200 render calls at once with a 3 s deadline were
*read* over 23 s, each answered "in time" by the server's clock and up to 23 s late by the
client's. :class:`RenderProcesses` renders in up to N child processes instead
(``python -m readingroom.book.mcp_pool``, or the frozen executable with
:data:`RENDER_CHILD_FLAG`), so no GIL of this process is held by native code; a render still
running at its call's deadline is given :data:`DRAIN_S` more to finish (the child stays warm),
then its child is killed and a fresh one starts on the next render.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from .render import RenderedPage

__all__ = ["DRAIN_S", "RENDER_CHILD_FLAG", "THREAD_NAME_PREFIX", "PoolStats", "RenderProcesses",
           "WorkerPool", "child_main", "job_deadline", "render_child_command"]

RENDER_CHILD_FLAG = "--internal-render-child"
"""The frozen executable's only argument when the MCP server starts it as a page renderer
(:func:`child_main`; ``book-agent`` checks for it before anything else)."""
THREAD_NAME_PREFIX = "book-worker"
DRAIN_S = 10.0
"""How long a render past its call's deadline may still finish before its child is killed."""
T = TypeVar("T")
log = logging.getLogger("readingroom.book.mcp_pool")
_current = threading.local()


def job_deadline() -> float | None:
    """The ``time.monotonic()`` deadline of the pool job running in this thread, if any."""
    return getattr(_current, "deadline", None)


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
    deadline: float | None = None
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

        Cancellation (a deadline, a client's cancel) abandons the wait and propagates. The
        caller's deadline (anyio's effective deadline) goes with the job: a job still queued
        when it passes is never started.
        """
        loop = asyncio.get_running_loop()
        job = _Job(fn, loop, loop.create_future(), _effective_deadline())
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
            late = job.deadline is not None and time.monotonic() >= job.deadline
            with self._lock:
                self._queued -= 1
                skip = job.abandoned or late
                if not skip:
                    self._busy += 1
            outcome: tuple[bool, Any]
            if late and not job.abandoned:
                # The event loop may not have delivered the cancellation yet: answer for it.
                outcome = (False, TimeoutError("the call's deadline passed before it started"))
            elif skip:
                continue
            else:
                _current.deadline = job.deadline
                try:
                    outcome = (True, job.fn())
                except BaseException as exc:  # delivered to the awaiting coroutine
                    outcome = (False, exc)
                finally:
                    _current.deadline = None
                    with self._lock:
                        self._busy -= 1
            # RuntimeError: the event loop has closed, so nobody waits any more.
            with contextlib.suppress(RuntimeError):
                job.loop.call_soon_threadsafe(_settle, job.future, outcome)


def _effective_deadline() -> float | None:
    """The enclosing anyio deadline on ``time.monotonic()`` (asyncio's clock), or None."""
    try:
        import anyio

        deadline = anyio.current_effective_deadline()
    except Exception:  # not inside an anyio task: no deadline to carry
        return None
    return None if math.isinf(deadline) else deadline


def _settle(future: asyncio.Future[Any], outcome: tuple[bool, Any]) -> None:
    if future.done():  # the caller was cancelled meanwhile
        return
    ok, value = outcome
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)


# ---------------------------------------------------------------------- render children
def render_child_command() -> list[str]:
    """The command that starts a render child: this interpreter, or the frozen executable."""
    if getattr(sys, "frozen", False):
        return [sys.executable, RENDER_CHILD_FLAG]
    return [sys.executable, "-m", "readingroom.book.mcp_pool"]


class _ChildGone(Exception):
    """The render child stopped (crashed, killed) before it answered."""


class _Child:
    """One render child process, and the thread that reads its answers."""

    def __init__(self, command: Sequence[str]) -> None:
        flags = getattr(subprocess, "CREATE_NO_WINDOW", 0) if sys.platform == "win32" else 0
        self.proc = subprocess.Popen(list(command), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=None,
                                     creationflags=flags)
        self.answers: queue.SimpleQueue[tuple[dict[str, Any], bytes] | None] = (
            queue.SimpleQueue())
        self.reader = threading.Thread(target=self._read, daemon=True,
                                       name=f"book-render-reader-{self.proc.pid}")
        self.reader.start()

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        try:
            while line := out.readline():
                header = json.loads(line)
                size = int(header.get("png_bytes") or 0)
                data = _read_exactly(out, size)
                self.answers.put((header, data))
        except (OSError, ValueError):
            pass
        self.answers.put(None)

    def ask(self, request: dict[str, Any]) -> None:
        stdin = self.proc.stdin
        assert stdin is not None
        try:
            stdin.write(json.dumps(request).encode("utf-8") + b"\n")
            stdin.flush()
        except OSError:
            raise _ChildGone from None

    def answer(self, timeout: float | None) -> tuple[dict[str, Any], bytes]:
        """The next answer; ``queue.Empty`` when none came within ``timeout`` seconds."""
        got = self.answers.get(timeout=timeout)
        if got is None:
            raise _ChildGone
        return got

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        with contextlib.suppress(OSError):
            self.proc.kill()
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            self.proc.wait(5)
        for stream in (self.proc.stdin, self.proc.stdout):
            with contextlib.suppress(OSError):
                if stream is not None:
                    stream.close()


def _read_exactly(stream: IO[bytes], size: int) -> bytes:
    chunks, left = [], size
    while left > 0:
        chunk = stream.read(left)
        if not chunk:
            raise OSError("the render child closed its output mid-answer")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


class RenderProcesses:
    """PDF pages rendered by up to ``size`` child processes, for calls from pool workers.

    Each child renders one page at a time; a caller waits for a free child and for its answer
    no longer than its job's deadline (:func:`job_deadline`), then raises ``TimeoutError``.
    The answer and every refusal (``CoreError``: no such page, a bad clip) are the same as
    :func:`.render.render_pdf_page` in this process would give.
    """

    def __init__(self, size: int, *, command: Sequence[str] | None = None) -> None:
        if size < 1:
            raise ValueError("at least one render child is needed")
        self.size = size
        self.command = list(command) if command is not None else render_child_command()
        self._cond = threading.Condition()
        self._idle: list[_Child] = []
        self._busy: set[_Child] = set()
        self._count = 0
        self._started = 0
        self._killed = 0
        self._closed = False

    def stats(self) -> dict[str, int]:
        """Children running, idle, started and killed so far (``book_status`` reports it)."""
        with self._cond:
            return {"limit": self.size, "children": self._count, "busy": len(self._busy),
                    "started": self._started, "killed_past_deadline": self._killed}

    def render(self, source: Path, page_index: int, *, dpi: float,
               clip: tuple[float, float, float, float] | None) -> RenderedPage:
        """Render one page in a child; the same result or error as rendering here."""
        from ..core.errors import Code, CoreError
        from .render import RenderedPage

        deadline = job_deadline()
        child = self._acquire(deadline)
        with self._cond:
            self._busy.add(child)
            self._cond.notify_all()
        request = {"source": os.fspath(source), "page_index": page_index, "dpi": dpi,
                   "clip": list(clip) if clip is not None else None}
        healthy = False
        try:
            child.ask(request)
            try:
                header, png = child.answer(_remaining(deadline))
            except queue.Empty:
                # The caller has been answered DEADLINE_EXCEEDED by now.
                healthy = self._drain(child)
                raise TimeoutError("the page was still rendering at the call's deadline") \
                    from None
            healthy = True
        except _ChildGone:
            raise CoreError(Code.INTERNAL_ERROR, f"The page renderer stopped while rendering "
                            f"page index {page_index}.",
                            remediation="Try again; if it happens again on this page, the "
                            "page is likely damaged (see the server's stderr).") from None
        finally:
            self._release(child, healthy)
        if header.get("ok"):
            page = dict(header["page"])
            clip_back = page.get("clip")
            page["clip"] = tuple(clip_back) if clip_back is not None else None
            return RenderedPage(png=png, **page)
        if header.get("code"):
            raise CoreError(Code(header["code"]), header.get("message", ""),
                            details=header.get("details") or {},
                            remediation=header.get("remediation", ""))
        raise RuntimeError(f"the render child failed: {header.get('crash', 'unknown')}")

    def _acquire(self, deadline: float | None) -> _Child:
        with self._cond:
            while True:
                if self._closed:
                    raise RuntimeError("the render children were closed")
                while self._idle:
                    child = self._idle.pop()
                    if child.alive():
                        return child
                    self._count -= 1
                    child.kill()
                if self._count < self.size:
                    self._count += 1
                    self._started += 1
                    break
                if not self._cond.wait(_remaining(deadline)) and _past(deadline):
                    raise TimeoutError("no render child became free before the deadline")
        try:
            return _Child(self.command)
        except BaseException:
            with self._cond:
                self._count -= 1
                self._cond.notify()
            raise

    def _drain(self, child: _Child) -> bool:
        """Let a render past its deadline finish, so the child stays warm; kill it after
        :data:`DRAIN_S`. True when the child is free again."""
        try:
            child.answer(DRAIN_S)
            return True
        except queue.Empty:
            with self._cond:
                self._killed += 1
            return False
        except _ChildGone:
            return False

    def _release(self, child: _Child, healthy: bool) -> None:
        with self._cond:
            self._busy.discard(child)
            if healthy and child.alive() and not self._closed:
                self._idle.append(child)
            else:
                self._count -= 1
                child.kill()
            self._cond.notify()

    def close(self) -> None:
        """Stop every idle child (busy ones stop when their render is released)."""
        with self._cond:
            self._closed = True
            idle, self._idle = self._idle, []
            self._count -= len(idle)
            self._cond.notify_all()
        for child in idle:
            child.kill()


def _remaining(deadline: float | None) -> float | None:
    return None if deadline is None else max(0.0, deadline - time.monotonic())


def _past(deadline: float | None) -> bool:
    return deadline is not None and time.monotonic() >= deadline


def child_main() -> int:
    """A render child: one JSON request a line on stdin, one answer per request on stdout.

    An answer is a JSON line (``ok``, the page's fields and ``png_bytes``; or the error's
    ``code``, ``message``, ``details`` and ``remediation``) followed by that many PNG bytes.
    fd 1 is reserved first, so whatever MuPDF prints goes to stderr, never into an answer.
    Ends at end of input (the server has gone).
    """
    import dataclasses

    from ..core.stdio import reserve_stdout

    proto = reserve_stdout()  # kept: collecting the wrapper would close the protocol fd
    out = proto.buffer
    os.environ.setdefault("PYMUPDF_MESSAGE", "fd:2")
    os.environ.setdefault("PYMUPDF_LOG", "fd:2")
    from ..core.errors import CoreError
    from .render import render_pdf_page

    for line in sys.stdin.buffer:
        png = b""
        try:
            ask = json.loads(line)
            clip = ask.get("clip")
            page = render_pdf_page(Path(ask["source"]), int(ask["page_index"]),
                                   dpi=float(ask["dpi"]),
                                   clip=tuple(clip) if clip is not None else None)
            png = page.png
            fields = {k: v for k, v in dataclasses.asdict(page).items() if k != "png"}
            header: dict[str, Any] = {"ok": True, "page": fields, "png_bytes": len(png)}
        except CoreError as exc:
            header = {"ok": False, "code": str(exc.code), "message": exc.message,
                      "details": exc.details, "remediation": exc.remediation}
        except Exception as exc:  # reported to the server, which logs it as a defect
            header = {"ok": False, "crash": f"{type(exc).__name__}: {exc}"}
        out.write(json.dumps(header, default=str).encode("utf-8") + b"\n" + png)
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(child_main())
