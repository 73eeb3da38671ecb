"""One paced client per host, shared by every provider that reaches it; retries inside a budget.

Courtesy is owed to a *host*, not to a provider: Europe PMC and bioRxiv (searched in Europe
PMC's preprint index) reach the same host at EBI, and with a client each, four concurrent
searches put five request starts within one second and two overlapping requests there.
:class:`HostClients` therefore keeps one :class:`~readingroom.core.http.HttpClient` per host
(``host:port`` of the providers' base URLs), paced by the strictest rule of the providers that
reach it (:meth:`.providers.base.Pacing.merged`: the largest floor, serial if any is, the
smallest concurrency), plus a limit on the requests in flight there.

The core client sends one attempt at a time here (its own retries are off); a provider sees a
:class:`ProviderHttp`, which retries inside the provider's :class:`~.budget.Budget`:

* 408, 429, 5xx and failed exchanges are retried up to :data:`.common.MAX_RETRIES` times,
  after ``Retry-After`` when the upstream gave one (never sooner), else after
  :func:`.common.backoff`;
* a wait that does not fit what is left (of the retry allowance or of the budget) is not
  waited: a 429 becomes ``RATE_LIMITED`` at once with the seconds the upstream asked for, any
  other failure is raised as it is;
* an attempt is cut when the budget runs out (``DEADLINE_EXCEEDED``, reason ``timeout``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import anyio
import httpx

from ..core.clock import Clock
from ..core.errors import Code, CoreError
from ..core.http import (
    HttpClient,
    Politeness,
    RateLimitedError,
    UpstreamHttpError,
    UpstreamTransportError,
    shared_tls_context,
)
from .budget import Budget
from .upstreams.base import Pacing
from .upstreams.common import MAX_RETRIES, RETRY_STATUSES, TIMEOUT, USER_AGENT, backoff

__all__ = ["HostClient", "HostClients", "ProviderHttp", "budget_spent", "host_key"]


def host_key(url: str) -> str:
    """``host:port`` of ``url`` (the scheme's default port filled in): what is paced."""
    parsed = httpx.URL(url)
    port = parsed.port or {"http": 80, "https": 443}.get(parsed.scheme, 0)
    return f"{parsed.host}:{port}"


@dataclass
class HostClient:
    """One host's paced client, its pace and the providers that reach it."""

    key: str
    pacing: Pacing
    providers: list[str]
    http: HttpClient
    limiter: anyio.CapacityLimiter | None = None

    def describe(self) -> dict[str, Any]:
        """What ``literature_sources`` shows about the host."""
        return {"host": self.key, "providers": list(self.providers),
                "min_interval_s": self.pacing.min_interval, "serial": self.pacing.serial,
                "in_flight": self.pacing.in_flight}


class HostClients:
    """The paced clients of every host the providers reach (built once, shared).

    Args:
        paces: ``(provider id, base URL, its pacing)`` for every provider.
        clock: paces the clients.
        transport: an httpx transport every client sends through (tests), or a mapping
            provider id → transport (a host takes the one of its first provider).
    """

    def __init__(self, paces: Iterable[tuple[str, str, Pacing]], *, clock: Clock,
                 transport: object | Mapping[str, object] | None = None) -> None:
        merged: dict[str, tuple[Pacing, list[str]]] = {}
        for provider_id, base_url, pacing in paces:
            key = host_key(base_url)
            if key in merged:
                known, names = merged[key]
                merged[key] = (known.merged(pacing), [*names, provider_id])
            else:
                merged[key] = (pacing, [provider_id])
        self._hosts: dict[str, HostClient] = {}
        # The process's one TLS context for every host: each costs tens of milliseconds to
        # build, which the first search would otherwise pay once per host.
        tls: Any = shared_tls_context() if transport is None else None
        for key, (pacing, names) in merged.items():
            chosen = transport.get(names[0]) if isinstance(transport, Mapping) else transport
            if chosen is None and tls is not None:
                chosen = httpx.AsyncHTTPTransport(verify=tls)
            if chosen is not None and not isinstance(chosen, httpx.AsyncBaseTransport):
                raise TypeError("transport must be an httpx.AsyncBaseTransport")
            http = HttpClient(
                # Retries are ProviderHttp's, inside the budget: the core sends one attempt.
                politeness=Politeness(min_interval=pacing.min_interval, serial=pacing.serial,
                                      max_retries=0, retry_statuses=RETRY_STATUSES),
                timeout=TIMEOUT, user_agent=USER_AGENT, transport=chosen, clock=clock,
            )
            self._hosts[key] = HostClient(key, pacing, names, http)

    def for_url(self, base_url: str) -> HostClient:
        """The host client of a provider's base URL."""
        return self._hosts[host_key(base_url)]

    def describe(self) -> list[dict[str, Any]]:
        """Every host, its pace and its providers."""
        return [h.describe() for h in self._hosts.values()]

    async def aclose(self) -> None:
        """Close every client."""
        for host in self._hosts.values():
            await host.http.aclose()


def budget_spent(provider: str, budget: Budget) -> CoreError:
    """``DEADLINE_EXCEEDED`` for a provider that ran out of its budget (reason *timeout*)."""
    return CoreError(
        Code.DEADLINE_EXCEEDED,
        f"timeout: no answer within its {budget.seconds:g} s budget; abandoned so the others' "
        "answers stand. Its result is unknown, not empty.",
        details={"provider": provider, "reason": "timeout", "budget_s": budget.seconds},
        remediation="Try this source again later, or alone.",
    )


class ProviderHttp:
    """What one provider sends through during one search: its host's client, its budget.

    Args:
        provider: the provider id (for messages).
        host: the host client.
        budget: the provider's running budget.
        clock: where retry waits are slept.
        headers: headers every request of the provider carries (an API key).
    """

    def __init__(self, provider: str, host: HostClient, budget: Budget, clock: Clock,
                 headers: Mapping[str, str] | None = None) -> None:
        self.provider = provider
        self.host = host
        self.budget = budget
        self.clock = clock
        self.headers = dict(headers or {})
        self.attempts = 0

    async def get(self, url: str, params: Mapping[str, str] | None = None, *,
                  headers: Mapping[str, Any] | None = None) -> httpx.Response:
        """GET ``url`` within the budget, retrying as the module docstring says.

        Raises:
            RateLimitedError: 429 on every attempt, or a ``Retry-After`` beyond the budget.
            CoreError: DEADLINE_EXCEEDED when the budget ran out; the core client's typed
                errors otherwise.
        """
        merged = {**self.headers, **(headers or {})}
        retry = 0
        while True:
            left = self.budget.remaining()
            if left <= 0:
                raise budget_spent(self.provider, self.budget)
            self.attempts += 1
            try:
                with anyio.fail_after(left):
                    async with self._limiter():
                        return await self.host.http.get(url, params, headers=merged)
            except TimeoutError:
                raise budget_spent(self.provider, self.budget) from None
            except RateLimitedError as exc:
                failure: CoreError = exc
                asked = exc.details.get("retry_after")
            except UpstreamTransportError as exc:  # a failed exchange or HTTP 5xx
                failure, asked = exc, exc.details.get("retry_after")
            except UpstreamHttpError as exc:
                if exc.details.get("status") != 408:
                    raise
                failure, asked = exc, None
            retry += 1
            if retry > MAX_RETRIES:
                if isinstance(failure, RateLimitedError):
                    raise RateLimitedError(
                        f"it refused the request for load (HTTP 429) on all {self.attempts} "
                        "attempts.", details={**failure.details, "attempts": self.attempts})
                raise failure
            wait = float(asked) if isinstance(asked, int | float) else backoff(retry)
            if not self.budget.may_wait(wait):
                if isinstance(failure, RateLimitedError) and asked is not None:
                    raise self._not_waiting(failure, float(asked)) from None
                raise failure
            self.budget.spend_wait(wait)
            await self.clock.sleep(wait)

    def _limiter(self) -> anyio.CapacityLimiter:
        # Created on first use: a limiter belongs to the running event loop.
        if self.host.limiter is None:
            self.host.limiter = anyio.CapacityLimiter(self.host.pacing.in_flight)
        return self.host.limiter

    def _not_waiting(self, failure: RateLimitedError, asked: float) -> RateLimitedError:
        left = min(self.budget.remaining(), self.budget.retry_wait_left)
        return RateLimitedError(
            f"it asked to wait {asked:g} s before a retry (HTTP 429, Retry-After), more than "
            f"this search can still wait for it ({left:.0f} s); not retried, so as not to ask "
            "again before it said to.",
            details={**failure.details, "retry_after": asked, "attempts": self.attempts,
                     "reason": "retry_after_beyond_budget"},
        )
