"""A scripted J-STAGE WebAPI for the service tests: an ``httpx.MockTransport`` handler over the
canned answers (as the loopback fake chooses them), on a :class:`FakeClock`, recording when
each request started and ended."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from readingroom.core.clock import FakeClock
from readingroom.jstage.fake import canned_answer
from readingroom.jstage.service import JstageService

__all__ = ["ENDPOINT", "Seen", "Upstream", "service"]

ENDPOINT = "https://jstage.test/searchapi/do"
Answer = tuple[int, dict[str, str], bytes]


@dataclass
class Seen:
    """One request as the scripted upstream saw it (fake-clock seconds)."""

    started: float
    ended: float
    params: dict[str, str]


@dataclass
class Upstream:
    """The handler: a script first (``params -> answer | None``), else the fake's choice."""

    clock: FakeClock
    work: float = 0.25
    script: Callable[[dict[str, str]], Answer | None] | None = None
    seen: list[Seen] = field(default_factory=list)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        started = self.clock.monotonic()
        self.clock.advance(self.work)
        params = dict(request.url.params)
        answer = self.script(params) if self.script else None
        if answer is None:
            answer = canned_answer(params, str(request.url))  # as the loopback fake answers
        self.seen.append(Seen(started, self.clock.monotonic(), params))
        status, headers, body = answer
        return httpx.Response(status, headers=headers, content=body)


def service(upstream: Upstream, ledger: Any = None) -> JstageService:
    """A service over ``upstream`` (receipts into ``ledger`` when given)."""
    env = {"MCP_RECEIPT_LOG": str(ledger)} if ledger is not None else {}
    return JstageService(endpoint=ENDPOINT, transport=httpx.MockTransport(upstream),
                         clock=upstream.clock, env=env)
