"""Shared provider pieces: the keyword form, the retry rules, hand-made failure shapes."""

from __future__ import annotations

from datetime import timedelta
from email.utils import format_datetime

import httpx
import pytest

from readingroom.core.clock import FakeClock
from readingroom.core.errors import Code, CoreError
from readingroom.literature.models import PROVIDER_ORDER, SearchRequest
from readingroom.literature.upstreams import PROVIDERS, common, crossref
from readingroom.literature.upstreams.base import ProviderSettings

from .helpers import Client, Recorder


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("cancer[tiab] AND smith[au]", "cancer smith"),
        ('TITLE:"gene therapy" OR AUTH:smith', "gene therapy smith"),
        ("ti:transformer ANDNOT cat:cs.CL", "transformer cs.CL"),
        ("crispr* (cas9 | cas12)", "crispr cas9 cas12"),
        ("10.1101/2020.01.30.927871", "10.1101/2020.01.30.927871"),
        ("non-linear", "non-linear"),
        ("https://doi.org/10.1/x", "https://doi.org/10.1/x"),
    ],
)
def test_keywords(query: str, expected: str) -> None:
    assert common.keywords(query) == expected


def test_keywords_hyphens_and_nothing_left() -> None:
    assert common.keywords("non-linear - x", hyphens=False) == "non linear x"
    with pytest.raises(CoreError) as caught:
        common.keywords("AND OR * []")
    assert caught.value.code is Code.INVALID_INPUT


def test_registry_in_seed_order_with_url_settings() -> None:
    assert tuple(PROVIDERS) == PROVIDER_ORDER
    settings = {p.info.url_setting for p in PROVIDERS.values()}
    assert settings == {
        "PUBMED_EUTILS_URL", "EUROPEPMC_URL", "BIORXIV_URL", "CROSSREF_URL", "OPENALEX_URL",
        "SEMANTIC_SCHOLAR_URL", "ARXIV_URL",
    }
    for provider in PROVIDERS.values():
        assert provider.info.default_url.startswith("https://")
        assert provider.info.source.id == provider.info.id


def test_the_seed_retry_rules() -> None:
    assert common.MAX_RETRIES == 3
    assert {408, 429, 500, 502, 503, 504} <= common.RETRY_STATUSES
    assert [common.backoff(n) for n in (1, 2, 3)] == [2.0, 4.0, 8.0]
    for provider in PROVIDERS.values():  # every provider has a pace, none faster than 10/s
        assert provider.pacing(ProviderSettings(base_url="https://x.test",
                                                values={})).min_interval >= 0.1


@pytest.mark.anyio
async def test_retry_after_http_date_is_honoured() -> None:
    # Hand-made 429 after RFC 9110 §10.2.3 (no real 429 sample exists).
    clock = FakeClock()
    when = format_datetime(clock.now() + timedelta(seconds=7), usegmt=True)
    answers = iter([httpx.Response(429, headers={"Retry-After": when}),
                    httpx.Response(200, json={"status": "ok", "message": {
                        "total-results": 0, "items": []}})])
    recorder = Recorder(lambda r: next(answers), clock)
    settings = ProviderSettings(base_url="https://crossref.test", values={})
    async with Client(crossref.PROVIDER, settings, recorder.transport, clock) as h:
        assert (await crossref.PROVIDER.search(h, settings, SearchRequest(query="x"))).records == ()
    assert recorder.times[1] - recorder.times[0] >= 7.0


@pytest.mark.anyio
async def test_503_with_retry_after_is_retried() -> None:
    # Hand-made 503 with Retry-After seconds.
    answers = iter([httpx.Response(503, headers={"Retry-After": "5"}),
                    httpx.Response(200, json={"status": "ok", "message": {
                        "total-results": 0, "items": []}})])
    clock = FakeClock()
    recorder = Recorder(lambda r: next(answers), clock)
    settings = ProviderSettings(base_url="https://crossref.test", values={})
    async with Client(crossref.PROVIDER, settings, recorder.transport, clock) as h:
        assert (await crossref.PROVIDER.search(h, settings, SearchRequest(query="x"))).records == ()
    assert len(recorder.requests) == 2
    assert recorder.times[1] - recorder.times[0] >= 5.0  # the 503's Retry-After, not a backoff


@pytest.mark.anyio
async def test_malformed_json_is_an_api_error_without_the_body() -> None:
    recorder = Recorder(lambda r: httpx.Response(200, content=b'{"status": "ok", "mess'))
    settings = ProviderSettings(base_url="https://crossref.test", values={})
    async with Client(crossref.PROVIDER, settings, recorder.transport) as http:
        with pytest.raises(CoreError) as caught:
            await crossref.PROVIDER.search(http, settings, SearchRequest(query="x"))
    assert caught.value.code is Code.API_ERROR
    assert "mess" not in caught.value.message


def test_coercions() -> None:
    assert common.as_year("1998 Dec-1999 Jan") == 1998
    assert common.as_year(True) is None and common.as_year("12345") is None
    assert common.as_str("  ") is None and common.as_str(5) == "5"
