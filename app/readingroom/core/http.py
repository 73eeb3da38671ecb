"""The one async HTTP client every upstream uses, with politeness built in.

:class:`HttpClient` paces requests per host, optionally strictly one at a time, honours
``Retry-After`` on HTTP 429, and turns every failure into a typed
:class:`~readingroom.core.errors.CoreError`. A 429 that outlasts the retry budget raises
:class:`RateLimitedError`; it is never returned as if it were data. :meth:`HttpClient.get_json`
and :meth:`HttpClient.post_json` add a typed :class:`UpstreamBodyError` for a body that is not
JSON.

Bodies are streamed and capped while they arrive (:data:`MAX_BODY_BYTES` unless the client is
given another cap): reading stops at the cap and the call fails with ``API_ERROR``, so an
upstream that never stops sending costs at most the cap in memory, never the whole stream. A
declared ``Content-Length`` above the cap is refused before any of the body is read. The body
of a refused (non-2xx) answer is never read: nothing uses it.

Content encodings are decoded here, not by httpx: the client asks for
:data:`ACCEPT_ENCODING` (``gzip, deflate``), reads the raw stream and inflates one layer of
either through a decompressor whose every step yields at most :data:`_DECODE_STEP` bytes, so
the cap holds on the decoded size however small the compressed body. A stacked encoding
(``gzip, gzip``) or one it did not ask for is refused before a byte is decoded (``API_ERROR``,
reason ``unsupported_encoding``): httpx would inflate a stacked one with no output limit on the
inner layer, and no upstream of the suite stacks them.

Search terms travel in the query string and credentials in headers or the query string, so no
message, detail or log line written here contains a query string, a header value or a response
body: URLs are reported as ``scheme://host/path``. Where a caller must show the headers it sent
(a receipt, a debug dump), :func:`redact_headers` masks them with the same marker and the same
names :func:`readingroom.core.redaction.redact` uses for query parameters.
"""

from __future__ import annotations

import functools
import logging
import math
import ssl
import zlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from types import TracebackType
from typing import Any, Protocol, Self

import anyio
import httpx

from .bounds import json_values, load_json
from .clock import Clock, SystemClock
from .errors import Code, CoreError, FixedError
from .redaction import DEFAULT_SECRET_NAMES, redact

__all__ = [
    "ACCEPT_ENCODING",
    "INFLATE_RATIO_FLOOR",
    "MAX_BODY_BYTES",
    "MAX_INFLATE_RATIO",
    "MAX_JSON_VALUES",
    "SECRET_HEADER_NAMES",
    "HeaderValue",
    "HttpClient",
    "Politeness",
    "RateLimitedError",
    "Revealable",
    "UpstreamBodyError",
    "UpstreamError",
    "UpstreamHttpError",
    "UpstreamTransportError",
    "redact_headers",
    "shared_tls_context",
]

log = logging.getLogger(__name__)

# httpx logs every request at INFO with its full URL, query string included, and the search
# term is in the query string; httpcore's lower levels echo the same. Keep both quiet unless
# something is wrong, whatever level the embedding application configures.
logging.getLogger("httpx").setLevel(logging.WARNING)
logging.getLogger("httpcore").setLevel(logging.WARNING)

_DEFAULT_PORTS = {"http": 80, "https": 443}

MAX_BODY_BYTES = 20 * 1024 * 1024
"""The largest response body a client reads, in bytes (after content decoding); the same
20 MiB that :mod:`readingroom.core.xmlsafe` parses at most."""

ACCEPT_ENCODING = "gzip, deflate"
"""The content codings every request accepts: those :class:`HttpClient` decodes within its cap.
Named explicitly so that installing a brotli or zstd package (which httpx would then advertise)
never makes an upstream send a coding this client refuses."""

_DECODE_STEP = 64 * 1024
"""The most one decompression step may produce: a bomb is stopped at the cap plus this."""
MAX_INFLATE_RATIO = 100
"""Past :data:`INFLATE_RATIO_FLOOR` decoded bytes, a compressed body may decode to at most this
many times the bytes received (the rule Apache POI applies to ZIP entries): XML and JSON
compress 5-20 times, a compression bomb about 1,000 times. Several concurrent bombs then cost
a megabyte each instead of the cap each."""
MAX_JSON_VALUES = 500_000
"""The most values (arrays, objects and the items a comma separates) a JSON body may hold.
``json.loads`` holds the interpreter lock for the whole parse, so a server answers nothing else
meanwhile: a 19 MiB body of tiny containers took 6 s and 420 MB. The largest real page of the
suite's upstreams holds about 1,500; this bound keeps the worst parse well under a second."""
INFLATE_RATIO_FLOOR = 1024 * 1024
"""Decoded bytes below which the ratio is not checked (small bodies compress unevenly)."""
_IDENTITY = "identity"
_GZIP = frozenset({"gzip", "x-gzip"})
_DEFLATE = "deflate"

SECRET_HEADER_NAMES: frozenset[str] = DEFAULT_SECRET_NAMES | frozenset(
    {
        "proxy-authorization",
        "cookie",
        "x-api-key",
        "api-key",
        "x-auth-token",
        "x-access-token",
    }
)
"""Header names whose values :func:`redact_headers` masks (compared case-insensitively): the
query-parameter names of :data:`readingroom.core.redaction.DEFAULT_SECRET_NAMES` plus the usual
credential headers."""


@functools.cache
def shared_tls_context() -> ssl.SSLContext:
    """The process's one TLS context (certificate checks as httpx's default, built once).

    Building one loads the whole CA bundle, tens of milliseconds each time; every client of a
    server shares this one (a context is safe to share between connections and threads).
    ``SSL_CERT_FILE``/``SSL_CERT_DIR`` are read when it is first built, as httpx reads them.
    """
    return httpx.create_ssl_context()


class Revealable(Protocol):
    """A secret that shows its text only when asked, like ``core.secrets.SecretValue``."""

    def reveal(self) -> str:
        """The secret itself."""
        ...


HeaderValue = str | Revealable


class UpstreamError(FixedError):
    """A typed failure of an upstream exchange: each subclass fixes its code and remediation."""


class RateLimitedError(UpstreamError):
    """The upstream answered HTTP 429 on every attempt the retry budget allowed."""

    error_code = Code.RATE_LIMITED
    remediation_text = "Wait a minute before searching again. The result is unknown, not empty."


class UpstreamTransportError(UpstreamError):
    """The upstream could not be reached, timed out, or failed with HTTP 5xx."""

    error_code = Code.TRANSPORT_ERROR
    remediation_text = "Try again later. The result is unknown, not empty."


class UpstreamHttpError(UpstreamError):
    """The upstream refused the request with a non-2xx status other than 429 or 5xx."""

    error_code = Code.API_ERROR
    remediation_text = "The request was refused; retrying it unchanged will not help."


class UpstreamBodyError(UpstreamError):
    """The upstream answered 2xx, but with a body that is not the JSON that was asked for."""

    error_code = Code.API_ERROR
    remediation_text = ("The service may be misbehaving or under maintenance; try again later. "
                        "The result is unknown, not empty.")


@dataclass(frozen=True)
class Politeness:
    """How an :class:`HttpClient` treats each host it talks to.

    Attributes:
        min_interval: the courtesy floor in seconds (monotonic clock). Serial mode keeps it
            from the *end* of the previous exchange to the host (its response fully read, or
            its failure) to the next start, so the upstream, which answers only after it has
            received a request, sees every arrival at least this long after its last answer,
            whatever the exchange or the network cost. Non-serial mode, where exchanges
            overlap and there is no single "previous end", keeps it between request starts.
        serial: True holds one lock per host across the wait, the request and its retries, so
            requests run strictly one at a time; False uses the lock only to claim the next
            start slot and runs the request outside it.
        max_retries: retries after HTTP 429 (or another status in ``retry_statuses`` that
            carries ``Retry-After``); every retry keeps the floor too.
        default_backoff: seconds to wait after a 429 without a usable ``Retry-After``.
        max_backoff: cap on any backoff, however long ``Retry-After`` asks for.
        retry_statuses: statuses that may be retried; 429 always is when listed, others
            only when the response carries ``Retry-After`` (unless ``retry_bare_statuses``).
        retry_bare_statuses: retry the listed statuses (408, 5xx…) without ``Retry-After``.
        retry_transport_errors: retry a failed exchange (connection error, timeout) too.
        backoff_factor: the backoff without ``Retry-After`` grows by this factor per retry
            (``default_backoff * factor ** (retry - 1)``, capped); 1.0 keeps it flat.

    Raises:
        ValueError: if ``min_interval`` or ``max_retries`` is negative.
    """

    min_interval: float
    serial: bool
    max_retries: int = 1
    default_backoff: float = 10.0
    max_backoff: float = 30.0
    retry_statuses: frozenset[int] = frozenset({429})
    retry_bare_statuses: bool = False
    retry_transport_errors: bool = False
    backoff_factor: float = 1.0

    def __post_init__(self) -> None:
        if not self.min_interval >= 0:
            raise ValueError(f"min_interval must be >= 0, got {self.min_interval!r}")
        if self.max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {self.max_retries!r}")
        if not self.backoff_factor >= 1.0:
            raise ValueError(f"backoff_factor must be >= 1, got {self.backoff_factor!r}")

    def backoff(self, retry: int) -> float:
        """Seconds to wait before retry number ``retry`` (1-based) when nothing says how long."""
        return min(self.default_backoff * self.backoff_factor ** (retry - 1), self.max_backoff)


@dataclass
class _HostState:
    """Pacing state of one host: the lock, when the last request started and last ended."""

    lock: anyio.Lock = field(default_factory=anyio.Lock)
    last_start: float | None = None
    last_end: float | None = None


def redact_headers(
    headers: Mapping[str, HeaderValue] | httpx.Headers,
    secret_names: Iterable[str] = SECRET_HEADER_NAMES,
) -> dict[str, str]:
    """A copy of ``headers`` fit to show: secret-named and :class:`Revealable` values masked.

    The marker and the comparison are those of :func:`readingroom.core.redaction.redact`, so a
    credential looks the same whether it travelled in a header or in the query string.

    Args:
        headers: header names and values.
        secret_names: header names to mask, compared case-insensitively.
    """
    names = {name.lower() for name in secret_names}
    revealable = {k.lower() for k, v in headers.items() if not isinstance(v, str)}
    shown = redact({k: v for k, v in headers.items()}, names | revealable)
    return {k: str(v) for k, v in shown.items()}


class HttpClient:
    """A polite async HTTP client: per-host pacing, Retry-After, typed errors.

    One client may serve several hosts; each host (``host:port``) is paced on its own, so a
    client shared by several providers lets them run side by side (see
    :func:`readingroom.core.fanout.fan_out`).

    Args:
        politeness: pacing and retry rules, applied to every host.
        timeout: seconds for each of connect, read, write and pool.
        user_agent: the ``User-Agent`` header sent with every request.
        transport: an httpx transport to send through (tests pass ``httpx.MockTransport``).
        clock: the time source for pacing and backoff; defaults to :class:`SystemClock`.
        headers: further headers sent with every request; a :class:`Revealable` value is
            revealed only into the request itself.
        max_body_bytes: the largest body read; a larger one stops reading at this many bytes
            and raises :class:`UpstreamBodyError` (``API_ERROR``, reason ``too_large``).

    Raises:
        ValueError: ``max_body_bytes`` is below 1.
    """

    def __init__(
        self,
        *,
        politeness: Politeness,
        timeout: float = 30.0,
        user_agent: str,
        transport: httpx.AsyncBaseTransport | None = None,
        clock: Clock | None = None,
        headers: Mapping[str, HeaderValue] | None = None,
        max_body_bytes: int = MAX_BODY_BYTES,
    ) -> None:
        if max_body_bytes < 1:
            raise ValueError(f"max_body_bytes must be >= 1, got {max_body_bytes!r}")
        self.politeness = politeness
        self.max_body_bytes = max_body_bytes
        self._clock: Clock = clock if clock is not None else SystemClock()
        self._hosts: dict[str, _HostState] = {}
        self._headers: dict[str, HeaderValue] = {
            "Accept-Encoding": ACCEPT_ENCODING, **(headers or {}), "User-Agent": user_agent,
        }
        self._client_options: dict[str, Any] = {
            "timeout": httpx.Timeout(timeout),
            "transport": transport,
            # A followed redirect would be a second request that bypasses pacing.
            "follow_redirects": False,
        }
        self._client_instance: httpx.AsyncClient | None = None
        self._closed = False

    def __repr__(self) -> str:
        return f"HttpClient(politeness={self.politeness!r}, hosts={sorted(self._hosts)!r})"

    @property
    def _client(self) -> httpx.AsyncClient:
        # Built on first use, over the process's one TLS context: building a context costs
        # tens of milliseconds, which a server would otherwise pay before `initialize` and
        # again for every client (and every proxy mount of one).
        if self._closed:
            raise RuntimeError("HttpClient is closed")
        if self._client_instance is None:
            self._client_instance = httpx.AsyncClient(verify=shared_tls_context(),
                                                      **self._client_options)
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

    async def get(
        self,
        url: str,
        params: Mapping[str, str] | None = None,
        *,
        headers: Mapping[str, HeaderValue] | None = None,
    ) -> httpx.Response:
        """GET ``url`` politely and return the 2xx response; its body is the caller's to parse.

        Args:
            url: the absolute URL; may already carry a query string.
            params: query parameters added to the URL.
            headers: headers for this request only (added to the client's).

        Returns:
            The response, whose status is 2xx.

        Raises:
            RateLimitedError: HTTP 429 persisted through every retry.
            UpstreamTransportError: connection error, timeout or HTTP 5xx.
            UpstreamHttpError: any other non-2xx status.
            UpstreamBodyError: the body is larger than ``max_body_bytes`` (API_ERROR).
            CoreError: INVALID_INPUT when a header value cannot be sent (nothing was sent).
        """
        return await self.request("GET", url, params=params, headers=headers)

    async def get_json(
        self,
        url: str,
        params: Mapping[str, str] | None = None,
        *,
        headers: Mapping[str, HeaderValue] | None = None,
    ) -> Any:
        """GET ``url`` politely and return its body parsed as JSON.

        Sends ``Accept: application/json`` unless ``headers`` say otherwise.

        Raises:
            UpstreamBodyError: the 2xx body is not UTF-8 JSON (API_ERROR).
            RateLimitedError, UpstreamTransportError, UpstreamHttpError: as :meth:`get`.
        """
        response = await self.request("GET", url, params=params, headers=_accept_json(headers))
        return _parse_json(response)

    async def post(
        self,
        url: str,
        *,
        params: Mapping[str, str] | None = None,
        headers: Mapping[str, HeaderValue] | None = None,
        json: Any = None,
        data: Mapping[str, str] | None = None,
        content: bytes | None = None,
    ) -> httpx.Response:
        """POST to ``url`` politely and return the 2xx response.

        Give at most one body: ``json`` (serialised as UTF-8 JSON), ``data`` (form-encoded) or
        ``content`` (raw bytes). A 429 is retried like a GET's: the upstream refused the
        request, so it did nothing with it.

        Raises:
            ValueError: more than one body was given.
            RateLimitedError, UpstreamTransportError, UpstreamHttpError: as :meth:`get`.
        """
        bodies = [b for b in (json, data, content) if b is not None]
        if len(bodies) > 1:
            raise ValueError("give at most one of json, data and content")
        return await self.request(
            "POST", url, params=params, headers=headers, json=json, data=data, content=content
        )

    async def post_json(
        self,
        url: str,
        *,
        params: Mapping[str, str] | None = None,
        headers: Mapping[str, HeaderValue] | None = None,
        json: Any = None,
        data: Mapping[str, str] | None = None,
        content: bytes | None = None,
    ) -> Any:
        """POST as :meth:`post` and return the response body parsed as JSON.

        Raises:
            UpstreamBodyError: the 2xx body is not UTF-8 JSON (API_ERROR).
            RateLimitedError, UpstreamTransportError, UpstreamHttpError: as :meth:`get`.
        """
        response = await self.post(
            url, params=params, headers=_accept_json(headers), json=json, data=data,
            content=content,
        )
        return _parse_json(response)

    async def request(
        self,
        method: str,
        url: str,
        *,
        params: Mapping[str, str] | None = None,
        headers: Mapping[str, HeaderValue] | None = None,
        json: Any = None,
        data: Mapping[str, str] | None = None,
        content: bytes | None = None,
    ) -> httpx.Response:
        """Send one request politely (pacing, retries, typed errors); the verbs call this.

        Returns:
            The response, whose status is 2xx and whose body has been read.

        Raises:
            RateLimitedError, UpstreamTransportError, UpstreamHttpError: as :meth:`get`.
            CoreError: INVALID_INPUT when a header value cannot be sent (nothing was sent).
        """
        target = _usable_url(url)
        if params:
            # Merged by hand: httpx 0.28 replaces a URL's own query string with `params`.
            target = target.copy_merge_params(params)
        request = self._build(method, target, headers, json=json, data=data, content=content)
        state = self._hosts.setdefault(_host_key(request.url), _HostState())
        if self.politeness.serial:
            async with state.lock:
                return await self._fetch(request, state, hold_lock=True)
        return await self._fetch(request, state, hold_lock=False)

    def _build(
        self,
        method: str,
        url: httpx.URL,
        extra: Mapping[str, HeaderValue] | None,
        **body: Any,
    ) -> httpx.Request:
        """The request with every header revealed; an unsendable value names only its header."""
        merged = {**self._headers, **(extra or {})}
        revealed: dict[str, str] = {}
        for name, value in merged.items():
            text = value if isinstance(value, str) else value.reveal()
            # CR, LF or NUL would split or end the header line; the wire would refuse it later
            # with an exception that quotes the value.
            if any(c in text for c in "\r\n\0") or not text.isascii():
                raise CoreError(
                    Code.INVALID_INPUT,
                    f"The value of the request header {name!r} cannot be sent "
                    "(a line break, NUL or non-ASCII character); nothing was sent.",
                    details={"header": name, "host": url.host},
                    remediation="Check the stored credential or setting for stray characters.",
                )
            revealed[name] = text
        return self._client.build_request(method, url, headers=revealed, **body)

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
            began = self._clock.monotonic()
            try:
                response = await self._send(request)
            except UpstreamTransportError:
                if not rules.retry_transport_errors or attempts > rules.max_retries:
                    raise
                not_before = self._clock.monotonic() + rules.backoff(attempts)
                continue
            finally:
                # A failed or cancelled exchange ends too: the floor counts from here.
                state.last_end = self._clock.monotonic()
            log.debug(
                "%s %s -> HTTP %d in %.3f s (attempt %d)",
                request.method, _safe_url(request.url), response.status_code,
                state.last_end - began, attempts,
            )
            if not _is_retryable(response, rules):
                break
            asked = _parse_retry_after(response.headers.get("Retry-After"), self._clock.now())
            if attempts > rules.max_retries:
                break
            backoff = rules.backoff(attempts) if asked is None else asked
            not_before = self._clock.monotonic() + min(backoff, rules.max_backoff)
        return self._checked(response, attempts=attempts, asked=asked)

    async def _sleep_until(self, deadline: float) -> None:
        """Sleep until the monotonic clock reads at least ``deadline``."""
        while (delay := deadline - self._clock.monotonic()) > 0:
            await self._clock.sleep(delay)

    async def _wait_for_slot(self, state: _HostState, not_before: float) -> None:
        """Wait for the host's next start slot (and ``not_before``); claim it. Lock held."""
        deadline = not_before
        since = state.last_end if self.politeness.serial else state.last_start
        if since is not None:
            deadline = max(deadline, since + self.politeness.min_interval)
        # A loop, not one sleep: a real timer may fire a clock tick early.
        await self._sleep_until(deadline)
        state.last_start = self._clock.monotonic()

    async def _send(self, request: httpx.Request) -> httpx.Response:
        """Send one attempt and read its body within the cap; map failures to typed errors."""
        try:
            response = await self._client.send(request, stream=True)
        except httpx.RequestError as exc:
            raise _transport_error(request, exc) from None
        except OverflowError:  # a port past 65535 that slipped through: not a defect
            raise _bad_url(str(request.url), "its port is out of range") from None
        try:
            if 200 <= response.status_code < 300:
                await self._read_capped(response)
        except httpx.RequestError as exc:
            raise _transport_error(request, exc) from None
        finally:
            # Shielded: a deadline that cancels the read must still free the connection.
            with anyio.CancelScope(shield=True):
                await response.aclose()
        return response

    async def _read_capped(self, response: httpx.Response) -> None:
        """Read and decode the body into ``response`` (as ``aread`` does), stopping at the cap.

        The raw stream is read and decoded here, one bounded step at a time, so the cap
        counts decoded bytes as they are produced, never after a whole chunk has inflated.
        """
        cap = self.max_body_bytes
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > cap:
            raise _too_large(response, cap)
        if hasattr(response, "_content"):
            # Built in memory by the transport (httpx.MockTransport): nothing streams.
            if len(response.content) > cap:
                raise _too_large(response, cap)
            return
        decoder = _decoder_for(response)
        chunks: list[bytes] = []
        size = received = 0
        try:
            async for raw in response.aiter_raw():
                received += len(raw)
                for piece in decoder.feed(raw):
                    size += len(piece)
                    if size > cap:
                        raise _too_large(response, cap)
                    if decoder.compressed and size > INFLATE_RATIO_FLOOR and (
                            size > MAX_INFLATE_RATIO * received):
                        raise _too_large(response, cap, inflated=(size, received))
                    chunks.append(piece)
        except zlib.error:
            raise _undecodable(response) from None
        # httpx has no public capped read; this is what its own aread() stores.
        response._content = b"".join(chunks)

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
        details: dict[str, Any] = {"status": status, "host": url.host, "path": url.path}
        if asked is not None:
            # A 503 may say when to come back too; a caller that retries itself needs it.
            details["retry_after"] = asked
        if status >= 500:
            raise UpstreamTransportError(f"{safe} failed with HTTP {status}.", details=details)
        raise UpstreamHttpError(f"{safe} answered HTTP {status}.", details=details)


_FAILURES: tuple[tuple[type[httpx.RequestError], str], ...] = (
    (httpx.ConnectTimeout, "the connection was not accepted in time"),
    (httpx.ReadTimeout, "no answer came in time"),
    (httpx.WriteTimeout, "the request could not be sent in time"),
    (httpx.PoolTimeout, "no connection was free in time"),
    (httpx.ConnectError, "the connection was refused or the host could not be reached"),
    (httpx.ReadError, "the connection broke while the answer was read"),
    (httpx.WriteError, "the connection broke while the request was sent"),
    (httpx.RemoteProtocolError, "the server broke the HTTP protocol (or closed the connection "
                                "without an answer)"),
    (httpx.DecodingError, "the answer could not be decoded"),
    (httpx.UnsupportedProtocol, "the URL's scheme is not http or https"),
)


def _transport_error(request: httpx.Request, exc: httpx.RequestError) -> UpstreamTransportError:
    """The typed error for a failed exchange, in words; the httpx exception (full URL) is not
    kept. It names the host and port contacted, the port filled in when the URL gave none."""
    url = request.url
    what = next((words for kind, words in _FAILURES if isinstance(exc, kind)),
                f"it failed ({type(exc).__name__})")
    port = url.port if url.port is not None else _DEFAULT_PORTS.get(url.scheme)
    where = f"{url.host}:{port}" if port else url.host
    note = "" if url.port is not None or port is None else (
        f" (the URL gives no port, so {url.scheme}'s default {port} was used)")
    return UpstreamTransportError(
        f"The request to {_safe_url(url)} failed: {what}, at {where}{note}.",
        details={"error": type(exc).__name__, "host": url.host, "port": port,
                 "path": url.path},
    )


def _bad_url(url: str, why: str) -> CoreError:
    """The typed error for an upstream URL that cannot be used (a setting, not the network)."""
    shown = url.split("?", 1)[0].split("#", 1)[0]
    if "@" in shown:  # never show userinfo
        scheme, _, rest = shown.partition("://")
        shown = f"{scheme}://{rest.rpartition('@')[2]}"
    return CoreError(
        Code.TRANSPORT_ERROR,
        f"The upstream URL {shown[:200]!r} cannot be used: {why}. Nothing was sent.",
        details={"reason": "bad_url"},
        remediation="Check the setting that names this URL (the server's *_URL environment "
        "variable): it needs http:// or https://, a host and, if any, a port from 1 to 65535.",
    )


def _usable_url(url: str) -> httpx.URL:
    """``url`` parsed, or :func:`_bad_url` saying what is wrong with it."""
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL as exc:
        text = str(exc)
        why = ("its port is not a number from 1 to 65535" if "port" in text.lower()
               else "it is not a valid URL")
        raise _bad_url(url, why) from None
    if parsed.scheme not in _DEFAULT_PORTS:
        why = ("it has no scheme (start it with http:// or https://)" if "://" not in url
               else f"its scheme {parsed.scheme[:20]!r} is not http or https")
        raise _bad_url(url, why)
    if not parsed.host:
        raise _bad_url(url, "it names no host")
    if parsed.port is not None and not 0 < parsed.port < 65536:
        raise _bad_url(url, "its port is not a number from 1 to 65535")
    return parsed


def _too_large(
    response: httpx.Response, cap: int, *, inflated: tuple[int, int] | None = None
) -> UpstreamBodyError:
    """The typed error for a body past the cap, or inflating past the ratio (reading stopped)."""
    url = response.request.url
    details: dict[str, Any] = {
        "status": response.status_code,
        "host": url.host,
        "path": url.path,
        "content_type": response.headers.get("content-type", "")[:100],
        "reason": "too_large",
        "max_bytes": cap,
    }
    if inflated is None:
        message = (f"{_safe_url(url)} answered HTTP {response.status_code} with a body larger "
                   f"than the {cap} bytes this server reads; reading stopped there.")
    else:
        decoded, received = inflated
        details.update(decoded_bytes=decoded, received_bytes=received,
                       max_inflate_ratio=MAX_INFLATE_RATIO)
        message = (f"{_safe_url(url)} answered HTTP {response.status_code} with a compressed "
                   f"body that inflates more than {MAX_INFLATE_RATIO} times ({received} bytes "
                   f"received became over {decoded}): a compression bomb, not a document; "
                   "reading stopped there.")
    return UpstreamBodyError(message, details=details)


class _Identity:
    """The decoder of an unencoded body: bytes pass through."""

    compressed = False

    def feed(self, data: bytes) -> Iterator[bytes]:
        if data:
            yield data


class _Bounded:
    """One layer of gzip or deflate, inflated in steps of at most :data:`_DECODE_STEP` bytes.

    ``deflate`` is the zlib format by the standard, but some servers send raw deflate; as httpx
    does, a first chunk that is not zlib is read as raw deflate. Data after the end of the
    compressed stream is ignored, as httpx ignores it.
    """

    compressed = True

    def __init__(self, wbits: int, *, raw_fallback: bool = False) -> None:
        self._inflate = zlib.decompressobj(wbits)
        self._fallback = raw_fallback
        self._started = False

    def feed(self, data: bytes) -> Iterator[bytes]:
        if not self._started and data:
            self._started = True
            if self._fallback:
                try:
                    zlib.decompressobj(zlib.MAX_WBITS).decompress(data[:_DECODE_STEP], 1)
                except zlib.error:
                    self._inflate = zlib.decompressobj(-zlib.MAX_WBITS)
        while data and not self._inflate.eof:
            piece = self._inflate.decompress(data, _DECODE_STEP)
            data = self._inflate.unconsumed_tail
            if piece:
                yield piece
            elif not data:
                break
        # Output still held back when the last step filled its limit with input used up.
        while not self._inflate.eof:
            piece = self._inflate.decompress(b"", _DECODE_STEP)
            if not piece:
                break
            yield piece


def _codings(response: httpx.Response) -> list[str]:
    """The content codings applied to the body, in the order applied (``identity`` left out)."""
    values = response.headers.get_list("content-encoding", split_commas=True)
    return [v.strip().lower() for v in values if v.strip() and v.strip().lower() != _IDENTITY]


def _decoder_for(response: httpx.Response) -> _Identity | _Bounded:
    """The bounded decoder of ``response``'s body; refuses what it must not decode."""
    codings = _codings(response)
    if not codings:
        return _Identity()
    if len(codings) == 1 and codings[0] in _GZIP:
        return _Bounded(zlib.MAX_WBITS | 16)
    if len(codings) == 1 and codings[0] == _DEFLATE:
        return _Bounded(zlib.MAX_WBITS, raw_fallback=True)
    url = response.request.url
    shown = ", ".join(c[:20] for c in codings[:4]) + (", ..." if len(codings) > 4 else "")
    why = (f"stacked content encodings ({shown})" if len(codings) > 1
           else f"a content encoding it did not ask for ({shown})")
    raise UpstreamBodyError(
        f"{_safe_url(url)} answered HTTP {response.status_code} with {why}; this server decodes "
        f"one layer of {ACCEPT_ENCODING} only, so nothing of the body was read.",
        details={
            "status": response.status_code,
            "host": url.host,
            "path": url.path,
            "content_type": response.headers.get("content-type", "")[:100],
            "content_encoding": shown,
            "reason": "unsupported_encoding",
        },
    )


def _undecodable(response: httpx.Response) -> UpstreamBodyError:
    """The typed error for a body that its declared encoding does not decode."""
    url = response.request.url
    encoding = ", ".join(_codings(response))[:60]
    return UpstreamBodyError(
        f"{_safe_url(url)} answered HTTP {response.status_code} with a body that is not valid "
        f"{encoding} data, as its Content-Encoding says it is.",
        details={
            "status": response.status_code,
            "host": url.host,
            "path": url.path,
            "content_encoding": encoding,
            "reason": "bad_encoding",
        },
    )


def _accept_json(headers: Mapping[str, HeaderValue] | None) -> dict[str, HeaderValue]:
    """``headers`` with ``Accept: application/json`` unless they name an Accept already."""
    merged = dict(headers or {})
    if not any(name.lower() == "accept" for name in merged):
        merged["Accept"] = "application/json"
    return merged


def _parse_json(response: httpx.Response) -> Any:
    """The body of a 2xx ``response`` as JSON; :class:`UpstreamBodyError` when it is not."""
    url = response.request.url
    where = f"{_safe_url(url)} answered HTTP {response.status_code} with"
    shown: dict[str, Any] = {"status": response.status_code, "host": url.host, "path": url.path}

    def too_many(values: int) -> UpstreamBodyError:
        return UpstreamBodyError(
            f"{where} a JSON body of more than {MAX_JSON_VALUES} values, far more than any "
            "page of records; it was not parsed.",
            details={**shown, "content_type": response.headers.get("content-type", "")[:100],
                     "reason": "too_many_values", "values": values,
                     "max_values": MAX_JSON_VALUES},
        )

    def unreadable(reason: str) -> UpstreamBodyError:
        return UpstreamBodyError(
            f"{where} a body that is {reason}.",
            details={**shown, "content_type": response.headers.get("content-type", ""),
                     "reason": reason},
        )

    return load_json(response.content, limit=MAX_JSON_VALUES, too_many=too_many,
                     unreadable=unreadable,
                     count=functools.partial(json_values, exact_above=MAX_JSON_VALUES))


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
    return status == 429 or rules.retry_bare_statuses or "Retry-After" in response.headers


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
