"""Several sources at once under one overall deadline, each with its own outcome.

A server that asks seven providers a question must answer with what six of them said when the
seventh is slow or down: :func:`fan_out` runs every source concurrently, stops waiting for
any of them at the shared deadline, and returns one :class:`Outcome` per source. A slow source
becomes that source's ``timeout`` outcome and a failing one its ``error`` outcome; neither is
ever the whole call's failure. Give it a deadline comfortably inside the server's per-call
deadline (``READINGROOM_TOOL_DEADLINE``) so the tool still answers with the rest.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Generic, TypeVar

import anyio

from .clock import Clock, SystemClock
from .errors import Code, CoreError

__all__ = ["Outcome", "Status", "fan_out"]

log = logging.getLogger(__name__)

T = TypeVar("T")


class Status(StrEnum):
    """How one source of a fan-out ended."""

    ok = "ok"
    """It answered; :attr:`Outcome.value` holds the answer."""
    error = "error"
    """It failed; :attr:`Outcome.error` says how (its code is the envelope's code)."""
    timeout = "timeout"
    """It had not answered at the deadline and was abandoned (code ``DEADLINE_EXCEEDED``)."""


@dataclass(frozen=True)
class Outcome(Generic[T]):
    """What one source of a :func:`fan_out` produced.

    Attributes:
        source: the name the source was given under.
        status: ok, error or timeout.
        value: the source's answer when ``status`` is ok, else None.
        error: the typed error when ``status`` is error or timeout, else None.
        seconds: how long the source ran (on the injected clock).
    """

    source: str
    status: Status
    value: T | None = None
    error: CoreError | None = None
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """True when the source answered."""
        return self.status is Status.ok

    @property
    def code(self) -> Code | None:
        """The error code of a failed or abandoned source; None when it answered."""
        return self.error.code if self.error is not None else None


def _unexpected(name: str, exc: Exception) -> CoreError:
    """A source's unexpected exception as a typed error that says what happened, in words.

    Deep nesting (``RecursionError``) is the upstream's answer being unreadable, so
    ``API_ERROR``; an operating-system error is named (a full disk, a refused permission);
    anything else is a defect (``INTERNAL_ERROR``), named by its class only, since an
    exception's text may quote a URL with its query.
    """
    from .ledger import describe_os_error

    details = {"source": name, "error": type(exc).__name__}
    if isinstance(exc, RecursionError):
        return CoreError(Code.API_ERROR,
                         f"The answer of the source {name!r} nests too deeply to be read.",
                         details={**details, "reason": "too_deep"},
                         remediation="The result is unknown, not empty; try again later.")
    if isinstance(exc, OSError):
        return CoreError(Code.INTERNAL_ERROR,
                         f"The source {name!r} failed on this machine: {describe_os_error(exc)}.",
                         details=details,
                         remediation="Fix the machine's problem (disk space, permissions); the "
                         "result is unknown.")
    return CoreError(Code.INTERNAL_ERROR, f"The source {name!r} failed with {type(exc).__name__}.",
                     details=details)


async def fan_out(
    sources: Mapping[str, Callable[[], Awaitable[T]]],
    *,
    deadline: float,
    clock: Clock | None = None,
) -> dict[str, Outcome[T]]:
    """Run every source concurrently; return each one's outcome by the overall deadline.

    A source is a zero-argument async callable. One that raises :class:`CoreError` becomes an
    ``error`` outcome with that error; one that raises anything else becomes an ``error``
    outcome with ``INTERNAL_ERROR`` (the exception is logged to stderr, never put in the
    outcome, since its text may quote a URL). One still running ``deadline`` seconds after the
    start is cancelled and becomes a ``timeout`` outcome. Cancelling the caller cancels every
    source and propagates as usual.

    Args:
        sources: the sources by name; the result keeps this order.
        deadline: seconds from now after which no source is waited for (> 0).
        clock: times each source for :attr:`Outcome.seconds`; the deadline itself runs on the
            event loop's clock, which is what cancellation obeys.

    Returns:
        One outcome per source, in the order of ``sources``.

    Raises:
        ValueError: ``deadline`` is not positive.
    """
    if not deadline > 0:
        raise ValueError(f"deadline must be > 0 seconds, got {deadline!r}")
    timer: Clock = clock if clock is not None else SystemClock()
    until = anyio.current_time() + deadline
    outcomes: dict[str, Outcome[T]] = {}

    async def run(name: str, call: Callable[[], Awaitable[T]]) -> None:
        began = timer.monotonic()
        answered = False
        value: T | None = None
        failure: CoreError | None = None
        with anyio.CancelScope(deadline=until):
            try:
                value = await call()
                answered = True
            except CoreError as exc:
                failure = exc
            except Exception as exc:
                log.exception("source %s failed", name)
                failure = _unexpected(name, exc)
        seconds = timer.monotonic() - began
        if answered:
            outcomes[name] = Outcome(name, Status.ok, value=value, seconds=seconds)
        elif failure is not None:
            outcomes[name] = Outcome(name, Status.error, error=failure, seconds=seconds)
        else:
            outcomes[name] = Outcome(
                name,
                Status.timeout,
                error=CoreError(
                    Code.DEADLINE_EXCEEDED,
                    f"The source {name!r} had not answered after {deadline:g} s and was "
                    "abandoned; the other sources' answers stand.",
                    details={"source": name, "deadline_s": deadline},
                    remediation="Try this source again later, or alone.",
                ),
                seconds=seconds,
            )

    async with anyio.create_task_group() as group:
        for name, call in sources.items():
            group.start_soon(run, name, call)
    return {name: outcomes[name] for name in sources}
