"""Europe PMC REST search (``resultType=core``), which also serves the bioRxiv/medRxiv provider.

Request: ``GET {EUROPEPMC_URL}/search?query=…&format=json&resultType=core&pageSize=N``.
Europe PMC's own syntax (``TITLE:``, ``AUTH:``, ``DOI:"…"``, Boolean) passes through inside
parentheses; years become ``PUB_YEAR:[a TO b]`` and open access ``OPEN_ACCESS:y`` in the query
(Europe PMC has no separate parameters for them). ``sort`` is left unset: relevance is the
default. ``resultType=core`` is what carries abstracts, author lists, journal, licence and full
text links; ``lite`` and ``idlist`` have none of them.

bioRxiv and medRxiv preprints are the :mod:`.biorxiv` provider's share of the same index, so
this provider's query excludes them (:data:`EXCLUDE_BIORXIV`): one upstream never ranks one
paper into two lists.

Open-access evidence (the seed's rule): ``isOpenAccess == "Y"`` or a licence; "free to read"
(``inEPMC`` with ``availabilityCode F``) is not open access. Europe PMC abstracts are HTML
(``<h4>Objective</h4>…``) and are cleaned.

Europe PMC publishes no rate limit; the client keeps at least :data:`MIN_INTERVAL` seconds
between request starts.
"""

from __future__ import annotations

from typing import Any

from ...core.http import HttpClient
from ...core.responses import Source
from ..identifiers import doi_url, normalize_doi, normalize_pmcid, normalize_pmid, pubmed_url
from ..models import LiteratureRecord, OpenAccessEvidence, SearchRequest
from ..text import clean_markup, collapse
from .base import ProviderInfo, ProviderSettings
from .common import (
    FixedPacing,
    as_dict,
    as_list,
    as_str,
    as_year,
    unreadable,
)

__all__ = [
    "BIORXIV_PUBLISHERS",
    "DEFAULT_URL",
    "EXCLUDE_BIORXIV",
    "MIN_INTERVAL",
    "PROVIDER",
    "URL_SETTING",
    "EuropePmcProvider",
    "open_access_evidence",
    "parse",
    "query_for",
    "search_params",
]

URL_SETTING = "EUROPEPMC_URL"
DEFAULT_URL = "https://www.ebi.ac.uk/europepmc/webservices/rest"
MIN_INTERVAL = 0.5
"""Seconds between request starts (no published limit; two a second is conservative)."""
BIORXIV_PUBLISHERS = '(PUBLISHER:"bioRxiv" OR PUBLISHER:"medRxiv")'
"""The Europe PMC clause naming the two preprint servers of the bioRxiv provider."""
EXCLUDE_BIORXIV = f"NOT (SRC:PPR AND {BIORXIV_PUBLISHERS})"
"""Appended to this provider's query: those preprints are the bioRxiv provider's votes."""

INFO = ProviderInfo(
    id="europepmc",
    source=Source(
        id="europepmc",
        name="Europe PMC",
        licence="Europe PMC metadata; abstracts and full texts under their own licences",
        url="https://europepmc.org/",
        credit="Europe PMC (EMBL-EBI)",
    ),
    url_setting=URL_SETTING,
    default_url=DEFAULT_URL,
    limitations=(
        "bioRxiv and medRxiv preprints are left to the biorxiv source (same index, one vote).",
        "Open access means Europe PMC's open-access flag or a licence; free-to-read is not OA.",
    ),
    native_syntax=True,
)


def query_for(request: SearchRequest, *, scope: str | None = EXCLUDE_BIORXIV) -> str:
    """The Europe PMC query: the user's (in parentheses), the filters, then ``scope``."""
    clauses = [f"({request.query.strip()})"]
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


def search_params(request: SearchRequest, *, scope: str | None = EXCLUDE_BIORXIV) -> dict[str, str]:
    """The exact ``search`` query parameters for ``request``."""
    return {
        "query": query_for(request, scope=scope),
        "format": "json",
        "resultType": "core",
        "pageSize": str(request.limit),
    }


def parse(payload: Any, *, provider: str = "europepmc") -> list[LiteratureRecord]:
    """Read a Europe PMC ``search`` JSON answer into records, in rank order.

    Works on every ``resultType`` (``lite`` gives no abstract or licence); results without a
    title (``idlist``) are skipped. ``provider`` names who asked (``biorxiv`` shares this
    reader).

    Raises:
        CoreError: API_ERROR when the payload has no ``resultList``.
    """
    body = as_dict(payload)
    if "resultList" not in body:
        raise unreadable("Europe PMC", "search result")
    records: list[LiteratureRecord] = []
    for item in as_list(as_dict(body["resultList"]).get("result")):
        record = _record(as_dict(item), len(records) + 1, provider)
        if record is not None:
            records.append(record)
    return records


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


class EuropePmcProvider(FixedPacing):
    """Europe PMC as the service uses it (see the module docstring for the request)."""

    info = INFO
    min_interval = MIN_INTERVAL

    async def search(
        self, http: HttpClient, settings: ProviderSettings, request: SearchRequest
    ) -> list[LiteratureRecord]:
        """One ``search`` request; bioRxiv/medRxiv preprints excluded."""
        url = f"{settings.base_url.rstrip('/')}/search"
        return parse(await http.get_json(url, search_params(request)))


PROVIDER = EuropePmcProvider()
