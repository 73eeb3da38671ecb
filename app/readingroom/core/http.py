"""The one async HTTP client every upstream uses, with politeness built in.

:class:`HttpClient` paces requests per host (a minimum interval between request starts,
optionally strictly one at a time), honours ``Retry-After`` on HTTP 429, and turns every
failure into a typed :class:`~readingroom.core.errors.CoreError`. A 429 that outlasts the retry
budget raises :class:`RateLimitedError`; it is never returned as if it were data.

Search terms travel in the query string, so no message, detail or log line written here
contains a query string or a response body: URLs are reported as ``scheme://host/path``.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from types import TracebackType
from typing import Any, Self

import anyio
import httpx

from .clock import Clock, SystemClock
from .errors import Code, CoreError

__all__ = [
    "HttpClient",
    "Politeness",
    "RateLimitedError",
    "UpstreamHttpError",
    "UpstreamTransportError",
]

# httpx logs every request at INFO with its full URL, query string included, and the search
# term is in the query string; httpcore's lower levels echo the same. Keep both quiet unless
# something is wrong, whatever level the embedding application configures.
logging.getLogger("httpx").setLevel(logging.WARNING)
logging.getLogger("httpcore").setLevel(logging.WARNING)

_DEFAULT_PORTS = {"http": 80, "https": 443}


class RateLimitedError(CoreError):
    """The upstream answered HTTP 429 on every attempt the retry budget allowed."""

    def __init__(self, message: str, *, details: dict[str, Any] | None = None) -> None:
        super().__init__(
            Code.RATE_LIMITED,
            message,
            details=details,
            remediation="Wait a minute before searching again. The result is unknown, not empty.",
        )


class UpstreamTransportError(CoreError):
    """The upstream could not be reached, timed out, or failed with HTTP 5xx."""

    def __init__(self, message: str, *, details: dict[str, Any] | None = None) -> None:
        super().__init__(
            Code.TRANSPORT_ERROR,
            message,
            details=details,
            remediation="Try again later. The result is unknown, not empty.",
        )


class UpstreamHttpError(CoreError):
    """The upstream refused the request with a non-2xx status other than 429 or 5xx."""

    def __init__(self, message: str, *, details: dict[str, Any] | None = None) -> None:
        super().__init__(
            Code.API_ERROR,
            message,
            details=details,
            remediation="The request was refused; retrying it unchanged will not help.",
        )


@dataclass(frozen=True)
class Politeness:
    """How an :class:`HttpClient` treats each host it talks to.

    Attributes:
        min_interval: seconds between request starts to the same host (monotonic clock).
        serial: True holds one lock per host across the wait, the request and its retries, so
            requests run strictly one at a time; False uses the lock only to claim the next
            start slot and runs the request outside it.
        max_retries: retries after HTTP 429 (or another status in ``retry_statuses`` that
            carries ``Retry-After``).
        default_backoff: seconds to wait after a 429 without a usable ``Retry-After``.
        max_backoff: cap on any backoff, however long ``Retry-After`` asks for.
        retry_statuses: statuses that may be retried; 429 always is when listed, others
            only when the response carries ``Retry-After``.

    Raises:
        ValueError: if ``min_interval`` or ``max_retries`` is negative.
    """

    min_interval: float
    serial: bool
    max_retries: int = 1
    default_backoff: float = 10.0
    max_backoff: float = 30.0
    retry_statuses: frozenset[int] = frozenset({429})

    def __post_init__(self) -> None:
        if not self.min_interval >= 0:
            raise ValueError(f"min_interval must be >= 0, got {self.min_interval!r}")
        if self.max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {self.max_retries!r}")


@dataclass
class _HostState:
    """Pacing state of one host: the lock and when the last request started."""

    lock: anyio.Lock = field(default_factory=anyio.Lock)
    last_start: float | None = None


class HttpClient:
    """A polite async HTTP client: per-host pacing, Retry-After, typed errors.

    One client may serve several hosts; each host (``host:port``) is paced on its own.

    Args:
        politeness: pacing and retry rules, applied to every host.
        timeout: seconds for each of connect, read, write and pool.
        user_agent: the ``User-Agent`` header sent with every request.
        transport: an httpx transport to send through (tests pass ``httpx.MockTransport``).
        clock: the time source for pacing and backoff; defaults to :class:`SystemClock`.
        headers: further headers sent with every request.
    """

    def __init__(
        self,
        *,
        politeness: Politeness,
        timeout: float = 30.0,
        user_agent: str,
        transport: httpx.AsyncBaseTransport | None = None,
        clock: Clock | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.politeness = politeness
        self._clock: Clock = clock if clock is not None else SystemClock()
        self._hosts: dict[str, _HostState] = {}
        self._client_options: dict[str, Any] = {
            "headers": {**(headers or {}), "User-Agent": user_agent},
            "timeout": httpx.Timeout(timeout),
            "transport": transport,
            # A followed redirect would be a second request that bypasses pacing.
            "follow_redirects": False,
        }
        self._client_instance: httpx.AsyncClient | None = None
        self._closed = False

    @property
    def _client(self) -> httpx.AsyncClient:
        # Built on first use: creating the TLS context costs tens of milliseconds, which a
        # server would otherwise pay before it can answer `initialize`.
        if self._closed:
            raise RuntimeError("HttpClient is closed")
        if self._client_instance is None:
            self._client_instance = httpx.AsyncClient(**self._client_options)
        return self._client_instance

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the underlying connection pool."""
        self._closed = True
        if self._client_instance is not None:
            await self._client_instance.aclose()
            self._client_instance = None

    async def get(self, url: str, params: Mapping[str, str] | None = None) -> httpx.Response:
        """GET ``url`` politely and return the 2xx response; its body is the caller's to parse.

        Args:
            url: the absolute URL; may already carry a query string.
            params: query parameters added to the URL.

        Returns:
            The response, whose status is 2xx.

        Raises:
            RateLimitedError: HTTP 429 persisted through every retry.
            UpstreamTransportError: connection error, timeout or HTTP 5xx.
            UpstreamHttpError: any other non-2xx status.
        """
        target = httpx.URL(url)
        if params:
            # Merged by hand: httpx 0.28 replaces a URL's own query string with `params`.
            target = target.copy_merge_params(params)
        request = self._client.build_request("GET", target)
        state = self._hosts.setdefault(_host_key(request.url), _HostState())
        if self.politeness.serial:
            async with state.lock:
                return await self._fetch(request, state, hold_lock=True)
        return await self._fetch(request, state, hold_lock=False)

    async def _fetch(
        self, request: httpx.Request, state: _HostState, *, hold_lock: bool
    ) -> httpx.Response:
        """Send ``request`` with pacing and retries; map the outcome to a response or error."""
        rules = self.politeness
        not_before = -math.inf
        asked: float | None = None
        attempts = 0
        while True:
            if hold_lock:
                await self._wait_for_slot(state, not_before)
            else:
                # Back off outside the lock: other requests to the host keep their slots.
                await self._sleep_until(not_before)
                async with state.lock:
                    await self._wait_for_slot(state, not_before)
            attempts += 1
            response = await self._send(request)
            if not _is_retryable(response, rules):
                break
            asked = _parse_retry_after(response.headers.get("Retry-After"), self._clock.now())
            if attempts > rules.max_retries:
                break
            backoff = rules.default_backoff if asked is None else asked
            not_before = self._clock.monotonic() + min(backoff, rules.max_backoff)
        return self._checked(response, attempts=attempts, asked=asked)

    async def _sleep_until(self, deadline: float) -> None:
        """Sleep until the monotonic clock reads at least ``deadline``."""
        while (delay := deadline - self._clock.monotonic()) > 0:
            await self._clock.sleep(delay)

    async def _wait_for_slot(self, state: _HostState, not_before: float) -> None:
        """Wait for the host's next start slot (and ``not_before``); claim it. Lock held."""
        deadline = not_before
        if state.last_start is not None:
            deadline = max(deadline, state.last_start + self.politeness.min_interval)
        # A loop, not one sleep: a real timer may fire a clock tick early.
        await self._sleep_until(deadline)
        state.last_start = self._clock.monotonic()

    async def _send(self, request: httpx.Request) -> httpx.Response:
        """Send one attempt; a transport failure becomes :class:`UpstreamTransportError`."""
        try:
            return await self._client.send(request)
        except httpx.RequestError as exc:
            safe = _safe_url(request.url)
            # `from None`: the httpx exception carries the full URL, query string included.
            raise UpstreamTransportError(
                f"The request to {safe} failed: {type(exc).__name__}.",
                details={
                    "error": type(exc).__name__,
                    "host": request.url.host,
                    "path": request.url.path,
                },
            ) from None

    def _checked(
        self, response: httpx.Response, *, attempts: int, asked: float | None
    ) -> httpx.Response:
        """Return a 2xx response; raise the typed error for any other status."""
        status = response.status_code
        if 200 <= status < 300:
            return response
        url = response.request.url
        safe = _safe_url(url)
        if status == 429:
            raise RateLimitedError(
                f"{url.host} refused the request for load (HTTP 429) "
                f"after {attempts} attempt{'s' if attempts != 1 else ''}.",
                details={
                    "status": status,
                    "retry_after": asked,
                    "attempts": attempts,
                    "host": url.host,
                },
            )
        details = {"status": status, "host": url.host, "path": url.path}
        if status >= 500:
            raise UpstreamTransportError(f"{safe} failed with HTTP {status}.", details=details)
        raise UpstreamHttpError(f"{safe} answered HTTP {status}.", details=details)


def _host_key(url: httpx.URL) -> str:
    """``host:port`` of ``url``, with the scheme's default port filled in."""
    port = url.port if url.port is not None else _DEFAULT_PORTS.get(url.scheme, 0)
    return f"{url.host}:{port}"


def _safe_url(url: httpx.URL) -> str:
    """``scheme://host[:port]/path`` of ``url``: no userinfo, query string or fragment."""
    port = f":{url.port}" if url.port is not None else ""
    return f"{url.scheme}://{url.host}{port}{url.path}"


def _is_retryable(response: httpx.Response, rules: Politeness) -> bool:
    """Whether this response's status may be retried under ``rules``."""
    status = response.status_code
    if status not in rules.retry_statuses:
        return False
    return status == 429 or "Retry-After" in response.headers


def _parse_retry_after(value: str | None, now: datetime) -> float | None:
    """Seconds a ``Retry-After`` value asks for; None when absent, negative or unreadable.

    Both forms are read: delta-seconds and an HTTP-date (relative to ``now``). A date in the
    past counts as unreadable, so the caller falls back to its default backoff.
    """
    if value is None:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - now).total_seconds()
    if math.isnan(seconds) or seconds < 0:
        return None
    return seconds
