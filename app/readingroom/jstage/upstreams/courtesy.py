"""How jstage-mcp treats J-STAGE: the courtesy as constants, and the one client that keeps it.

The J-STAGE terms forbid bulk downloading, and the WebAPI answers ``ERR_003`` (too many
requests) when pressed. The original server kept a one-second interval but released its lock
before sending, so requests could still overlap. Here every request (``service=2`` and ``3``)
goes through one :class:`~readingroom.core.http.HttpClient` in serial mode:

=====================================  ============================================
Courtesy                               Implementation
=====================================  ============================================
Requests strictly serial               ``serial=True``: one lock held across the
                                       wait, the request and its retry
At least one second between requests   ``MIN_REQUEST_INTERVAL = 1.0``, from the end
                                       of the previous exchange to the next start
At most 100 records per request        ``MAX_RECORDS = 100``; no auto-pagination
                                       (a DOI lookup reads at most
                                       ``MAX_LOOKUP_PAGES`` pages)
One retry on HTTP 429 or 5xx, then     ``max_retries=1``, Retry-After honoured
stop                                   (capped at ``RETRY_AFTER_CAP``); ``ERR_003``
                                       is not retried at all
=====================================  ============================================

None of these is a setting: nothing in the environment can lower them.
"""

from __future__ import annotations

import httpx

from ... import __version__
from ...core.clock import Clock
from ...core.http import HttpClient, Politeness

__all__ = [
    "COURTESY",
    "DEFAULT_BACKOFF",
    "MAX_LOOKUP_PAGES",
    "MAX_RECORDS",
    "MIN_REQUEST_INTERVAL",
    "RETRY_AFTER_CAP",
    "USER_AGENT",
    "new_http",
]

MIN_REQUEST_INTERVAL = 1.0
MAX_RECORDS = 100
MAX_LOOKUP_PAGES = 3
"""Pages of one volume a DOI lookup reads (300 articles); past them the answer is unknown."""
RETRY_AFTER_CAP = 30.0
DEFAULT_BACKOFF = 10.0
USER_AGENT = f"readingroom-jstage-mcp/{__version__} (+WebAPI; serial, >=1s interval)"

COURTESY = Politeness(
    min_interval=MIN_REQUEST_INTERVAL,
    serial=True,
    max_retries=1,
    default_backoff=DEFAULT_BACKOFF,
    max_backoff=RETRY_AFTER_CAP,
    retry_statuses=frozenset({429, 500, 502, 503, 504}),
    retry_bare_statuses=True,
)


def new_http(
    *,
    transport: httpx.AsyncBaseTransport | None = None,
    clock: Clock | None = None,
    timeout: float = 30.0,
) -> HttpClient:
    """The one HTTP client every J-STAGE request of a server process goes through."""
    return HttpClient(politeness=COURTESY, timeout=timeout, user_agent=USER_AGENT,
                      transport=transport, clock=clock)
