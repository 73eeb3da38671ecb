"""Every request of swiss-cultural-heritage-mcp goes out through :class:`Egress`.

One policy for every upstream (the original retried only Memobase and Dodis):

* **HTTPS only**, to hosts on an allow-list: the four upstream hosts plus the host of any base
  URL the operator set in the environment. Plain HTTP is allowed to loopback addresses only
  (the tests' and the self-test's fakes).
* **Redirects are followed by us, never by httpx**, at most :data:`MAX_REDIRECTS` hops, each
  target re-checked against the allow-list and the scheme rule; a POST is never redirected.
  A refused hop is an ``API_ERROR`` naming the refused host.
* **One retry policy with a time budget**: HTTP 429, 5xx, timeouts and network errors are
  retried up to :data:`RETRY_ATTEMPTS` attempts in all, waiting ``Retry-After`` (429, +0-25 %)
  or 2 s x 2^(n-1) jittered by +-50 %, each wait capped at :data:`RETRY_MAX_DELAY_S`; no attempt
  starts once :data:`RETRY_BUDGET_S` would be exceeded, and the whole exchange is cut at the
  budget. Other 4xx are not retried. The clock and the jitter source are injected.

Pacing, body caps and typed errors are :class:`~readingroom.core.http.HttpClient`'s.
"""

from __future__ import annotations

import contextvars
import random as _random
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlsplit

import anyio
import httpx

from ..core.clock import Clock, SystemClock
from ..core.errors import Code, CoreError
from ..core.http import (
    HttpClient,
    Politeness,
    RateLimitedError,
    UpstreamHttpError,
    UpstreamTransportError,
)

__all__ = [
    "DEFAULT_HOSTS",
    "LOOPBACK_HOSTS",
    "MAX_REDIRECTS",
    "POLITENESS",
    "RETRY_ATTEMPTS",
    "RETRY_BASE_S",
    "RETRY_BUDGET_S",
    "RETRY_MAX_DELAY_S",
    "AllowList",
    "Egress",
    "EgressRefused",
    "RedirectingTransport",
]

DEFAULT_HOSTS = frozenset({
    "ckan.opendata.swiss", "helveticat.nb.admin.ch", "api.memobase.ch", "beta.dodis.ch",
})
"""The upstream hosts this server talks to by default."""
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "::1", "localhost"})
"""Hosts plain HTTP may reach (loopback fakes only)."""
MAX_REDIRECTS = 5
RETRY_ATTEMPTS = 4
"""Attempts in all (the first plus three retries)."""
RETRY_BASE_S = 2.0
RETRY_MAX_DELAY_S = 20.0
RETRY_BUDGET_S = 25.0
RETRY_JITTER = 0.5
RETRY_AFTER_JITTER = 0.25
REQUEST_TIMEOUT_S = 20.0
"""Per-phase httpx timeout, inside the budget."""

POLITENESS = Politeness(min_interval=0.2, serial=False, max_retries=0)
"""Pacing per host (0.2 s between request starts); retries are :class:`Egress`'s own loop, so the
core client makes one attempt each time (a 429 still reports its ``Retry-After``)."""

_REDIRECTS = (301, 302, 303, 307, 308)
_refusals: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar(
    "heritage_redirect_refusals", default=None
)

T = TypeVar("T")


class EgressRefused(CoreError):
    """A request or redirect that the egress rules do not allow; nothing was fetched there."""

    def __init__(self, message: str, *, details: dict[str, Any] | None = None) -> None:
        super().__init__(
            Code.API_ERROR,
            message,
            details=details,
            remediation="The upstream pointed somewhere this server does not talk to; the "
            "result is unknown, not empty. Report it if it persists.",
        )


@dataclass(frozen=True)
class AllowList:
    """The hosts requests may go to, and the scheme rule."""

    hosts: frozenset[str]

    @classmethod
    def for_endpoints(cls, urls: Iterable[str]) -> AllowList:
        """The default hosts plus the host of every configured base URL."""
        extra = {urlsplit(u).hostname or "" for u in urls}
        return cls(DEFAULT_HOSTS | {h.lower() for h in extra if h})

    def refusal(self, url: httpx.URL) -> str | None:
        """Why ``url`` may not be fetched, or None when it may."""
        host = (url.host or "").lower()
        if url.scheme == "http" and host in LOOPBACK_HOSTS:
            pass
        elif url.scheme != "https":
            return f"{url.scheme}:// is not allowed (HTTPS only)"
        if host not in self.hosts:
            return f"host {host or '(none)'} is not on the allow-list"
        return None


class RedirectingTransport(httpx.AsyncBaseTransport):
    """Follows GET redirects itself, re-checking every hop against the allow-list.

    A refused hop (or one past :data:`MAX_REDIRECTS`, or any redirect of a POST) returns the
    3xx response as it came, and records why in a context variable that :class:`Egress` reads
    to turn the core client's ``API_ERROR`` into a message naming the refused target.
    """

    def __init__(self, inner: httpx.AsyncBaseTransport, allow: AllowList) -> None:
        self._inner = inner
        self._allow = allow

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send ``request`` and follow permitted redirects."""
        response = await self._inner.handle_async_request(request)
        hops = 0
        while response.status_code in _REDIRECTS and "location" in response.headers:
            target = request.url.join(response.headers["location"])
            reason = self._allow.refusal(target)
            if request.method != "GET":
                reason = f"a {request.method} is never redirected"
            elif hops >= MAX_REDIRECTS:
                reason = f"more than {MAX_REDIRECTS} redirects"
            if reason is not None:
                seen = _refusals.get()
                if seen is not None:
                    seen.append(f"redirect to {target.scheme}://{target.host}{target.path} "
                                f"refused: {reason}")
                return response
            await response.aclose()
            hops += 1
            headers = [(k, v) for k, v in request.headers.multi_items() if k.lower() != "host"]
            request = httpx.Request("GET", target, headers=headers,
                                    extensions=request.extensions)
            response = await self._inner.handle_async_request(request)
        return response

    async def aclose(self) -> None:
        """Close the inner transport."""
        await self._inner.aclose()


class Egress:
    """The one way out: allow-list, HTTPS, checked redirects, retries within a budget.

    Args:
        allow: where requests may go.
        user_agent: sent with every request.
        transport: the innermost transport (tests pass ``httpx.MockTransport``).
        clock: for pacing, backoff and the budget (tests pass ``FakeClock``).
        jitter: returns a float in [0, 1); tests pass a constant.
        budget_s: the time budget of one exchange with its retries.
    """

    def __init__(
        self,
        *,
        allow: AllowList,
        user_agent: str,
        transport: httpx.AsyncBaseTransport | None = None,
        clock: Clock | None = None,
        jitter: Callable[[], float] = _random.random,
        budget_s: float = RETRY_BUDGET_S,
    ) -> None:
        self.allow = allow
        self._clock: Clock = clock if clock is not None else SystemClock()
        self._jitter = jitter
        self.budget_s = budget_s
        inner = transport if transport is not None else httpx.AsyncHTTPTransport()
        self.http = HttpClient(
            politeness=POLITENESS, timeout=REQUEST_TIMEOUT_S, user_agent=user_agent,
            transport=RedirectingTransport(inner, allow), clock=self._clock,
        )

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self.http.aclose()

    async def get_json(self, url: str, params: dict[str, str] | None = None, *,
                       accept: str = "application/json") -> Any:
        """GET ``url`` and parse JSON, under the whole policy."""
        return await self._within_policy(url, lambda: self.http.get_json(
            url, params, headers={"Accept": accept}))

    async def post_json(self, url: str, body: Any, *, accept: str = "application/json") -> Any:
        """POST ``body`` as JSON and parse the JSON answer, under the whole policy."""
        return await self._within_policy(url, lambda: self.http.post_json(
            url, json=body, headers={"Accept": accept}))

    async def get_bytes(self, url: str, params: dict[str, str] | None = None, *,
                        accept: str = "application/xml") -> bytes:
        """GET ``url`` and return the body bytes (XML upstreams), under the whole policy."""

        async def fetch() -> bytes:
            response = await self.http.get(url, params, headers={"Accept": accept})
            return response.content

        return await self._within_policy(url, fetch)

    async def _within_policy(self, url: str, send: Callable[[], Awaitable[T]]) -> T:
        target = httpx.URL(url)
        reason = self.allow.refusal(target)
        if reason is not None:
            raise EgressRefused(
                f"Not sent: {target.scheme}://{target.host}{target.path}: {reason}.",
                details={"host": target.host, "reason": reason, "sent": False},
            )
        try:
            with anyio.fail_after(self.budget_s):
                return await self._retrying(send)
        except TimeoutError:
            raise UpstreamTransportError(
                f"{target.host} gave no answer within the {self.budget_s:g} s budget.",
                details={"host": target.host, "budget_s": self.budget_s},
            ) from None

    async def _retrying(self, send: Callable[[], Awaitable[T]]) -> T:
        began = self._clock.monotonic()
        last: CoreError | None = None
        for attempt in range(1, RETRY_ATTEMPTS + 1):
            seen: list[str] = []
            token = _refusals.set(seen)
            try:
                return await send()
            except (RateLimitedError, UpstreamTransportError) as exc:
                last = exc
            except UpstreamHttpError as exc:
                status = exc.details.get("status")
                if isinstance(status, int) and 300 <= status < 400:
                    raise EgressRefused(
                        seen[-1] + "." if seen else f"HTTP {status} without a usable Location.",
                        details={**exc.details, "redirect": seen[-1] if seen else None},
                    ) from None
                raise
            finally:
                _refusals.reset(token)
            last.details["attempts"] = attempt
            if attempt == RETRY_ATTEMPTS:
                break
            delay = self._delay(attempt, last)
            if self._clock.monotonic() - began + delay > self.budget_s:
                last.details["budget_s"] = self.budget_s
                break
            await self._clock.sleep(delay)
        assert last is not None
        raise last

    def _delay(self, attempt: int, error: CoreError) -> float:
        """Seconds before the next attempt."""
        asked = error.details.get("retry_after") if isinstance(error, RateLimitedError) else None
        if isinstance(asked, int | float):
            delay = float(asked) * (1.0 + RETRY_AFTER_JITTER * self._jitter())
        else:
            spread = 1.0 + RETRY_JITTER * (2.0 * self._jitter() - 1.0)
            delay = RETRY_BASE_S * 2 ** (attempt - 1) * spread
        return min(delay, RETRY_MAX_DELAY_S)
