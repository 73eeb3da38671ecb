"""Every request of swiss-cultural-heritage-mcp goes out through :class:`Egress`.

One policy for every upstream (the original retried only Memobase and Dodis):

* **HTTPS only**, to hosts on an allow-list: the four upstream hosts plus the host of any base
  URL the operator set in the environment. Plain HTTP is allowed to loopback addresses only
  (the tests' and the self-test's fakes).
* **Redirects are followed by us, never by httpx**, at most :data:`MAX_REDIRECTS` hops, and
  only within the origin asked: a hop must keep the scheme, host and port of the request
  (another port of an allowed host is another service), and is re-checked against the
  allow-list and the scheme rule; a POST is never redirected. A refused hop is an
  ``API_ERROR`` naming the refused target. **Every hop is paced** like a request: at least
  :data:`MIN_INTERVAL_S` after the previous request start to that host, whoever sent it.
* **Bounded parsing**: a JSON body is parsed in a worker thread, and only after its container
  count (``{`` and ``[``) is checked against what the page may hold for the records asked
  (``max_containers``): millions of tiny containers are refused (``API_ERROR``, reason
  ``too_many_items``) in milliseconds instead of becoming hundreds of megabytes of objects
  on the event loop.
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

from ..core.bounds import PerRecord, load_json
from ..core.clock import Clock, SystemClock
from ..core.errors import Code, CoreError, FixedError
from ..core.http import (
    HttpClient,
    Politeness,
    RateLimitedError,
    UpstreamBodyError,
    UpstreamHttpError,
    UpstreamTransportError,
)
from ..core.offload import run_blocking

__all__ = [
    "DEFAULT_HOSTS",
    "LOOPBACK_HOSTS",
    "MAX_REDIRECTS",
    "MIN_INTERVAL_S",
    "POLITENESS",
    "RETRY_ATTEMPTS",
    "RETRY_BASE_S",
    "RETRY_BUDGET_S",
    "RETRY_MAX_DELAY_S",
    "AllowList",
    "Egress",
    "EgressRefused",
    "RedirectingTransport",
    "containers_for",
    "decode_json",
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

MIN_INTERVAL_S = 0.2
"""The per-host floor between request starts, redirect hops included."""
CONTAINERS_BASE = 2000
CONTAINERS_PER_ITEM = 1000
"""JSON containers one record may take: the real SIKART rows take 1, SNM packages about 57,
Memobase records about 70 (lists trimmed to 3; 1000 leaves room for untrimmed ones)."""
PAGE_CONTAINERS = PerRecord(CONTAINERS_BASE, CONTAINERS_PER_ITEM)
"""That limit, as :mod:`readingroom.core.bounds` applies it (:func:`containers_for`)."""

POLITENESS = Politeness(min_interval=MIN_INTERVAL_S, serial=False, max_retries=0)
"""Pacing per host (0.2 s between request starts); retries are :class:`Egress`'s own loop, so the
core client makes one attempt each time (a 429 still reports its ``Retry-After``)."""

_REDIRECTS = (301, 302, 303, 307, 308)
_refusals: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar(
    "heritage_redirect_refusals", default=None
)

T = TypeVar("T")


class EgressRefused(FixedError):
    """A request or redirect that the egress rules do not allow; nothing was fetched there."""

    error_code = Code.API_ERROR
    remediation_text = ("The upstream pointed somewhere this server does not talk to; the "
                        "result is unknown, not empty. Report it if it persists.")


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


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    port = url.port if url.port is not None else {"http": 80, "https": 443}.get(url.scheme)
    return url.scheme, (url.host or "").lower(), port


class _Pacer:
    """The per-host floor between request starts, for every request the transport sends."""

    def __init__(self, clock: Clock, interval: float) -> None:
        self._clock = clock
        self._interval = interval
        self._locks: dict[str, anyio.Lock] = {}
        self._last: dict[str, float] = {}

    async def wait(self, url: httpx.URL) -> None:
        """Wait for ``url``'s host's next start slot and claim it."""
        _scheme, host, port = _origin(url)
        key = f"{host}:{port}"
        lock = self._locks.setdefault(key, anyio.Lock())
        async with lock:
            last = self._last.get(key)
            if last is not None:
                # A loop: a real timer may fire a tick early.
                while (delay := last + self._interval - self._clock.monotonic()) > 0:
                    await self._clock.sleep(delay)
            self._last[key] = self._clock.monotonic()


class RedirectingTransport(httpx.AsyncBaseTransport):
    """Follows GET redirects itself, within the request's origin, pacing every hop.

    A refused hop (another scheme, host or port, a target off the allow-list, one past
    :data:`MAX_REDIRECTS`, or any redirect of a POST) returns the 3xx response as it came,
    and records why in a context variable that :class:`Egress` reads to turn the core
    client's ``API_ERROR`` into a message naming the refused target. Every request it sends,
    the first and every hop, waits for the host's :data:`MIN_INTERVAL_S` slot (the core
    client paces the first only).
    """

    def __init__(self, inner: httpx.AsyncBaseTransport, allow: AllowList, *,
                 clock: Clock | None = None, interval: float = MIN_INTERVAL_S) -> None:
        self._inner = inner
        self._allow = allow
        self._pacer = _Pacer(clock if clock is not None else SystemClock(), interval)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send ``request`` and follow permitted redirects."""
        await self._pacer.wait(request.url)
        response = await self._inner.handle_async_request(request)
        hops = 0
        while response.status_code in _REDIRECTS and "location" in response.headers:
            target = request.url.join(response.headers["location"])
            reason = self._allow.refusal(target)
            if request.method != "GET":
                reason = f"a {request.method} is never redirected"
            elif hops >= MAX_REDIRECTS:
                reason = f"more than {MAX_REDIRECTS} redirects"
            elif reason is None and _origin(target) != _origin(request.url):
                reason = ("a redirect must keep the scheme, host and port of the request "
                          f"({request.url.scheme}://{request.url.host}"
                          f"{':' + str(request.url.port) if request.url.port else ''})")
            if reason is not None:
                seen = _refusals.get()
                if seen is not None:
                    port = f":{target.port}" if target.port is not None else ""
                    seen.append(f"redirect to {target.scheme}://{target.host}{port}"
                                f"{target.path} refused: {reason}")
                return response
            await response.aclose()
            hops += 1
            headers = [(k, v) for k, v in request.headers.multi_items() if k.lower() != "host"]
            request = httpx.Request("GET", target, headers=headers,
                                    extensions=request.extensions)
            await self._pacer.wait(request.url)
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
            transport=RedirectingTransport(inner, allow, clock=self._clock), clock=self._clock,
        )

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self.http.aclose()

    async def get_json(self, url: str, params: dict[str, str] | None = None, *,
                       accept: str = "application/json", max_containers: int | None = None
                       ) -> Any:
        """GET ``url`` and parse JSON, under the whole policy.

        ``max_containers`` bounds the objects and arrays the body may hold (see
        :func:`containers_for`); default: :func:`containers_for` one item.
        """
        response = await self._within_policy(url, lambda: self.http.get(
            url, params, headers={"Accept": accept}))
        return await _parsed(response, max_containers)

    async def post_json(self, url: str, body: Any, *, accept: str = "application/json",
                        max_containers: int | None = None) -> Any:
        """POST ``body`` as JSON and parse the JSON answer, under the whole policy."""
        response = await self._within_policy(url, lambda: self.http.post(
            url, json=body, headers={"Accept": accept}))
        return await _parsed(response, max_containers)

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


def containers_for(items: int) -> int:
    """The JSON objects and arrays an answer for ``items`` records may hold."""
    return PAGE_CONTAINERS.limit(items)


def _safe(url: httpx.URL) -> str:
    port = f":{url.port}" if url.port is not None else ""
    return f"{url.scheme}://{url.host}{port}{url.path}"


def decode_json(content: bytes, max_containers: int, where: str = "the upstream") -> Any:
    """``content`` as JSON, after counting its containers; a typed ``API_ERROR`` otherwise.

    Pure and synchronous (the caller runs it in a worker thread). The count (``{`` and ``[``
    bytes, a C-speed scan that may over-count brackets inside strings) is checked first, so a
    body of millions of tiny containers is refused before any object is built. The error
    never quotes the body.

    Raises:
        UpstreamBodyError: too many containers, not UTF-8, not JSON, or nested too deeply.
    """

    def too_many(containers: int) -> UpstreamBodyError:
        return UpstreamBodyError(
            f"{where} answered with {containers} JSON objects and arrays, more than the "
            f"{max_containers} a page of the records asked for can hold; it was not parsed. "
            "The result is unknown.",
            details={"reason": "too_many_items", "containers": containers,
                     "max_containers": max_containers},
        )

    def unreadable(reason: str) -> UpstreamBodyError:
        return UpstreamBodyError(f"{where} answered with a body that is {reason}.",
                                 details={"reason": reason})

    return load_json(content, limit=max_containers, too_many=too_many, unreadable=unreadable)


async def _parsed(response: httpx.Response, max_containers: int | None) -> Any:
    """The response's JSON, decoded in a worker thread (the event loop keeps serving)."""
    url = response.request.url
    budget = max_containers if max_containers is not None else containers_for(1)
    try:
        return await run_blocking(decode_json, response.content, budget, _safe(url))
    except UpstreamBodyError as exc:
        exc.details.update({"status": response.status_code, "host": url.host,
                            "path": url.path,
                            "content_type": response.headers.get("content-type", "")})
        raise
