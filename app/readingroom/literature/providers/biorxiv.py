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
providers); a query that is exactly a DOI becomes ``DOI:"…"``. The two Europe PMC providers
have separate clients, each with its own floor; together they start at most
``1/europepmc.MIN_INTERVAL + 1/MIN_INTERVAL`` requests a second at EBI.
"""

from __future__ import annotations

from ...core.http import HttpClient
from ...core.responses import Source
from ..identifiers import normalize_doi
from ..models import LiteratureRecord, SearchRequest
from .base import ProviderInfo, ProviderSettings
from .common import FixedPacing, keywords
from .europepmc import BIORXIV_PUBLISHERS, parse, search_params

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
MIN_INTERVAL = 1.0
"""Seconds between request starts: EBI also serves the Europe PMC provider."""
SCOPE = f"SRC:PPR AND {BIORXIV_PUBLISHERS}"

INFO = ProviderInfo(
    id="biorxiv",
    source=Source(
        id="biorxiv",
        name="bioRxiv / medRxiv (via Europe PMC's preprint index)",
        licence="Preprint metadata; each preprint under the licence its authors chose",
        url="https://www.biorxiv.org/",
        credit="bioRxiv and medRxiv (Cold Spring Harbor Laboratory), indexed by Europe PMC",
    ),
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
)


def params_for(request: SearchRequest) -> dict[str, str]:
    """The exact ``search`` query parameters: the sanitised keywords, scoped to the servers.

    Raises:
        CoreError: INVALID_INPUT when the query has no plain word left.
    """
    doi = normalize_doi(request.query)
    keyword_request = SearchRequest(
        query=f'DOI:"{doi}"' if doi else keywords(request.query),
        limit=request.limit,
        year_from=request.year_from,
        year_to=request.year_to,
        open_access=request.open_access,
        abstract_max_chars=request.abstract_max_chars,
    )
    return search_params(keyword_request, scope=SCOPE)


class BiorxivProvider(FixedPacing):
    """bioRxiv/medRxiv keyword search through Europe PMC (see the module docstring)."""

    info = INFO
    min_interval = MIN_INTERVAL

    async def search(
        self, http: HttpClient, settings: ProviderSettings, request: SearchRequest
    ) -> list[LiteratureRecord]:
        """One Europe PMC ``search`` request scoped to bioRxiv and medRxiv preprints."""
        url = f"{settings.base_url.rstrip('/')}/search"
        return parse(await http.get_json(url, params_for(request)), provider="biorxiv")


PROVIDER = BiorxivProvider()
