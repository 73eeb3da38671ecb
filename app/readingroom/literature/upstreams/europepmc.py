"""Europe PMC REST search (``resultType=core``), which also serves the bioRxiv/medRxiv provider.

Request: ``GET {EUROPEPMC_URL}/search?query=…&format=json&resultType=core&pageSize=N``.
Europe PMC's own syntax (``TITLE:``, ``AUTH:``, ``DOI:"…"``, Boolean ``AND``/``OR``/``NOT``)
passes through inside parentheses, as typed; a ``-term`` is written ``NOT term`` (Europe PMC's
exclusion). Years become ``PUB_YEAR:[a TO b]`` and open access ``OPEN_ACCESS:y`` in the query
(Europe PMC has no separate parameters for them). Europe PMC pages by page number, so records
after an offset K are read from one page of ``K + N`` (the first K dropped). ``sort`` is left
unset: relevance is the default. ``resultType=core`` is what carries abstracts, author lists,
journal, licence and full text links; ``lite`` and ``idlist`` have none of them.

bioRxiv and medRxiv preprints are the :mod:`.biorxiv` provider's share of the same index, so
this provider's query excludes them (:data:`EXCLUDE_BIORXIV`): one upstream never ranks one
paper into two lists.

Open-access evidence (the seed's rule): ``isOpenAccess == "Y"`` or a licence; "free to read"
(``inEPMC`` with ``availabilityCode F``) is not open access. Europe PMC abstracts are HTML
(``<h4>Objective</h4>…``) and are cleaned.

Europe PMC publishes no rate limit; its host (which the bioRxiv provider reaches too) is paced
for both together: request starts at least :data:`MIN_INTERVAL` seconds apart — two a second
at most — and at most :data:`IN_FLIGHT` requests at once.

A page is trusted as empty only when ``hitCount`` says 0 (or the offset is past it); a
``resultList`` or ``result`` of another type, a count above zero with no result, or a page of
unreadable results is an error.
"""

from __future__ import annotations

from typing import Any

from ...core.offload import run_blocking
from .. import sources
from ..identifiers import doi_url, normalize_doi, normalize_pmcid, normalize_pmid, pubmed_url
from ..markup import clean_markup, collapse
from ..models import LiteratureRecord, OpenAccessEvidence, SearchRequest
from ..query import minus_as_not
from .base import Fetcher, Page, ProviderInfo, ProviderSettings
from .common import (
    ACCEPT_JSON,
    FixedPace,
    as_dict,
    as_list,
    as_str,
    as_year,
    checked_page,
    count_value,
    list_field,
    load_json,
    unreadable,
)

__all__ = [
    "BIORXIV_PUBLISHERS",
    "DEFAULT_URL",
    "EXCLUDE_BIORXIV",
    "IN_FLIGHT",
    "MIN_INTERVAL",
    "PROVIDER",
    "URL_SETTING",
    "EuropePmcProvider",
    "open_access_evidence",
    "parse",
    "query_for",
    "read_search",
    "search_params",
]

URL_SETTING = "EUROPEPMC_URL"
DEFAULT_URL = "https://www.ebi.ac.uk/europepmc/webservices/rest"
MIN_INTERVAL = 0.5
"""Seconds between request starts at EBI, for Europe PMC and bioRxiv together (no published
limit; the research suggests 2-5 a second, low concurrency)."""
IN_FLIGHT = 2
"""Requests at once at EBI, for both providers together."""
BIORXIV_PUBLISHERS = '(PUBLISHER:"bioRxiv" OR PUBLISHER:"medRxiv")'
"""The Europe PMC clause naming the two preprint servers of the bioRxiv provider."""
EXCLUDE_BIORXIV = f"NOT (SRC:PPR AND {BIORXIV_PUBLISHERS})"
"""Appended to this provider's query: those preprints are the bioRxiv provider's votes."""

INFO = ProviderInfo(
    id="europepmc",
    source=sources.EUROPEPMC,
    url_setting=URL_SETTING,
    default_url=DEFAULT_URL,
    limitations=(
        "bioRxiv and medRxiv preprints are left to the biorxiv source (same index, one vote).",
        "Open access means Europe PMC's open-access flag or a licence; free-to-read is not OA.",
    ),
    native_syntax=True,
    exclusion="NOT (Europe PMC syntax): sent as typed; -term is written NOT term",
)


def query_for(request: SearchRequest, *, scope: str | None = EXCLUDE_BIORXIV) -> str:
    """The Europe PMC query: the user's (in parentheses), the filters, then ``scope``."""
    clauses = [f"({minus_as_not(request.query)})"]
    if request.year_from is not None or request.year_to is not None:
        low = request.year_from if request.year_from is not None else 1000
        high = request.year_to if request.year_to is not None else 3000
        clauses.append(f"PUB_YEAR:[{low} TO {high}]")
    if request.open_access:
        clauses.append("OPEN_ACCESS:y")
    query = " AND ".join(clauses)
    if scope is None:
        return query
    joiner = " " if scope.startswith("NOT ") else " AND "
    return f"{query}{joiner}{scope}"


def search_params(request: SearchRequest, *, scope: str | None = EXCLUDE_BIORXIV,
                  offset: int = 0) -> dict[str, str]:
    """The exact ``search`` query parameters for ``request`` (one page of ``offset + N``)."""
    return {
        "query": query_for(request, scope=scope),
        "format": "json",
        "resultType": "core",
        "pageSize": str(offset + request.limit),
    }


def parse(payload: Any, *, provider: str = "europepmc", limit: int | None = None,
          offset: int = 0) -> Page:
    """Read a Europe PMC ``search`` JSON answer into a page, in rank order.

    Works on every ``resultType`` (``lite`` gives no abstract or licence); a result without a
    title (``idlist``) counts as unreadable. ``provider`` names who asked (``biorxiv`` shares
    this reader). At most ``offset + limit`` results are read; the first ``offset`` are
    dropped (Europe PMC pages by page number, so a later page is read from the first).

    Raises:
        CoreError: API_ERROR when ``resultList`` is missing or not an object, ``result`` is not
            a list, ``hitCount`` is above the offset with no result, or none is readable.
    """
    name = "bioRxiv (Europe PMC)" if provider == "biorxiv" else "Europe PMC"
    body = as_dict(payload)
    if "resultList" not in body:
        raise unreadable(name, "search result")
    result_list = body["resultList"]
    if not isinstance(result_list, dict):
        kind = "null" if result_list is None else type(result_list).__name__
        raise unreadable(name, "search result", f"its `resultList` is {kind}")
    items = list_field(result_list, "result", name, "search result") or []
    total = count_value(body.get("hitCount"))
    window = items[offset:offset + limit if limit is not None else None]
    records: list[LiteratureRecord] = []
    bad = 0
    for item in window:
        record = (_record(item, offset + len(records) + 1, provider)
                  if isinstance(item, dict) else None)
        if record is None:
            bad += 1
        else:
            records.append(record)
    return checked_page(name, records, total=total, unreadable_count=bad, offset=offset)


def open_access_evidence(item: dict[str, Any]) -> OpenAccessEvidence:
    """The seed's OA rule on one result: the OA flag, else a licence, else what is known."""
    licence = as_str(item.get("license"))
    flag = as_str(item.get("isOpenAccess"))
    if flag == "Y":
        return OpenAccessEvidence(is_open_access=True, licence=licence, source="oa_flag")
    if licence:
        return OpenAccessEvidence(is_open_access=True, licence=licence, source="licence")
    if flag == "N":
        return OpenAccessEvidence(is_open_access=False, source="oa_flag")
    return OpenAccessEvidence()


def _record(item: dict[str, Any], rank: int, provider: str) -> LiteratureRecord | None:
    title = clean_markup(as_str(item.get("title")))
    if not title:
        return None
    title = " ".join(title.split("\n"))
    pmid = normalize_pmid(as_str(item.get("pmid")))
    pmcid = normalize_pmcid(as_str(item.get("pmcid")))
    doi = normalize_doi(as_str(item.get("doi")))
    journal_info = as_dict(item.get("journalInfo"))
    journal = as_dict(journal_info.get("journal"))
    venue = (
        collapse(as_str(journal.get("title")))
        or collapse(as_str(item.get("journalTitle")))
        or collapse(as_str(as_dict(item.get("bookOrReportDetails")).get("publisher")))
    )
    year = as_year(item.get("pubYear")) or as_year(journal_info.get("yearOfPublication"))
    source = as_str(item.get("source"))
    ident = as_str(item.get("id"))
    if pmid:
        url = pubmed_url(pmid)
    elif doi:
        url = doi_url(doi)
    elif source and ident:
        url = f"https://europepmc.org/article/{source}/{ident}"
    else:
        url = None
    return LiteratureRecord(
        provider=provider,
        rank=rank,
        title=title,
        provider_id=f"{source}:{ident}" if source and ident else ident,
        doi=doi,
        pmid=pmid,
        pmcid=pmcid,
        year=year,
        authors=_authors(item),
        venue=venue,
        abstract=clean_markup(as_str(item.get("abstractText"))),
        url=url,
        pdf_url=_pdf_url(item),
        open_access=open_access_evidence(item),
    )


def _authors(item: dict[str, Any]) -> tuple[str, ...]:
    names: list[str] = []
    for author in as_list(as_dict(item.get("authorList")).get("author")):
        entry = as_dict(author)
        first, last = as_str(entry.get("firstName")), as_str(entry.get("lastName"))
        name = f"{first} {last}" if first and last else as_str(entry.get("fullName")) or last
        name = as_str(entry.get("collectiveName")) if name is None else name
        if name:
            names.append(name)
    if names:
        return tuple(names)
    text = as_str(item.get("authorString"))
    if not text:
        return ()
    return tuple(n.strip() for n in text.rstrip(".").split(",") if n.strip())


def _pdf_url(item: dict[str, Any]) -> str | None:
    """An open PDF link (``OA`` or ``F`` availability), Europe PMC's own first."""
    links = [as_dict(u) for u in as_list(as_dict(item.get("fullTextUrlList")).get("fullTextUrl"))]
    pdfs = [
        u for u in links
        if u.get("documentStyle") == "pdf" and u.get("availabilityCode") in ("OA", "F")
        and as_str(u.get("url"))
    ]
    pdfs.sort(key=lambda u: u.get("site") != "Europe_PMC")
    return as_str(pdfs[0].get("url")) if pdfs else None


class EuropePmcProvider(FixedPace):
    """Europe PMC as the service uses it (see the module docstring for the request)."""

    info = INFO
    min_interval = MIN_INTERVAL
    concurrency = IN_FLIGHT

    async def search(self, http: Fetcher, settings: ProviderSettings, request: SearchRequest,
                     *, offset: int = 0) -> Page:
        """One ``search`` request; bioRxiv/medRxiv preprints excluded."""
        url = f"{settings.base_url.rstrip('/')}/search"
        response = await http.get(url, search_params(request, offset=offset),
                                  headers=ACCEPT_JSON)
        return await run_blocking(read_search, response.content, provider="europepmc",
                              limit=request.limit, offset=offset)


def read_search(body: bytes, *, provider: str, limit: int, offset: int) -> Page:
    """A ``search`` body decoded (bounded) and read: :func:`parse` of :func:`load_json`."""
    payload = load_json(body, asked=offset + limit, provider="Europe PMC")
    return parse(payload, provider=provider, limit=limit, offset=offset)


PROVIDER = EuropePmcProvider()
