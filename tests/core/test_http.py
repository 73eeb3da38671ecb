"""HttpClient: per-host pacing, Retry-After, typed errors that never leak the query."""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from datetime import timedelta
from email.utils import format_datetime

import anyio
import httpx
import pytest

from readingroom.core import http as http_module
from readingroom.core.clock import FakeClock
from readingroom.core.errors import Code, CoreError
from readingroom.core.http import (
    MAX_BODY_BYTES,
    SECRET_HEADER_NAMES,
    HttpClient,
    Politeness,
    RateLimitedError,
    UpstreamBodyError,
    UpstreamHttpError,
    UpstreamTransportError,
    redact_headers,
)
from readingroom.core.redaction import redact

pytestmark = pytest.mark.anyio

BASE = "https://api.example.org/search"
# The search term (夏目, percent-encoded) and a secret both travel in the query string.
QUERY = "query=title%3D%E5%A4%8F%E7%9B%AE&appid=SECRET123"
LEAKS = ("SECRET123", "appid", "%E5%A4%8F", "夏目", "title=", "query=", "?")

Respond = Callable[[httpx.Request, int], httpx.Response | Awaitable[httpx.Response]]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


class Upstream:
    """A MockTransport handler that records when each request started and how many overlap.

    Args:
        clock: the fake clock whose monotonic reading stamps each call.
        respond: builds the response from the request and the 1-based call number.
        hold: seconds each call takes (slept on the fake clock), so calls can overlap.
    """

    def __init__(self, clock: FakeClock, respond: Respond | None = None, hold: float = 0.0):
        self.clock = clock
        self.respond = respond or (lambda request, n: httpx.Response(200, text="ok"))
        self.hold = hold
        self.starts: list[float] = []
        self.ends: list[float] = []
        self.requests: list[httpx.Request] = []
        self.in_flight = 0
        self.max_in_flight = 0

    async def __call__(self, request: httpx.Request) -> httpx.Response:
        self.starts.append(self.clock.monotonic())
        self.requests.append(request)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self.hold:
                await self.clock.sleep(self.hold)
            response = self.respond(request, len(self.requests))
            if not isinstance(response, httpx.Response):
                response = await response
            return response
        finally:
            self.in_flight -= 1
            self.ends.append(self.clock.monotonic())

    @property
    def paths(self) -> list[str]:
        return [request.url.path for request in self.requests]

    def gaps(self) -> list[float]:
        return [b - a for a, b in zip(self.starts, self.starts[1:], strict=False)]

    def rests(self) -> list[float]:
        """Seconds from the end of each exchange to the start of the next."""
        return [b - a for a, b in zip(self.ends, self.starts[1:], strict=False)]


def make_client(
    upstream: Upstream, clock: FakeClock, politeness: Politeness, **kwargs: object
) -> HttpClient:
    return HttpClient(
        politeness=politeness,
        user_agent="readingroom-test/1.0",
        transport=httpx.MockTransport(upstream),
        clock=clock,
        **kwargs,  # type: ignore[arg-type]
    )


def scripted(*responses: httpx.Response) -> Respond:
    """Answer the n-th call with the n-th response, and the last one from then on."""
    return lambda request, n: responses[min(n, len(responses)) - 1]


def too_many(retry_after: str | None = None) -> httpx.Response:
    headers = {} if retry_after is None else {"Retry-After": retry_after}
    return httpx.Response(429, headers=headers, text="slow down, SECRET123 夏目")


OK = httpx.Response(200, text="ok")


# --- pacing -------------------------------------------------------------------------------


@pytest.mark.parametrize("hold", [0.05, 2.5], ids=["quick-upstream", "slow-upstream"])
async def test_serial_requests_are_paced_and_never_overlap(clock: FakeClock, hold: float) -> None:
    upstream = Upstream(clock, hold=hold)
    async with make_client(upstream, clock, Politeness(min_interval=1.0, serial=True)) as client:
        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg:
                for i in range(10):
                    tg.start_soon(client.get, f"{BASE}?n={i}")

    assert len(upstream.starts) == 10
    assert all(gap >= 1.0 for gap in upstream.gaps())
    assert upstream.max_in_flight == 1


async def test_non_serial_requests_are_paced_but_may_overlap(clock: FakeClock) -> None:
    upstream = Upstream(clock, hold=2.5)
    async with make_client(upstream, clock, Politeness(min_interval=1.0, serial=False)) as client:
        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg:
                for i in range(10):
                    tg.start_soon(client.get, f"{BASE}?n={i}")

    assert len(upstream.starts) == 10
    assert all(gap >= 1.0 for gap in upstream.gaps())
    assert upstream.max_in_flight > 1


async def test_the_first_request_does_not_wait(clock: FakeClock) -> None:
    upstream = Upstream(clock)
    async with make_client(upstream, clock, Politeness(min_interval=5.0, serial=True)) as client:
        await client.get(BASE)
    assert upstream.starts == [1000.0]
    assert clock.sleeps == []


async def test_sequential_requests_wait_only_the_rest_of_the_interval(clock: FakeClock) -> None:
    upstream = Upstream(clock)
    async with make_client(upstream, clock, Politeness(min_interval=5.0, serial=False)) as client:
        await client.get(BASE)
        clock.advance(2.0)
        await client.get(BASE)
        clock.advance(9.0)
        await client.get(BASE)
    assert upstream.starts == [1000.0, 1005.0, 1014.0]
    assert clock.sleeps == [pytest.approx(3.0)]


async def test_zero_interval_does_not_pace(clock: FakeClock) -> None:
    upstream = Upstream(clock)
    async with make_client(upstream, clock, Politeness(min_interval=0.0, serial=True)) as client:
        for _ in range(3):
            await client.get(BASE)
    assert upstream.starts == [1000.0] * 3


async def test_hosts_are_paced_independently(clock: FakeClock) -> None:
    upstream = Upstream(clock, hold=0.05)
    hosts = ["https://a.example.org/x", "https://b.example.org/x", "https://a.example.org:8443/x"]
    async with make_client(upstream, clock, Politeness(min_interval=10.0, serial=True)) as client:
        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg:
                for url in hosts * 2:
                    tg.start_soon(client.get, url)

    starts: dict[str, list[float]] = {}
    for request, start in zip(upstream.requests, upstream.starts, strict=True):
        starts.setdefault(f"{request.url.host}:{request.url.port}", []).append(start)
    assert len(starts) == 3
    # Each host's first request went out at once: no host waited for another's slot.
    assert sorted(times[0] for times in starts.values()) == [pytest.approx(1000.0, abs=0.2)] * 3
    for times in starts.values():
        assert times[1] - times[0] >= 10.0


# --- Retry-After ----------------------------------------------------------------------------


async def test_429_with_delta_seconds_is_retried_after_that_wait(clock: FakeClock) -> None:
    upstream = Upstream(clock, scripted(too_many("3"), OK))
    async with make_client(upstream, clock, Politeness(min_interval=1.0, serial=True)) as client:
        response = await client.get(BASE)
    assert response.status_code == 200
    assert len(upstream.starts) == 2
    assert upstream.gaps() == [pytest.approx(3.0)]
    assert sum(clock.sleeps) == pytest.approx(3.0)


async def test_429_with_http_date_waits_until_that_date(clock: FakeClock) -> None:
    def respond(request: httpx.Request, n: int) -> httpx.Response:
        if n == 1:
            return too_many(format_datetime(clock.now() + timedelta(seconds=5), usegmt=True))
        return OK

    upstream = Upstream(clock, respond)
    async with make_client(upstream, clock, Politeness(min_interval=1.0, serial=True)) as client:
        response = await client.get(BASE)
    assert response.status_code == 200
    assert upstream.gaps() == [pytest.approx(5.0, abs=1.0)]


async def test_retry_after_is_capped_at_max_backoff(clock: FakeClock) -> None:
    upstream = Upstream(clock, scripted(too_many("999"), OK))
    rules = Politeness(min_interval=1.0, serial=True, max_backoff=30.0)
    async with make_client(upstream, clock, rules) as client:
        await client.get(BASE)
    assert upstream.gaps() == [pytest.approx(30.0)]


@pytest.mark.parametrize(
    "header",
    [None, "soon", "-5", "nan", "Mon, 01 Dec 2025 00:00:00 GMT"],
    ids=["absent", "garbage", "negative", "nan", "date-in-the-past"],
)
async def test_unusable_retry_after_waits_the_default_backoff(
    clock: FakeClock, header: str | None
) -> None:
    upstream = Upstream(clock, scripted(too_many(header), OK))
    rules = Politeness(min_interval=1.0, serial=True, default_backoff=10.0)
    async with make_client(upstream, clock, rules) as client:
        await client.get(BASE)
    assert upstream.gaps() == [pytest.approx(10.0)]


async def test_default_backoff_is_capped_too(clock: FakeClock) -> None:
    upstream = Upstream(clock, scripted(too_many(), OK))
    rules = Politeness(min_interval=0.0, serial=True, default_backoff=60.0, max_backoff=20.0)
    async with make_client(upstream, clock, rules) as client:
        await client.get(BASE)
    assert upstream.gaps() == [pytest.approx(20.0)]


@pytest.mark.parametrize("serial", [True, False])
async def test_retry_waits_for_the_next_slot_when_it_is_later(
    clock: FakeClock, serial: bool
) -> None:
    upstream = Upstream(clock, scripted(too_many("1"), OK))
    async with make_client(upstream, clock, Politeness(min_interval=6.0, serial=serial)) as c:
        await c.get(BASE)
    assert upstream.gaps() == [pytest.approx(6.0)]


async def test_persistent_429_raises_rate_limited(clock: FakeClock) -> None:
    upstream = Upstream(clock, scripted(too_many("3")))
    async with make_client(upstream, clock, Politeness(min_interval=1.0, serial=True)) as client:
        with pytest.raises(RateLimitedError) as caught:
            await client.get(f"{BASE}?{QUERY}")
    error = caught.value
    assert isinstance(error, CoreError)
    assert error.code is Code.RATE_LIMITED
    assert error.details == {
        "status": 429,
        "retry_after": 3.0,
        "attempts": 2,
        "host": "api.example.org",
    }
    assert len(upstream.starts) == 2


async def test_no_retries_means_one_attempt(clock: FakeClock) -> None:
    upstream = Upstream(clock, scripted(too_many()))
    rules = Politeness(min_interval=1.0, serial=True, max_retries=0)
    async with make_client(upstream, clock, rules) as client:
        with pytest.raises(RateLimitedError) as caught:
            await client.get(BASE)
    assert caught.value.details["attempts"] == 1
    assert caught.value.details["retry_after"] is None
    assert clock.sleeps == []


async def test_more_retries_are_honoured(clock: FakeClock) -> None:
    upstream = Upstream(clock, scripted(too_many("2"), too_many("2"), too_many("2"), OK))
    rules = Politeness(min_interval=1.0, serial=True, max_retries=3)
    async with make_client(upstream, clock, rules) as client:
        response = await client.get(BASE)
    assert response.status_code == 200
    assert upstream.gaps() == [pytest.approx(2.0)] * 3


@pytest.mark.parametrize(
    ("serial", "order"), [(True, ["/a", "/a", "/b"]), (False, ["/a", "/b", "/a"])]
)
async def test_serial_lock_is_held_across_the_retry(
    clock: FakeClock, serial: bool, order: list[str]
) -> None:
    first_sent = anyio.Event()

    def respond(request: httpx.Request, n: int) -> httpx.Response:
        if n == 1:
            first_sent.set()
            return too_many("3")
        return OK

    upstream = Upstream(clock, respond)
    async with make_client(upstream, clock, Politeness(min_interval=1.0, serial=serial)) as client:

        async def second() -> None:
            await first_sent.wait()
            await client.get("https://api.example.org/b")

        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg:
                tg.start_soon(client.get, "https://api.example.org/a")
                tg.start_soon(second)

    assert upstream.paths == order
    assert all(gap >= 1.0 for gap in upstream.gaps())


async def test_503_with_retry_after_is_retried_when_listed(clock: FakeClock) -> None:
    busy = httpx.Response(503, headers={"Retry-After": "4"})
    upstream = Upstream(clock, scripted(busy, OK))
    rules = Politeness(min_interval=1.0, serial=True, retry_statuses=frozenset({429, 503}))
    async with make_client(upstream, clock, rules) as client:
        response = await client.get(BASE)
    assert response.status_code == 200
    assert upstream.gaps() == [pytest.approx(4.0)]


async def test_503_without_retry_after_is_not_retried_even_when_listed(clock: FakeClock) -> None:
    upstream = Upstream(clock, scripted(httpx.Response(503), OK))
    rules = Politeness(min_interval=1.0, serial=True, retry_statuses=frozenset({429, 503}))
    async with make_client(upstream, clock, rules) as client:
        with pytest.raises(UpstreamTransportError):
            await client.get(BASE)
    assert len(upstream.starts) == 1


async def test_bare_listed_statuses_are_retried_with_exponential_backoff(
    clock: FakeClock,
) -> None:
    upstream = Upstream(clock, scripted(httpx.Response(503), httpx.Response(408),
                                        httpx.Response(502), OK))
    rules = Politeness(min_interval=0.0, serial=True, max_retries=3, default_backoff=2.0,
                       backoff_factor=2.0, retry_statuses=frozenset({408, 429, 502, 503}),
                       retry_bare_statuses=True)
    async with make_client(upstream, clock, rules) as client:
        response = await client.get(BASE)
    assert response.status_code == 200 and len(upstream.starts) == 4
    assert upstream.rests() == [pytest.approx(2.0), pytest.approx(4.0), pytest.approx(8.0)]


async def test_transport_errors_are_retried_only_when_asked(clock: FakeClock) -> None:
    def flaky(request: httpx.Request, n: int) -> httpx.Response:
        if n < 3:
            raise httpx.ConnectError("refused", request=request)
        return OK

    retrying = Politeness(min_interval=1.0, serial=True, max_retries=3, default_backoff=2.0,
                          backoff_factor=3.0, retry_transport_errors=True)
    upstream = Upstream(clock, flaky)
    async with make_client(upstream, clock, retrying) as client:
        assert (await client.get(BASE)).status_code == 200
    # The floor (1 s from the failed exchange's end) and the backoff (2 s, then 6 s) overlap.
    assert upstream.rests() == [pytest.approx(2.0), pytest.approx(6.0)]
    strict = Politeness(min_interval=1.0, serial=True, max_retries=3)
    once = Upstream(clock, flaky)
    async with make_client(once, clock, strict) as client:
        with pytest.raises(UpstreamTransportError):
            await client.get(BASE)
    assert len(once.starts) == 1


async def test_transport_retries_stop_at_max_retries(clock: FakeClock) -> None:
    def down(request: httpx.Request, n: int) -> httpx.Response:
        raise httpx.ReadTimeout("slow", request=request)

    rules = Politeness(min_interval=0.0, serial=False, max_retries=2, default_backoff=1.0,
                       retry_transport_errors=True)
    upstream = Upstream(clock, down)
    async with make_client(upstream, clock, rules) as client:
        with pytest.raises(UpstreamTransportError):
            await client.get(BASE)
    assert len(upstream.starts) == 3


def test_backoff_factor_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="backoff_factor"):
        Politeness(min_interval=1.0, serial=True, backoff_factor=0.5)


async def test_429_not_listed_is_not_retried(clock: FakeClock) -> None:
    upstream = Upstream(clock, scripted(too_many("1"), OK))
    rules = Politeness(min_interval=1.0, serial=True, retry_statuses=frozenset())
    async with make_client(upstream, clock, rules) as client:
        with pytest.raises(RateLimitedError) as caught:
            await client.get(BASE)
    assert caught.value.details["attempts"] == 1


# --- errors ---------------------------------------------------------------------------------


def raising(exc_type: type[httpx.RequestError]) -> Respond:
    def respond(request: httpx.Request, n: int) -> httpx.Response:
        raise exc_type(f"failed for {request.url}", request=request)

    return respond


ERROR_CASES = {
    "503": (scripted(httpx.Response(503, text="down SECRET123")), UpstreamTransportError),
    "500": (scripted(httpx.Response(500)), UpstreamTransportError),
    "read-timeout": (raising(httpx.ReadTimeout), UpstreamTransportError),
    "connect-timeout": (raising(httpx.ConnectTimeout), UpstreamTransportError),
    "connect-error": (raising(httpx.ConnectError), UpstreamTransportError),
    "404": (scripted(httpx.Response(404, text="no SECRET123 夏目")), UpstreamHttpError),
    "400": (scripted(httpx.Response(400)), UpstreamHttpError),
    "302": (
        scripted(httpx.Response(302, headers={"Location": f"{BASE}?{QUERY}"})),
        UpstreamHttpError,
    ),
    "429": (scripted(too_many("1")), RateLimitedError),
}


@pytest.mark.parametrize("case", list(ERROR_CASES))
async def test_errors_never_carry_the_query_string_or_body(clock: FakeClock, case: str) -> None:
    respond, expected = ERROR_CASES[case]
    upstream = Upstream(clock, respond)
    async with make_client(upstream, clock, Politeness(min_interval=1.0, serial=True)) as client:
        with pytest.raises(expected) as caught:
            await client.get(BASE, params={"extra": "SECRET123"})
        with pytest.raises(expected) as caught_inline:
            await client.get(f"{BASE}?{QUERY}")

    for error in (caught.value, caught_inline.value):
        assert upstream.requests[-1].url.params["appid"] == "SECRET123"  # it was really sent
        for text in (
            str(error),
            repr(error),
            error.message,
            repr(error.details),
            error.remediation,
        ):
            for leak in LEAKS:
                assert leak not in text, (case, leak, text)
        # The httpx exception holds the full URL; it must not ride along as the cause.
        assert error.__cause__ is None
        assert error.__context__ is None or error.__suppress_context__


@pytest.mark.parametrize(
    ("exc_type", "name"),
    [(httpx.ReadTimeout, "ReadTimeout"), (httpx.ConnectError, "ConnectError")],
)
async def test_transport_failures_name_the_error_class(
    clock: FakeClock, exc_type: type[httpx.RequestError], name: str
) -> None:
    upstream = Upstream(clock, raising(exc_type))
    async with make_client(upstream, clock, Politeness(min_interval=1.0, serial=True)) as client:
        with pytest.raises(UpstreamTransportError) as caught:
            await client.get(f"{BASE}?{QUERY}")
    assert caught.value.code is Code.TRANSPORT_ERROR
    assert caught.value.details == {"error": name, "host": "api.example.org", "port": 443,
                                    "path": "/search"}
    assert "api.example.org:443" in caught.value.message
    assert name not in caught.value.message, "said in words, not as a class name"
    assert len(upstream.starts) == 1


@pytest.mark.parametrize(("url", "why"), [
    ("127.0.0.1:8080/sru", "no scheme"),
    ("ftp://example.org/x", "not http or https"),
    ("http://:8080/x", "names no host"),
    ("http://127.0.0.1:99999/x", "port"),
    ("http://127.0.0.1:abc/x", "port"),
    ("http://user:pw@127.0.0.1:0/x", "port"),
])
async def test_an_unusable_upstream_url_says_what_is_wrong_and_sends_nothing(
    clock: FakeClock, url: str, why: str
) -> None:
    upstream = Upstream(clock, scripted(httpx.Response(200, content=b"{}")))
    async with make_client(upstream, clock, Politeness(min_interval=1.0, serial=True)) as client:
        with pytest.raises(CoreError) as caught:
            await client.get(url)
    assert caught.value.code is Code.TRANSPORT_ERROR and caught.value.details["reason"] == "bad_url"
    assert why in caught.value.message and "pw" not in caught.value.message
    assert upstream.starts == []


async def test_a_url_without_a_port_names_the_default_it_used() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    async with HttpClient(politeness=Politeness(min_interval=0.0, serial=True),
                          user_agent="t", transport=httpx.MockTransport(refuse)) as client:
        with pytest.raises(UpstreamTransportError) as caught:
            await client.get("http://127.0.0.1:/sru")
    assert "127.0.0.1:80" in caught.value.message and "default 80" in caught.value.message


async def test_a_json_body_of_a_million_values_is_refused_unparsed() -> None:
    body = b"[" + b"[]," * 600_000 + b"[]]"
    async with HttpClient(politeness=Politeness(min_interval=0.0, serial=True), user_agent="t",
                          transport=httpx.MockTransport(
                              lambda r: httpx.Response(200, content=body))) as client:
        with pytest.raises(UpstreamBodyError) as caught:
            await client.get_json("https://example.org/x")
    assert caught.value.details["reason"] == "too_many_values"
    # Brackets and commas inside strings are text, not values.
    text = b'{"t": "' + b"[,{" * 400_000 + b'"}'
    async with HttpClient(politeness=Politeness(min_interval=0.0, serial=True), user_agent="t",
                          transport=httpx.MockTransport(
                              lambda r: httpx.Response(200, content=text))) as client:
        assert len((await client.get_json("https://example.org/x"))["t"]) == 1_200_000


async def test_5xx_is_a_transport_error_with_status(clock: FakeClock) -> None:
    upstream = Upstream(clock, scripted(httpx.Response(503)))
    async with make_client(upstream, clock, Politeness(min_interval=1.0, serial=True)) as client:
        with pytest.raises(UpstreamTransportError) as caught:
            await client.get(f"{BASE}?{QUERY}")
    assert caught.value.code is Code.TRANSPORT_ERROR
    assert caught.value.details == {"status": 503, "host": "api.example.org", "path": "/search"}
    assert "https://api.example.org/search" in caught.value.message
    assert len(upstream.starts) == 1


async def test_4xx_is_an_api_error_with_status(clock: FakeClock) -> None:
    upstream = Upstream(clock, scripted(httpx.Response(404)))
    async with make_client(upstream, clock, Politeness(min_interval=1.0, serial=True)) as client:
        with pytest.raises(UpstreamHttpError) as caught:
            await client.get(f"{BASE}?{QUERY}")
    assert caught.value.code is Code.API_ERROR
    assert caught.value.details == {"status": 404, "host": "api.example.org", "path": "/search"}


async def test_a_failed_attempt_still_counts_as_a_start(clock: FakeClock) -> None:
    upstream = Upstream(
        clock, lambda request, n: raising(httpx.ConnectError)(request, n) if n == 1 else OK
    )
    async with make_client(upstream, clock, Politeness(min_interval=4.0, serial=True)) as client:
        with pytest.raises(UpstreamTransportError):
            await client.get(BASE)
        await client.get(BASE)
    assert upstream.gaps() == [pytest.approx(4.0)]


# --- the request itself --------------------------------------------------------------------


async def test_2xx_is_returned_with_params_and_headers_sent(clock: FakeClock) -> None:
    upstream = Upstream(clock, lambda request, n: httpx.Response(203, text="<xml/>"))
    client = make_client(
        upstream, clock, Politeness(min_interval=1.0, serial=True), headers={"Accept": "text/xml"}
    )
    async with client:
        response = await client.get(f"{BASE}?a=1", params={"b": "夏目"})
    assert response.status_code == 203
    assert response.text == "<xml/>"
    sent = upstream.requests[0]
    assert sent.method == "GET"
    assert dict(sent.url.params) == {"a": "1", "b": "夏目"}
    assert sent.headers["User-Agent"] == "readingroom-test/1.0"
    assert sent.headers["Accept"] == "text/xml"


async def test_aclose_closes_the_underlying_client(clock: FakeClock) -> None:
    client = make_client(Upstream(clock), clock, Politeness(min_interval=1.0, serial=True))
    await client.aclose()
    with pytest.raises(RuntimeError):
        await client.get(BASE)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"min_interval": -0.1, "serial": True},
        {"min_interval": float("nan"), "serial": True},
        {"min_interval": 1.0, "serial": True, "max_retries": -1},
    ],
)
def test_politeness_refuses_negative_values(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        Politeness(**kwargs)  # type: ignore[arg-type]


def test_politeness_defaults() -> None:
    rules = Politeness(min_interval=1.0, serial=False)
    assert (rules.max_retries, rules.default_backoff, rules.max_backoff) == (1, 10.0, 30.0)
    assert rules.retry_statuses == frozenset({429})


def test_httpx_loggers_are_quiet() -> None:
    # Their INFO lines carry full URLs, search terms included.
    assert logging.getLogger("httpx").level == logging.WARNING
    assert logging.getLogger("httpcore").level == logging.WARNING


def test_all_is_honest() -> None:
    assert sorted(http_module.__all__) == [
        "ACCEPT_ENCODING",
        "HeaderValue",
        "HttpClient",
        "INFLATE_RATIO_FLOOR",
        "MAX_BODY_BYTES",
        "MAX_INFLATE_RATIO",
        "MAX_JSON_VALUES",
        "Politeness",
        "RateLimitedError",
        "Revealable",
        "SECRET_HEADER_NAMES",
        "UpstreamBodyError",
        "UpstreamError",
        "UpstreamHttpError",
        "UpstreamTransportError",
        "redact_headers",
        "shared_tls_context",
    ]
    for name in http_module.__all__:
        assert hasattr(http_module, name)


async def test_every_client_shares_one_tls_context_that_checks_certificates() -> None:
    """Building a TLS context loads the CA bundle (tens of ms): a process builds it once."""
    import ssl

    first, second = (HttpClient(politeness=Politeness(min_interval=0.0, serial=True),
                                user_agent="test") for _ in range(2))
    try:
        contexts = {id(pool._ssl_context) for c in (first, second)
                    for pool in [c._client._transport._pool]}  # httpx internals
    finally:
        await first.aclose()
        await second.aclose()
    context = http_module.shared_tls_context()
    assert contexts == {id(context)}
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname


# --- the floor counts from the end of the previous exchange --------------------------------


async def test_serial_floor_counts_from_the_end_of_a_slow_exchange(clock: FakeClock) -> None:
    upstream = Upstream(clock, hold=2.5)
    async with make_client(upstream, clock, Politeness(min_interval=1.0, serial=True)) as client:
        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg:
                for i in range(3):
                    tg.start_soon(client.get, f"{BASE}?n={i}")
    assert upstream.rests() == [pytest.approx(1.0)] * 2
    assert upstream.starts == [pytest.approx(t) for t in (1000.0, 1003.5, 1007.0)]


async def test_serial_floor_counts_from_a_failed_exchange(clock: FakeClock) -> None:
    async def respond(request: httpx.Request, n: int) -> httpx.Response:
        if n == 1:
            await clock.sleep(3.0)  # the read times out after three seconds
            raise httpx.ReadTimeout("timed out", request=request)
        return OK

    upstream = Upstream(clock, respond)
    async with make_client(upstream, clock, Politeness(min_interval=1.0, serial=True)) as client:
        with pytest.raises(UpstreamTransportError):
            await client.get(BASE)
        await client.get(BASE)
    assert upstream.ends[0] == pytest.approx(1003.0)
    assert upstream.starts[1] == pytest.approx(1004.0)


async def test_serial_floor_counts_from_a_cancelled_exchange(clock: FakeClock) -> None:
    sent = anyio.Event()

    async def respond(request: httpx.Request, n: int) -> httpx.Response:
        if n == 1:
            sent.set()
            await anyio.Event().wait()  # never answers
        return OK

    upstream = Upstream(clock, respond)
    async with make_client(upstream, clock, Politeness(min_interval=1.0, serial=True)) as client:
        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg:
                tg.start_soon(client.get, BASE)
                await sent.wait()
                clock.advance(2.0)
                tg.cancel_scope.cancel()
        await client.get(BASE)
    assert upstream.ends[0] == pytest.approx(1002.0)
    assert upstream.starts[1] == pytest.approx(1003.0)


@pytest.mark.parametrize(("retry_after", "rest"), [("0", 1.0), ("3", 3.0)])
async def test_a_retry_keeps_the_floor_from_the_end_of_the_429(
    clock: FakeClock, retry_after: str, rest: float
) -> None:
    upstream = Upstream(clock, scripted(too_many(retry_after), OK), hold=2.0)
    async with make_client(upstream, clock, Politeness(min_interval=1.0, serial=True)) as client:
        response = await client.get(BASE)
    assert response.status_code == 200
    assert upstream.rests() == [pytest.approx(rest)]


async def test_non_serial_floor_stays_between_starts(clock: FakeClock) -> None:
    upstream = Upstream(clock, hold=2.5)
    async with make_client(upstream, clock, Politeness(min_interval=1.0, serial=False)) as client:
        await client.get(BASE)
        await client.get(BASE)
    # The second waited nothing: 2.5 s had passed since the first start.
    assert upstream.starts == [pytest.approx(1000.0), pytest.approx(1002.5)]


async def test_the_end_is_stamped_after_the_body_is_read(clock: FakeClock) -> None:
    class SlowBody(httpx.AsyncByteStream):
        async def __aiter__(self):
            yield b"<part/>"
            await clock.sleep(4.0)  # the rest of the body takes four seconds to arrive
            yield b"<rest/>"

    upstream = Upstream(clock, lambda request, n: httpx.Response(200, stream=SlowBody()))
    async with make_client(upstream, clock, Politeness(min_interval=1.0, serial=True)) as client:
        first = await client.get(BASE)
        await client.get(BASE)
    assert first.content == b"<part/><rest/>"
    assert upstream.starts[1] == pytest.approx(1005.0)


# --- secrets in headers ----------------------------------------------------------------------

HEADER_SECRET = "HDRSECRET987"


class Secret:
    """A value that shows itself only through reveal(), like core.secrets.SecretValue."""

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret(***)"


@pytest.mark.parametrize("case", list(ERROR_CASES))
async def test_errors_and_logs_never_carry_header_secrets(
    clock: FakeClock, case: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    respond, expected = ERROR_CASES[case]
    upstream = Upstream(clock, respond)
    client = make_client(upstream, clock, Politeness(min_interval=1.0, serial=True),
                         headers={"Authorization": f"Bearer {HEADER_SECRET}"})
    async with client:
        with pytest.raises(expected) as caught:
            await client.get(f"{BASE}?{QUERY}",
                             headers={"X-Api-Key": Secret(HEADER_SECRET), "X-Custom": "seen"})
    sent = upstream.requests[-1].headers
    assert sent["Authorization"] == f"Bearer {HEADER_SECRET}"  # it was really sent
    assert sent["X-Api-Key"] == HEADER_SECRET and sent["X-Custom"] == "seen"
    error = caught.value
    for text in (str(error), repr(error), error.message, repr(error.details), error.remediation,
                 caplog.text, repr(client)):
        for leak in (HEADER_SECRET, *LEAKS):
            assert leak not in text, (case, leak, text)
    assert error.__cause__ is None
    assert error.__context__ is None or error.__suppress_context__


async def test_each_exchange_is_logged_at_debug_without_query_or_headers(
    clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="readingroom.core.http")
    upstream = Upstream(clock)
    async with make_client(upstream, clock, Politeness(min_interval=1.0, serial=True)) as client:
        await client.get(f"{BASE}?{QUERY}", headers={"Authorization": HEADER_SECRET})
    assert "GET https://api.example.org/search -> HTTP 200" in caplog.text
    for leak in (HEADER_SECRET, *LEAKS):
        assert leak not in caplog.text


@pytest.mark.parametrize("value", [f"Bearer {HEADER_SECRET}\r\nX-Evil: 1", f"{HEADER_SECRET}é",
                                   f"{HEADER_SECRET}\0"], ids=["crlf", "non-ascii", "nul"])
async def test_an_unsendable_header_is_refused_without_its_value(
    clock: FakeClock, value: str
) -> None:
    upstream = Upstream(clock)
    async with make_client(upstream, clock, Politeness(min_interval=1.0, serial=True)) as client:
        with pytest.raises(CoreError) as caught:
            await client.get(BASE, headers={"Authorization": Secret(value)})
    error = caught.value
    assert error.code is Code.INVALID_INPUT
    assert error.details == {"header": "Authorization", "host": "api.example.org"}
    for text in (str(error), repr(error.details), error.remediation):
        assert HEADER_SECRET not in text
    assert error.__context__ is None and error.__cause__ is None
    assert upstream.requests == []


def test_redact_headers_masks_like_the_ledger_masks_parameters() -> None:
    headers = {"Authorization": "Bearer x", "x-api-key": "k", "Cookie": "c",
               "Accept": "application/json", "X-Token-Ish": Secret("s")}
    shown = redact_headers(headers)
    assert shown == {"Authorization": "[REDACTED]", "x-api-key": "[REDACTED]",
                     "Cookie": "[REDACTED]", "Accept": "application/json",
                     "X-Token-Ish": "[REDACTED]"}
    # The same marker and name comparison as the query-string redaction of the ledger.
    assert redact({"APPID": "v"}) == {"APPID": shown["Authorization"]}
    assert {"appid", "authorization", "x-api-key"} <= SECRET_HEADER_NAMES
    assert redact_headers({"X-Mine": "m"}, secret_names={"X-MINE"}) == {"X-Mine": "[REDACTED]"}
    assert redact_headers(httpx.Headers({"Authorization": "b"})) == {
        "authorization": "[REDACTED]"}


# --- JSON and POST ------------------------------------------------------------------------


def json_reply(body: bytes | str, status: int = 200) -> Respond:
    data = body.encode() if isinstance(body, str) else body
    return lambda request, n: httpx.Response(
        status, content=data, headers={"Content-Type": "application/json"})


async def test_get_json_returns_the_parsed_body_and_asks_for_json(clock: FakeClock) -> None:
    upstream = Upstream(clock, json_reply('{"results": [{"title": "吾輩は猫である"}]}'))
    async with make_client(upstream, clock, Politeness(min_interval=1.0, serial=True)) as client:
        data = await client.get_json(BASE, {"q": "猫"})
        await client.get_json(BASE, headers={"accept": "application/vnd.api+json"})
    assert data == {"results": [{"title": "吾輩は猫である"}]}
    assert upstream.requests[0].headers["Accept"] == "application/json"
    assert upstream.requests[0].url.params["q"] == "猫"
    assert upstream.requests[1].headers["Accept"] == "application/vnd.api+json"


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"<html><body>Wartungsarbeiten SECRET123</body></html>", "not JSON"),
        (b"", "not JSON"),
        (b'{"title": "\xff\xfe SECRET123"}', "not UTF-8"),
        (b"[" * 100_000, "nested too deeply"),
    ],
    ids=["html", "empty", "not-utf8", "deep"],
)
async def test_a_body_that_is_not_json_is_a_typed_api_error(
    clock: FakeClock, body: bytes, reason: str
) -> None:
    upstream = Upstream(clock, json_reply(body))
    async with make_client(upstream, clock, Politeness(min_interval=1.0, serial=True)) as client:
        with pytest.raises(UpstreamBodyError) as caught:
            await client.get_json(f"{BASE}?{QUERY}")
    error = caught.value
    assert error.code is Code.API_ERROR
    assert error.details == {"status": 200, "host": "api.example.org", "path": "/search",
                             "content_type": "application/json", "reason": reason}
    for text in (str(error), repr(error.details), error.remediation):
        for leak in ("SECRET123", "Wartungsarbeiten", *LEAKS):
            assert leak not in text
    assert error.__cause__ is None and error.__suppress_context__


async def test_post_json_sends_json_and_returns_json(clock: FakeClock) -> None:
    upstream = Upstream(clock, json_reply('{"ok": true}'))
    async with make_client(upstream, clock, Politeness(min_interval=1.0, serial=True)) as client:
        data = await client.post_json(f"{BASE}?a=1", json={"query": "夏目", "limit": 5},
                                      headers={"X-Api-Key": Secret(HEADER_SECRET)})
    assert data == {"ok": True}
    sent = upstream.requests[0]
    assert sent.method == "POST"
    assert sent.url.params["a"] == "1"
    assert sent.headers["Content-Type"] == "application/json"
    assert sent.headers["X-Api-Key"] == HEADER_SECRET
    assert json.loads(sent.content) == {"query": "夏目", "limit": 5}


async def test_post_sends_a_form_and_is_paced_and_retried(clock: FakeClock) -> None:
    upstream = Upstream(clock, scripted(too_many("2"), OK), hold=0.5)
    async with make_client(upstream, clock, Politeness(min_interval=1.0, serial=True)) as client:
        response = await client.post(BASE, data={"term": "猫"})
    assert response.status_code == 200
    assert [r.method for r in upstream.requests] == ["POST", "POST"]
    assert [r.content for r in upstream.requests] == [b"term=%E7%8C%AB"] * 2
    assert upstream.rests() == [pytest.approx(2.0)]


async def test_post_refuses_two_bodies(clock: FakeClock) -> None:
    upstream = Upstream(clock)
    async with make_client(upstream, clock, Politeness(min_interval=1.0, serial=True)) as client:
        with pytest.raises(ValueError):
            await client.post(BASE, json={"a": 1}, content=b"x")
    assert upstream.requests == []


@pytest.mark.parametrize(
    ("status", "expected"),
    [(404, UpstreamHttpError), (503, UpstreamTransportError), (429, RateLimitedError)],
)
async def test_post_json_maps_statuses_like_get(
    clock: FakeClock, status: int, expected: type[CoreError]
) -> None:
    upstream = Upstream(clock, json_reply('{"error": "SECRET123"}', status=status))
    rules = Politeness(min_interval=1.0, serial=True, max_retries=0)
    async with make_client(upstream, clock, rules) as client:
        with pytest.raises(expected) as caught:
            await client.post_json(BASE, json={})
    assert "SECRET123" not in str(caught.value) + repr(caught.value.details)


# --- the body cap holds while the body streams ------------------------------------------------


class Endless(httpx.AsyncByteStream):
    """A body that never ends; counts the chunks it was asked for and whether it was closed."""

    def __init__(self, chunk: int = 65536) -> None:
        self.chunk = b"a" * chunk
        self.sent = 0
        self.closed = False

    async def __aiter__(self):
        while True:
            self.sent += 1
            yield self.chunk

    async def aclose(self) -> None:
        self.closed = True


async def test_an_endless_body_stops_at_the_cap_with_a_typed_api_error(clock: FakeClock) -> None:
    body = Endless()
    upstream = Upstream(clock, lambda request, n: httpx.Response(200, stream=body))
    cap = 1024 * 1024
    client = make_client(upstream, clock, Politeness(min_interval=1.0, serial=True),
                         max_body_bytes=cap)
    async with client:
        with pytest.raises(UpstreamBodyError) as raised:
            await client.get(f"{BASE}?{QUERY}")
    err = raised.value
    assert err.code is Code.API_ERROR
    assert err.details["reason"] == "too_large" and err.details["max_bytes"] == cap
    assert body.sent == cap // 65536 + 1, "reading stopped at the first chunk past the cap"
    assert body.closed, "the stream was closed, not left open"
    assert not any(leak in str(err) for leak in LEAKS)


async def test_a_declared_length_past_the_cap_is_refused_unread(clock: FakeClock) -> None:
    body = Endless()
    upstream = Upstream(clock, lambda request, n: httpx.Response(
        200, headers={"Content-Length": str(10**12)}, stream=body))
    async with make_client(upstream, clock, Politeness(min_interval=1.0, serial=True),
                           max_body_bytes=1000) as client:
        with pytest.raises(UpstreamBodyError) as raised:
            await client.get(BASE)
    assert raised.value.details["reason"] == "too_large"
    assert body.sent == 0 and body.closed


async def test_a_body_at_the_cap_is_read_whole(clock: FakeClock) -> None:
    upstream = Upstream(clock, lambda request, n: httpx.Response(200, content=b"x" * 1000))
    async with make_client(upstream, clock, Politeness(min_interval=1.0, serial=True),
                           max_body_bytes=1000) as client:
        response = await client.get(BASE)
        with pytest.raises(UpstreamBodyError):
            await client.get_json(BASE)  # the same 1000 bytes, but not JSON: still API_ERROR
    assert response.content == b"x" * 1000


async def test_the_cap_counts_decoded_bytes(clock: FakeClock) -> None:
    import gzip

    packed = gzip.compress(b"0" * 100_000)  # about 100 bytes on the wire
    upstream = Upstream(clock, lambda request, n: httpx.Response(
        200, headers={"Content-Encoding": "gzip"}, content=packed))
    async with make_client(upstream, clock, Politeness(min_interval=1.0, serial=True),
                           max_body_bytes=50_000) as client:
        with pytest.raises(UpstreamBodyError) as raised:
            await client.get(BASE)
    assert raised.value.details["reason"] == "too_large"


async def test_a_refused_answer_is_not_read(clock: FakeClock) -> None:
    body = Endless()
    upstream = Upstream(clock, lambda request, n: httpx.Response(503, stream=body))
    async with make_client(upstream, clock, Politeness(min_interval=1.0, serial=True)) as client:
        with pytest.raises(UpstreamTransportError) as raised:
            await client.get(BASE)
    assert raised.value.details["status"] == 503
    assert body.sent == 0 and body.closed


async def test_a_cancelled_body_read_closes_the_stream(clock: FakeClock) -> None:
    stalled = anyio.Event()

    class Stalls(httpx.AsyncByteStream):
        closed = False

        async def __aiter__(self):
            yield b"<part/>"
            stalled.set()
            await anyio.Event().wait()  # the rest never comes
            yield b""

        async def aclose(self) -> None:
            Stalls.closed = True

    upstream = Upstream(clock, lambda request, n: httpx.Response(200, stream=Stalls()))
    async with make_client(upstream, clock, Politeness(min_interval=1.0, serial=True)) as client:
        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg:
                tg.start_soon(client.get, BASE)
                await stalled.wait()
                tg.cancel_scope.cancel()  # what a tool deadline does
    assert Stalls.closed


def test_max_body_bytes_default_and_floor() -> None:
    assert MAX_BODY_BYTES == 20 * 1024 * 1024
    client = HttpClient(politeness=Politeness(min_interval=1.0, serial=True), user_agent="t")
    assert client.max_body_bytes == MAX_BODY_BYTES
    with pytest.raises(ValueError):
        HttpClient(politeness=Politeness(min_interval=1.0, serial=True), user_agent="t",
                   max_body_bytes=0)
