"""Semantic Scholar Academic Graph ``/paper/search`` (relevance search).

Request: ``GET {SEMANTIC_SCHOLAR_URL}/graph/v1/paper/search?query=<keywords>&limit=N&fields=…``
with ``year=a-b`` (``a-`` / ``-b`` for one bound) and the value-less ``openAccessPdf`` flag for
open access; header ``x-api-key`` when ``SEMANTIC_SCHOLAR_API_KEY`` is set. The query is the
sanitised keyword form with hyphens made spaces (S2 has no query syntax and matches nothing
for some hyphenated terms); ``offset=K`` for a later page. Its relevance search has "no special
query syntax" (Boolean syntax is ``/paper/search/bulk``'s, which has no relevance ranking), so
a negated term cannot be sent: it is left out and the answer says so.

Rate: 1 request a second, one at a time, with or without a key (the keyless pool is shared
and often answers 429, which becomes the ``rate_limited`` status).

Zero hits is ``{"total": 0, "offset": 0}`` with no ``data`` key: trusted only with ``total``
0. ``data`` of another type, ``total`` above the offset with no paper, or a page of unreadable
papers (``[null, null, 3]``) is an error. Open-access evidence:
``openAccessPdf`` with a URL and a status other than ``CLOSED`` (CLOSED entries can carry a
URL), or the ``isOpenAccess`` flag.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...core.errors import Code, CoreError
from ...core.offload import run_blocking
from .. import sources
from ..identifiers import (
    arxiv_from_doi,
    normalize_arxiv,
    normalize_doi,
    normalize_pmcid,
    normalize_pmid,
)
from ..markup import collapse
from ..models import LiteratureRecord, OpenAccessEvidence, SearchRequest
from ..query import dropped_note, split_negations
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
    keywords,
    list_field,
    load_json,
    setting,
    unreadable,
)

__all__ = [
    "API_KEY_HEADER",
    "DEFAULT_URL",
    "FIELDS",
    "MIN_INTERVAL",
    "PROVIDER",
    "URL_SETTING",
    "SemanticScholarProvider",
    "headers_for",
    "open_access_evidence",
    "params_for",
    "parse",
]

URL_SETTING = "SEMANTIC_SCHOLAR_URL"
DEFAULT_URL = "https://api.semanticscholar.org"
MIN_INTERVAL = 1.0
"""Seconds from the end of one exchange to the next start (serial): 1 request a second."""
API_KEY_HEADER = "x-api-key"
FIELDS = (
    "paperId,title,abstract,authors,year,venue,journal,externalIds,isOpenAccess,"
    "openAccessPdf,publicationDate,url"
)

INFO = ProviderInfo(
    id="semantic-scholar",
    source=sources.SEMANTIC_SCHOLAR,
    url_setting=URL_SETTING,
    default_url=DEFAULT_URL,
    limitations=(
        "Keyword search only: fields, wildcards, Boolean operators and hyphens are removed.",
        "Without SEMANTIC_SCHOLAR_API_KEY requests share a public pool and are often "
        "refused (rate_limited).",
        "Abstracts are often missing.",
    ),
    optional_settings=("SEMANTIC_SCHOLAR_API_KEY",),
    native_syntax=False,
    exclusion="none: its relevance search has no query syntax; a negated term is left out and "
    "the answer says so",
)


def params_for(request: SearchRequest, *, offset: int = 0) -> dict[str, str]:
    """The exact ``/paper/search`` query parameters.

    Raises:
        CoreError: INVALID_INPUT when the query has no plain word left.
    """
    params = {
        "query": keywords(split_negations(request.query).positive, hyphens=False),
        "limit": str(request.limit),
        "fields": FIELDS,
    }
    if offset:
        params["offset"] = str(offset)
    if request.year_from is not None or request.year_to is not None:
        low = "" if request.year_from is None else str(request.year_from)
        high = "" if request.year_to is None else str(request.year_to)
        params["year"] = f"{low}-{high}"
    if request.open_access:
        params["openAccessPdf"] = ""
    return params


def headers_for(values: Mapping[str, str]) -> dict[str, str]:
    """``x-api-key`` when a key is configured (a name the core redacts), else nothing."""
    key = setting(values, "SEMANTIC_SCHOLAR_API_KEY")
    return {API_KEY_HEADER: key} if key else {}


def parse(payload: Any, *, limit: int | None = None, offset: int = 0) -> Page:
    """Read a ``/paper/search`` answer (or a ``/paper/batch`` list) into a page.

    ``{"total": 0, "offset": 0}`` without ``data`` is a real zero; ``null`` batch entries (an
    unknown id) are skipped; papers without a title count as unreadable. At most ``limit``
    papers are read.

    Raises:
        CoreError: NOT_FOUND for S2's ``{"error": "… not found"}``; API_ERROR for any other
            ``error`` body, a shape that is neither, ``data`` that is not a list, ``total``
            above the offset with no paper, or no readable paper.
    """
    if isinstance(payload, list):
        if not payload:
            raise unreadable("Semantic Scholar", "search result", "an empty list")
        items: list[Any] = [p for p in payload if p is not None]
        if not items:
            raise CoreError(Code.NOT_FOUND, "Semantic Scholar has none of these records.",
                            details={"provider": "semantic-scholar"})
        total: int | None = len(items)
    else:
        body = as_dict(payload)
        error = as_str(body.get("error"))
        if error:
            if "not found" in error.lower():
                raise CoreError(Code.NOT_FOUND, "Semantic Scholar has no such record.",
                                details={"provider": "semantic-scholar"})
            raise unreadable("Semantic Scholar", "search result")
        if "data" not in body and "total" not in body:
            raise unreadable("Semantic Scholar", "search result")
        items = list_field(body, "data", "Semantic Scholar", "search result") or []
        total = count_value(body.get("total"))
    records: list[LiteratureRecord] = []
    bad = 0
    for item in items[:limit]:
        record = _record(item, offset + len(records) + 1) if isinstance(item, dict) else None
        if record is None:
            bad += 1
        else:
            records.append(record)
    return checked_page("Semantic Scholar", records, total=total, unreadable_count=bad,
                        offset=offset)


def open_access_evidence(paper: dict[str, Any]) -> OpenAccessEvidence:
    """``openAccessPdf`` with a URL and a status other than CLOSED, or ``isOpenAccess``."""
    pdf = as_dict(paper.get("openAccessPdf"))
    status = as_str(pdf.get("status"))
    if as_str(pdf.get("url")) and status and status.upper() != "CLOSED":
        return OpenAccessEvidence(is_open_access=True, source="oa_pdf")
    flag = paper.get("isOpenAccess")
    if flag is True:
        return OpenAccessEvidence(is_open_access=True, source="oa_flag")
    if flag is False:
        return OpenAccessEvidence(is_open_access=False, source="oa_flag")
    return OpenAccessEvidence()


def _record(paper: dict[str, Any], rank: int) -> LiteratureRecord | None:
    title = collapse(as_str(paper.get("title")))
    if not title:
        return None
    external = as_dict(paper.get("externalIds"))
    doi = normalize_doi(as_str(external.get("DOI")))
    arxiv = normalize_arxiv(as_str(external.get("ArXiv")))
    arxiv_id = arxiv.id if arxiv else arxiv_from_doi(doi)
    authors = tuple(
        name for name in (as_str(as_dict(a).get("name")) for a in as_list(paper.get("authors")))
        if name
    )
    pdf = as_dict(paper.get("openAccessPdf"))
    evidence = open_access_evidence(paper)
    venue = as_str(paper.get("venue")) or as_str(as_dict(paper.get("journal")).get("name"))
    return LiteratureRecord(
        provider="semantic-scholar",
        rank=rank,
        title=title,
        provider_id=as_str(paper.get("paperId")),
        doi=doi,
        pmid=normalize_pmid(as_str(external.get("PubMed"))),
        pmcid=normalize_pmcid(as_str(external.get("PubMedCentral"))),
        arxiv_id=arxiv_id,
        year=as_year(paper.get("year")),
        authors=authors,
        venue=venue,
        abstract=collapse(as_str(paper.get("abstract"))),
        url=as_str(paper.get("url")),
        pdf_url=as_str(pdf.get("url")) if evidence.source == "oa_pdf" else None,
        open_access=evidence,
    )


class SemanticScholarProvider(FixedPace):
    """Semantic Scholar as the service uses it (see the module docstring)."""

    info = INFO
    min_interval = MIN_INTERVAL
    serial = True

    def headers(self, settings: ProviderSettings) -> Mapping[str, str] | None:
        """The API key (if any) as ``x-api-key``."""
        return headers_for(settings.values)

    async def search(self, http: Fetcher, settings: ProviderSettings, request: SearchRequest,
                     *, offset: int = 0) -> Page:
        """One ``/paper/search`` request; the body decoded and read off the event loop."""
        url = f"{settings.base_url.rstrip('/')}/graph/v1/paper/search"
        response = await http.get(url, params_for(request, offset=offset), headers=ACCEPT_JSON)
        page = await run_blocking(_read, response.content, request.limit, offset)
        excluded = split_negations(request.query).excluded
        return page.with_notes(dropped_note(excluded)) if excluded else page


def _read(body: bytes, limit: int, offset: int) -> Page:
    payload = load_json(body, asked=limit, provider="Semantic Scholar")
    return parse(payload, limit=limit, offset=offset)


PROVIDER = SemanticScholarProvider()
