"""The one egress policy: HTTPS and the allow-list, re-checked redirects, retries in a budget.

Over ``httpx.MockTransport`` and ``FakeClock``: no network, no sleeping.
"""

from __future__ import annotations

import itertools

import httpx
import pytest

from readingroom.core.clock import FakeClock
from readingroom.core.errors import Code, CoreError
from readingroom.heritage.egress import (
    RETRY_ATTEMPTS,
    RETRY_BUDGET_S,
    AllowList,
    Egress,
)

pytestmark = pytest.mark.anyio
BASE = "https://ckan.opendata.swiss/api/3/action"


def _egress(handler, clock: FakeClock | None = None, **kw) -> tuple[Egress, list[httpx.Request]]:
    seen: list[httpx.Request] = []

    def record(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return handler(request)

    egress = Egress(allow=AllowList.for_endpoints([]), user_agent="test",
                    transport=httpx.MockTransport(record), clock=clock or FakeClock(),
                    jitter=lambda: 0.5, **kw)
    return egress, seen


async def test_plain_http_and_foreign_hosts_are_never_sent():
    egress, seen = _egress(lambda r: httpx.Response(200, json={}))
    for url in ("http://ckan.opendata.swiss/api", "https://example.org/api"):
        with pytest.raises(CoreError) as refused:
            await egress.get_json(url)
        assert refused.value.details["sent"] is False
    assert seen == []
    loopback = AllowList.for_endpoints(["http://127.0.0.1:9/ckan"])
    assert loopback.refusal(httpx.URL("http://127.0.0.1:9/ckan/x")) is None
    assert loopback.refusal(httpx.URL("http://10.0.0.1/x")) is not None


async def test_redirects_are_followed_only_to_allowed_https_hosts():
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/api/3/action/old":
            return httpx.Response(301, headers={"Location": "/api/3/action/new"})
        if request.url.path == "/api/3/action/new":
            return httpx.Response(200, json={"ok": True})
        if request.url.path == "/api/3/action/away":
            return httpx.Response(302, headers={"Location": "https://evil.example/x"})
        return httpx.Response(302, headers={"Location": "http://ckan.opendata.swiss/x"})

    egress, seen = _egress(handler)
    assert await egress.get_json(f"{BASE}/old") == {"ok": True}
    for path, why in (("away", "evil.example"), ("downgrade", "HTTPS only")):
        with pytest.raises(CoreError) as refused:
            await egress.get_json(f"{BASE}/{path}")
        assert refused.value.code is Code.API_ERROR and why in refused.value.message
    assert all(r.url.host == "ckan.opendata.swiss" for r in seen)


async def test_post_is_never_redirected():
    egress, seen = _egress(lambda r: httpx.Response(307, headers={"Location": f"{BASE}/x"}))
    with pytest.raises(CoreError) as refused:
        await egress.post_json(f"{BASE}/q", {"query": "x"})
    assert "never redirected" in refused.value.message and len(seen) == 1


async def test_5xx_retried_with_growing_backoff_then_fails():
    clock = FakeClock()
    egress, seen = _egress(lambda r: httpx.Response(503), clock)
    with pytest.raises(CoreError) as failed:
        await egress.get_json(f"{BASE}/x")
    assert failed.value.code is Code.TRANSPORT_ERROR
    assert len(seen) == RETRY_ATTEMPTS
    backoffs = [s for s in clock.sleeps if s >= 1.0]
    assert backoffs == [2.0, 4.0, 8.0]  # jitter 0.5 is the midpoint: no spread


async def test_429_waits_retry_after_and_succeeds():
    clock = FakeClock()
    answers = iter([httpx.Response(429, headers={"Retry-After": "3"}),
                    httpx.Response(200, json={"ok": 1})])
    egress, seen = _egress(lambda r: next(answers), clock)
    assert await egress.get_json(f"{BASE}/x") == {"ok": 1}
    assert len(seen) == 2 and 3.0 * 1.125 in clock.sleeps


async def test_no_attempt_starts_past_the_budget():
    clock = FakeClock()
    answers = iter([httpx.Response(429, headers={"Retry-After": "20"})] * 4)
    egress, seen = _egress(lambda r: next(answers), clock)
    with pytest.raises(CoreError) as failed:
        await egress.get_json(f"{BASE}/x")
    assert failed.value.code is Code.RATE_LIMITED
    assert failed.value.details["budget_s"] == RETRY_BUDGET_S
    assert len(seen) == 2  # 20 s (capped) after the first; a second wait would pass 25 s


async def test_other_4xx_not_retried():
    egress, seen = _egress(lambda r: httpx.Response(400))
    with pytest.raises(CoreError) as failed:
        await egress.get_json(f"{BASE}/x")
    assert failed.value.code is Code.API_ERROR and len(seen) == 1


async def test_a_redirect_keeps_scheme_host_and_port():
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.port == 8443:
            return httpx.Response(200, json={"reached": "other port"})
        return httpx.Response(302, headers={"Location": "https://ckan.opendata.swiss:8443/x"})

    egress, seen = _egress(handler)
    with pytest.raises(CoreError) as refused:
        await egress.get_json(f"{BASE}/x")
    assert "scheme, host and port" in refused.value.message
    assert "ckan.opendata.swiss:8443" in refused.value.message
    assert [r.url.port for r in seen] == [None]


async def test_every_redirect_hop_waits_for_the_host_slot():
    clock = FakeClock()
    starts: list[float] = []

    def handler(request: httpx.Request) -> httpx.Response:
        starts.append(clock.monotonic())
        hop = int(request.url.path.rsplit("/", 1)[1])
        if hop < 3:
            return httpx.Response(302, headers={"Location": f"/api/3/action/{hop + 1}"})
        return httpx.Response(200, json={"hops": hop})

    egress, _seen = _egress(handler, clock)
    assert await egress.get_json(f"{BASE}/0") == {"hops": 3}
    gaps = [b - a for a, b in itertools.pairwise(starts)]
    assert len(gaps) == 3 and min(gaps) >= 0.2
