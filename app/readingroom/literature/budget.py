"""The time a search may spend, so its answer arrives while the host is still waiting.

Hosts commonly give a tool call 60 seconds (Codex's default ``tool_timeout_sec``, the MCP
TypeScript SDK's request timeout); past that the user gets nothing, and six good sources are
lost with one bad one. Three budgets, each inside the next, keep every answer well within that:

* :attr:`Budgets.provider_s` — one provider's whole share of a search: waiting for its pacing
  slot, every attempt, every wait before a retry. A provider still busy then is abandoned
  (status ``error``, reason *timeout*); the others' records stand.
* :attr:`Budgets.retry_wait_s` — of that, the most a provider spends *waiting* before retries
  (``Retry-After`` or backoff). A wait that does not fit in what is left of this, or of the
  provider's budget, is not waited at all: the provider is ``rate_limited`` at once, with the
  seconds the upstream asked for. A retry is never sent before the upstream said it may be.
* :attr:`Budgets.fanout_s` — the fan-out stops waiting for any provider then, whatever the
  providers' own budgets; and never later than the tool deadline minus a margin
  (:func:`fanout_deadline`).

The tool deadline (``READINGROOM_TOOL_DEADLINE``, default the declaration's
``deadline_s``) stays the outer bound of every call, full text included; host entries carry a
timeout above it (``tool_timeout_sec`` = deadline + 30 s in Codex).

:class:`Budget` is one running budget on the injected clock (retry decisions); abandoning a
provider that hangs is done on the event loop's clock by the service, so a hang is cut even
when tests run on a fake clock.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.clock import Clock

__all__ = [
    "DEFAULT_BUDGETS",
    "FANOUT_MARGIN_S",
    "Budget",
    "Budgets",
    "fanout_deadline",
]

FANOUT_MARGIN_S = 5.0
"""The fan-out stops at least this long before the tool deadline (at most a tenth of it), so
the tool answers with the providers that did answer."""


@dataclass(frozen=True)
class Budgets:
    """Seconds a search may spend; see the module docstring. Tests pass small ones.

    Raises:
        ValueError: a budget is not positive, or the retry allowance exceeds the provider's.
    """

    provider_s: float = 30.0
    retry_wait_s: float = 10.0
    fanout_s: float = 40.0

    def __post_init__(self) -> None:
        if not (self.provider_s > 0 and self.retry_wait_s >= 0 and self.fanout_s > 0):
            raise ValueError("budgets must be positive")
        if self.retry_wait_s > self.provider_s:
            raise ValueError("the retry allowance cannot exceed the provider budget")

    def describe(self, tool_deadline: float) -> dict[str, float | str]:
        """What ``literature_sources`` shows: the budgets and the bound they give."""
        overall = min(self.fanout_s, fanout_deadline(tool_deadline))
        return {
            "provider_s": self.provider_s,
            "retry_wait_s": self.retry_wait_s,
            "fanout_s": overall,
            "tool_deadline_s": tool_deadline,
            "rule": (
                f"Each provider has {self.provider_s:g} s for its part of a search (pacing "
                f"waits, attempts and retries together), of which at most "
                f"{self.retry_wait_s:g} s waiting before retries; a Retry-After longer than "
                f"what is left makes it rate_limited at once. The search answers after at most "
                f"{overall:g} s with whatever the providers answered; every call ends by the "
                f"{tool_deadline:g} s tool deadline."
            ),
        }


DEFAULT_BUDGETS = Budgets()
"""The declared budgets: 30 s per provider (10 s of it waiting for retries), 40 s overall."""


def fanout_deadline(tool_deadline: float) -> float:
    """Seconds the fan-out may wait for providers under a tool deadline of ``tool_deadline``."""
    return max(0.5, tool_deadline - min(FANOUT_MARGIN_S, tool_deadline / 10))


class Budget:
    """One provider's running budget, read on ``clock``.

    Args:
        clock: the injected clock (a fake one in tests).
        seconds: the whole budget from now.
        retry_wait: of it, the most that may be spent waiting before retries.
    """

    def __init__(self, clock: Clock, seconds: float, retry_wait: float) -> None:
        self.clock = clock
        self.seconds = seconds
        self.deadline = clock.monotonic() + seconds
        self.retry_wait_left = retry_wait

    def remaining(self) -> float:
        """Seconds left of the whole budget (never negative)."""
        return max(0.0, self.deadline - self.clock.monotonic())

    def may_wait(self, seconds: float) -> bool:
        """Whether a wait of ``seconds`` before a retry fits in both allowances."""
        return seconds <= self.retry_wait_left and seconds < self.remaining()

    def spend_wait(self, seconds: float) -> None:
        """Record ``seconds`` of waiting before a retry."""
        self.retry_wait_left = max(0.0, self.retry_wait_left - seconds)
