"""bioRxiv and medRxiv, searched by keyword through Europe PMC's preprint index.

bioRxiv's own API (``api.biorxiv.org``) has no keyword search: it lists posts by date window,
by count of most recent posts, or by DOI. Two ways out were weighed
(``research/literature-apis.md`` §1.3): scanning the most recent 100–200 posts and ranking
them by term overlap (shallow: it never sees an older paper), or Europe PMC, which indexes both
servers' preprints (``SRC:PPR``) with relevance ranking, year filters and abstracts. This
provider takes Europe PMC:

``GET {BIORXIV_URL}/search?query=(…) AND SRC:PPR AND (PUBLISHER:"bioRxiv" OR
PUBLISHER:"medRxiv")&format=json&resultType=core&pageSize=N`` — the request and the reader of
:mod:`.europepmc`, with the scope turned round.

One upstream, one vote: the :mod:`.europepmc` provider excludes exactly these preprints
(``NOT (SRC:PPR AND …)``), so the two lists are disjoint by construction, and this provider's
:attr:`ProviderInfo.upstream` is ``"europepmc"`` so that fusion can count the two as one voter
should a merge ever join them (by title, say).

The query is sent in the sanitised keyword form (the seed lists bioRxiv among the keyword-only
providers), each negated term as Europe PMC's ``NOT term``; a query that is exactly a DOI
becomes ``DOI:"…"``. The two Europe PMC providers reach one host and share its one paced
client: at EBI, request starts at least :data:`MIN_INTERVAL` seconds apart and at most two in
flight, whichever of the two sends them (before, each had its own client, and together they
started up to three requests a second there, overlapping).
"""

from __future__ import annotations

from ...core.offload import run_blocking
from .. import sources
from ..identifiers import normalize_doi
from ..models import SearchRequest
from ..query import split_negations
from .base import Fetcher, Page, ProviderInfo, ProviderSettings
from .common import ACCEPT_JSON, FixedPace, keywords
from .europepmc import BIORXIV_PUBLISHERS, IN_FLIGHT, read_search, search_params

__all__ = [
    "DEFAULT_URL",
    "MIN_INTERVAL",
    "PROVIDER",
    "SCOPE",
    "UPSTREAM",
    "URL_SETTING",
    "BiorxivProvider",
    "params_for",
]

URL_SETTING = "BIORXIV_URL"
DEFAULT_URL = "https://www.ebi.ac.uk/europepmc/webservices/rest"
"""Europe PMC's REST base: bioRxiv keyword search goes there (see the module docstring)."""
UPSTREAM = "europepmc"
MIN_INTERVAL = 0.5
"""Seconds between request starts at EBI: the host's pace, shared with Europe PMC (two a
second for both together, where each alone used to keep its own)."""
SCOPE = f"SRC:PPR AND {BIORXIV_PUBLISHERS}"

INFO = ProviderInfo(
    id="biorxiv",
    source=sources.BIORXIV,
    url_setting=URL_SETTING,
    default_url=DEFAULT_URL,
    limitations=(
        "bioRxiv's own API has no keyword search; this source searches bioRxiv and medRxiv "
        "preprints in Europe PMC's preprint index, so a preprint posted in the last days may "
        "not be found yet.",
        "Preprints only: the journal version of a paper is a separate record.",
    ),
    native_syntax=False,
    upstream=UPSTREAM,
    exclusion="NOT (Europe PMC syntax) after the keywords",
)


def params_for(request: SearchRequest, *, offset: int = 0) -> dict[str, str]:
    """The exact ``search`` query parameters: the sanitised keywords, scoped to the servers.

    Raises:
        CoreError: INVALID_INPUT when the query has no plain word left.
    """
    doi = normalize_doi(request.query)
    if doi:
        query = f'DOI:"{doi}"'
    else:
        parts = split_negations(request.query)
        query = keywords(parts.positive) + "".join(f" NOT {e.shown()}" for e in parts.excluded)
    keyword_request = SearchRequest(
        query=query,
        limit=request.limit,
        year_from=request.year_from,
        year_to=request.year_to,
        open_access=request.open_access,
        abstract_max_chars=request.abstract_max_chars,
    )
    return search_params(keyword_request, scope=SCOPE, offset=offset)


class BiorxivProvider(FixedPace):
    """bioRxiv/medRxiv keyword search through Europe PMC (see the module docstring)."""

    info = INFO
    min_interval = MIN_INTERVAL
    concurrency = IN_FLIGHT

    async def search(self, http: Fetcher, settings: ProviderSettings, request: SearchRequest,
                     *, offset: int = 0) -> Page:
        """One Europe PMC ``search`` request scoped to bioRxiv and medRxiv preprints."""
        url = f"{settings.base_url.rstrip('/')}/search"
        response = await http.get(url, params_for(request, offset=offset), headers=ACCEPT_JSON)
        return await run_blocking(read_search, response.content, provider="biorxiv",
                              limit=request.limit, offset=offset)


PROVIDER = BiorxivProvider()
