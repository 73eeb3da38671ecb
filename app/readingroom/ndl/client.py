"""The SRU client of NDL Search, bound by the undertakings filed with the library.

The undertakings are constants, not settings: nothing in the environment can lower them.

=====================================  ============================================
Undertaking                            Implementation
=====================================  ============================================
Requests strictly serial               ``Politeness(serial=True)``: one lock held
                                       across the wait, the request and its retry
At least one second between requests   ``MIN_REQUEST_INTERVAL = 1.0`` (monotonic),
                                       kept from the *end* of the previous exchange
                                       (response read, or failure) to the next
                                       start, retries included
No pacing margin                       ``PACING_MARGIN = 0.0``: the library answers
                                       a request only after receiving it, so an
                                       arrival counted from our end of the previous
                                       exchange is at least the floor after the
                                       library's last answer, and more than the
                                       floor after its last arrival (by the round
                                       trip and its own work). Jitter can only add
                                       to that; the 20 ms once added to a floor
                                       between starts bought nothing a floor from
                                       the end does not already give
At most 100 records per request        ``MAX_RECORDS = 100``; no auto-pagination
One polite retry on HTTP 429, then     ``max_retries=1``, Retry-After honoured and
stop                                   capped at ``RETRY_AFTER_CAP``
The harvesting interface is not used   no OAI-PMH code exists
No cache, no local store of records    nothing is kept between calls
Only the five declared dpids           every dpid in the CQL is checked before sending
=====================================  ============================================
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

import httpx

from .. import __version__
from ..core.clock import Clock
from ..core.errors import Code, CoreError
from ..core.http import HttpClient, Politeness
from ..core.offload import run_blocking
from ..core.settings import env_str
from . import DEFAULT_ENDPOINT, ENV_NDL_SRU_URL
from .cql import check_dpids
from .models import SruResponse
from .records import parse

__all__ = [
    "DEFAULT_ENDPOINT",
    "ENV_NDL_SRU_URL",
    "MAX_RECORDS",
    "MIN_REQUEST_INTERVAL",
    "RESULT_WINDOW",
    "NdlClient",
    "SruExchange",
]

MIN_REQUEST_INTERVAL = 1.0
MAX_RECORDS = 100
RESULT_WINDOW = 500
"""NDL serves no record past the 500th of a result set, whatever startRecord says."""
RETRY_AFTER_CAP = 30.0
DEFAULT_BACKOFF = 10.0
PACING_MARGIN = 0.0
"""Added to the floor; none is needed now that the floor counts from the end of the exchange
(see the table above). A constant, so it can only ever be raised here, never by a setting."""


UNDERTAKINGS = Politeness(
    min_interval=MIN_REQUEST_INTERVAL + PACING_MARGIN,
    serial=True,
    max_retries=1,
    default_backoff=DEFAULT_BACKOFF,
    max_backoff=RETRY_AFTER_CAP,
    retry_statuses=frozenset({429}),
)

_DPID_IN_CQL = re.compile(r'\bdpid\s*(?:=|any\b)\s*"([^"]*)"', re.IGNORECASE)


@dataclass(frozen=True)
class SruExchange:
    """One request sent and its parsed response."""

    params: dict[str, str]
    endpoint: str
    response: SruResponse


class NdlClient:
    """searchRetrieve over SRU 1.2 with DC-NDL records, one request at a time."""

    def __init__(
        self,
        endpoint: str | None = None,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        clock: Clock | None = None,
        timeout: float = 30.0,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.endpoint = endpoint or env_str(ENV_NDL_SRU_URL, DEFAULT_ENDPOINT, env)
        self._http = HttpClient(
            politeness=UNDERTAKINGS,
            timeout=timeout,
            user_agent=f"readingroom-ndl-mcp/{__version__} (+SRU; serial, >=1s interval)",
            transport=transport,
            clock=clock,
        )

    async def aclose(self) -> None:
        """Close the underlying HTTP client."""
        await self._http.aclose()

    @staticmethod
    def params_for(cql: str, *, start: int, count: int) -> dict[str, str]:
        """The exact request parameters; ``maximumRecords`` never exceeds :data:`MAX_RECORDS`."""
        return {
            "operation": "searchRetrieve",
            "version": "1.2",
            "recordSchema": "dcndl",
            "recordPacking": "xml",
            "query": cql,
            "startRecord": str(max(1, start)),
            "maximumRecords": str(min(max(1, count), MAX_RECORDS)),
        }

    async def search_retrieve(self, cql: str, *, start: int, count: int) -> SruExchange:
        """Send one searchRetrieve and parse the answer.

        Raises:
            CoreError: PROVIDER_NOT_PERMITTED (before sending), RATE_LIMITED, TRANSPORT_ERROR,
                API_ERROR (HTML or unreadable body).
        """
        dpids = [v for group in _DPID_IN_CQL.findall(cql) for v in group.split()]
        if not dpids:
            raise CoreError(
                Code.INVALID_INPUT,
                "Every NDL query must name its data providers.",
                remediation="This is a defect in the query builder.",
            )
        check_dpids(dpids)
        params = self.params_for(cql, start=start, count=count)
        response = await self._http.get(self.endpoint, params)
        ctype = response.headers.get("content-type", "").lower()
        body = response.content
        if "html" in ctype or body.lstrip()[:15].lower().startswith((b"<!doctype html", b"<html")):
            raise CoreError(
                Code.API_ERROR,
                "NDL Search answered with an HTML page instead of an SRU response.",
                details={"status": response.status_code, "content_type": ctype},
                remediation="The service may be under maintenance; try again later.",
            )
        # Off the event loop: pings and cancels are answered while a page is read.
        parsed = await run_blocking(parse, body)
        return SruExchange(params=params, endpoint=self.endpoint, response=parsed)
