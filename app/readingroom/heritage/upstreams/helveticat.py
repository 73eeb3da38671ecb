"""The Helveticat client: SRU ``searchRetrieve`` and OAI-PMH requests over one paced client.

Courtesy limits are constants, not settings. The NB documents no rate limit for either
interface (research §4.11), so the client is conservative: strictly serial, one second from the
end of one exchange to the next, a few retries of 429/5xx and failed exchanges with growing
backoff (the tool deadline bounds the whole). Redirects are never followed (``HttpClient``),
and an endpoint must be HTTPS; only a loopback host (the tests' and the self-test's fakes) may
be plain HTTP.

**Bounded work.** Every answer is parsed in a worker thread (lxml releases the interpreter
lock while it parses, so the server keeps answering pings and cancellations), and only after
its markup count is checked against what was asked: a body of millions of tiny elements is
refused (``API_ERROR``, reason ``too_many_elements``) before a tree is built. An OAI answer of
another verb than the one asked (``ListSets`` for ``ListRecords``) is an ``API_ERROR`` too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import httpx

from ... import __version__
from ...core.bounds import PerRecord, check_xml
from ...core.clock import Clock
from ...core.errors import Code, CoreError
from ...core.http import HttpClient, Politeness
from ...core.oaipmh import OaiResponse, parse_oai
from ...core.offload import run_blocking
from ...core.settings import env_str
from ...core.sru import SruResponse, parse_search_retrieve

__all__ = [
    "DEFAULT_OAI_URL",
    "DEFAULT_SRU_URL",
    "HELVETICAT_OAI_URL",
    "HELVETICAT_SRU_URL",
    "MAX_RECORDS",
    "MIN_REQUEST_INTERVAL",
    "OAI_MAX_MARKUP",
    "POLITENESS",
    "SRU_RECORD_SCHEMA",
    "SRU_VERSION",
    "HelveticatClient",
    "OaiExchange",
    "SruExchange",
    "check_endpoint",
]

HELVETICAT_SRU_URL = "HELVETICAT_SRU_URL"
"""Environment variable overriding the SRU endpoint."""
HELVETICAT_OAI_URL = "HELVETICAT_OAI_URL"
"""Environment variable overriding the OAI-PMH endpoint."""
DEFAULT_SRU_URL = "https://helveticat.nb.admin.ch/view/sru/41SNL_51_INST"
DEFAULT_OAI_URL = "https://helveticat.nb.admin.ch/view/oai/41SNL_51_INST/request"

MAX_RECORDS = 50
"""Alma's SRU ``maximumRecords`` ceiling (explain says 50; more is silently cut to 50)."""
SRU_VERSION = "1.2"
SRU_RECORD_SCHEMA = "dc"
"""The schema of both real Helveticat SRU samples; full MARC comes from ``GetRecord``."""
MIN_REQUEST_INTERVAL = 1.0
SRU_MARKUP_PER_RECORD = 2000
"""Tags (``<``) one record of an answer may take: the real Dublin Core records take about 30,
the real MARCXML ones about 150."""
SRU_MARKUP_BASE = 4000
SRU_MARKUP = PerRecord(SRU_MARKUP_BASE, SRU_MARKUP_PER_RECORD)
"""The tags an SRU answer for N records may hold (:mod:`readingroom.core.bounds`)."""
OAI_MAX_MARKUP = 500_000
"""Tags an OAI-PMH answer may hold: Alma's ListRecords pages are 100 MARC21 records (about
600 tags each); 68 sets take 280."""

POLITENESS = Politeness(
    min_interval=MIN_REQUEST_INTERVAL,
    serial=True,
    max_retries=2,
    default_backoff=2.0,
    max_backoff=20.0,
    retry_statuses=frozenset({408, 429, 500, 502, 503, 504}),
    retry_bare_statuses=True,
    retry_transport_errors=True,
    backoff_factor=2.0,
)

_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})


def check_endpoint(url: str, variable: str) -> str:
    """``url`` if it is HTTPS (or HTTP on a loopback host); CoreError otherwise.

    Raises:
        CoreError: INVALID_INPUT naming the variable; nothing is sent to such an endpoint.
    """
    parsed = httpx.URL(url)
    if parsed.scheme == "https" and parsed.host:
        return url
    if parsed.scheme == "http" and parsed.host in _LOOPBACK:
        return url
    raise CoreError(
        Code.INVALID_INPUT,
        f"{variable} must be an https:// URL (plain http only on a loopback host).",
        details={"setting": variable, "scheme": parsed.scheme},
        remediation=f"Set {variable} to the https:// endpoint, or unset it for the default.",
    )


@dataclass(frozen=True)
class SruExchange:
    """One searchRetrieve sent and its parsed envelope."""

    params: dict[str, str]
    endpoint: str
    response: SruResponse


@dataclass(frozen=True)
class OaiExchange:
    """One OAI-PMH request sent and its parsed response."""

    params: dict[str, str]
    endpoint: str
    response: OaiResponse


class HelveticatClient:
    """SRU and OAI-PMH requests to Helveticat, one at a time, each answer parsed safely."""

    def __init__(
        self,
        *,
        sru_url: str | None = None,
        oai_url: str | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        clock: Clock | None = None,
        timeout: float = 30.0,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.sru_url = sru_url or env_str(HELVETICAT_SRU_URL, DEFAULT_SRU_URL, env)
        self.oai_url = oai_url or env_str(HELVETICAT_OAI_URL, DEFAULT_OAI_URL, env)
        self._http = HttpClient(
            politeness=POLITENESS,
            timeout=timeout,
            user_agent=f"readingroom-swiss-cultural-heritage-mcp/{__version__} "
            "(+Helveticat SRU/OAI-PMH; serial, >=1s interval)",
            transport=transport,
            clock=clock,
        )

    async def aclose(self) -> None:
        """Close the underlying HTTP client."""
        await self._http.aclose()

    @staticmethod
    def sru_params(cql: str, *, start: int, count: int) -> dict[str, str]:
        """The searchRetrieve parameters; ``maximumRecords`` never exceeds :data:`MAX_RECORDS`.

        No ``recordPacking`` (Alma's default is xml) and no ``sortBy``: see the service on
        result order.
        """
        return {
            "version": SRU_VERSION,
            "operation": "searchRetrieve",
            "recordSchema": SRU_RECORD_SCHEMA,
            "query": cql,
            "startRecord": str(max(1, start)),
            "maximumRecords": str(min(max(1, count), MAX_RECORDS)),
        }

    async def search_retrieve(self, cql: str, *, start: int, count: int) -> SruExchange:
        """Send one searchRetrieve and parse its envelope (``core.sru``).

        Raises:
            CoreError: INVALID_INPUT (endpoint not HTTPS, nothing sent), RATE_LIMITED,
                TRANSPORT_ERROR, API_ERROR (refused status, HTML, unreadable XML).
        """
        endpoint = check_endpoint(self.sru_url, HELVETICAT_SRU_URL)
        params = self.sru_params(cql, start=start, count=count)
        response = await self._http.get(endpoint, params)
        budget = SRU_MARKUP.limit(int(params["maximumRecords"]))
        body = _within_markup(response.content, budget, "SRU")
        parsed = await run_blocking(parse_search_retrieve, body)
        return SruExchange(params=params, endpoint=endpoint, response=parsed)

    async def oai(self, params: Mapping[str, str]) -> OaiExchange:
        """Send one OAI-PMH request and parse it (``core.oaipmh``), ``<error>``s included.

        An OAI error may come with HTTP 4xx (Zenodo sends 422); such a body is not read by
        ``HttpClient``, so the call fails with the status (API_ERROR), never as empty.

        Raises:
            CoreError: as :meth:`search_retrieve`.
        """
        endpoint = check_endpoint(self.oai_url, HELVETICAT_OAI_URL)
        sent = dict(params)
        response = await self._http.get(endpoint, sent)
        body = _within_markup(response.content, OAI_MAX_MARKUP, "OAI-PMH")
        parsed = await run_blocking(parse_oai, body)
        asked = sent.get("verb")
        if parsed.verb is not None and asked is not None and parsed.verb != asked:
            raise CoreError(
                Code.API_ERROR,
                f"Helveticat answered a {asked} request with {parsed.verb}: not the list that "
                "was asked for. The result is unknown, not empty.",
                details={"asked_verb": asked, "answered_verb": parsed.verb,
                         "reason": "wrong_verb"},
                remediation="Try again later; report it if it persists.",
            )
        return OaiExchange(params=sent, endpoint=endpoint, response=parsed)


def _within_markup(body: bytes, budget: int, what: str) -> bytes:
    """``body`` if it holds at most ``budget`` tags; else API_ERROR before any parsing.

    Counting ``<`` is a C-speed scan; a tree of millions of tiny elements costs hundreds of
    megabytes once built.
    """
    return check_xml(body, limit=budget, too_many=lambda tags: CoreError(
        Code.API_ERROR,
        f"Helveticat's {what} answer holds {tags} tags, more than the {budget} a page of the "
        "records asked for can take; it was not read. The result is unknown.",
        details={"reason": "too_many_elements", "tags": tags, "max_tags": budget},
        remediation="Try again later, or ask for fewer records (limit).",
    ))
