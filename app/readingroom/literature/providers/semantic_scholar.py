"""Semantic Scholar Academic Graph ``/paper/search`` (relevance search).

Request: ``GET {SEMANTIC_SCHOLAR_URL}/graph/v1/paper/search?query=<keywords>&limit=N&fields=…``
with ``year=a-b`` (``a-`` / ``-b`` for one bound) and the value-less ``openAccessPdf`` flag for
open access; header ``x-api-key`` when ``SEMANTIC_SCHOLAR_API_KEY`` is set. The query is the
sanitised keyword form with hyphens made spaces (S2 has no query syntax and matches nothing
for some hyphenated terms).

Rate: 1 request a second, one at a time, with or without a key (the keyless pool is shared
and often answers 429, which becomes the ``rate_limited`` status).

Zero hits is ``{"total": 0, "offset": 0}`` with no ``data`` key. Open-access evidence:
``openAccessPdf`` with a URL and a status other than ``CLOSED`` (CLOSED entries can carry a
URL), or the ``isOpenAccess`` flag.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...core.errors import Code, CoreError
from ...core.http import HttpClient
from ...core.responses import Source
from ..identifiers import (
    arxiv_from_doi,
    normalize_arxiv,
    normalize_doi,
    normalize_pmcid,
    normalize_pmid,
)
from ..models import LiteratureRecord, OpenAccessEvidence, SearchRequest
from ..text import collapse
from .base import ProviderInfo, ProviderSettings
from .common import (
    FixedPacing,
    as_dict,
    as_list,
    as_str,
    as_year,
    keywords,
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
    source=Source(
        id="semantic-scholar",
        name="Semantic Scholar",
        licence="Semantic Scholar API licence; abstracts under their publishers' terms",
        url="https://www.semanticscholar.org/",
        credit="Data from Semantic Scholar (Allen Institute for AI)",
    ),
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
)


def params_for(request: SearchRequest) -> dict[str, str]:
    """The exact ``/paper/search`` query parameters.

    Raises:
        CoreError: INVALID_INPUT when the query has no plain word left.
    """
    params = {
        "query": keywords(request.query, hyphens=False),
        "limit": str(request.limit),
        "fields": FIELDS,
    }
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


def parse(payload: Any) -> list[LiteratureRecord]:
    """Read a ``/paper/search`` answer (or a ``/paper/batch`` list) into records.

    ``{"total": 0, "offset": 0}`` without ``data`` is a real zero; ``null`` batch entries and
    papers without a title are skipped.

    Raises:
        CoreError: NOT_FOUND for S2's ``{"error": "… not found"}``; API_ERROR for any other
            ``error`` body or a shape that is neither.
    """
    if isinstance(payload, list):
        items = payload
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
        items = as_list(body.get("data"))
    records: list[LiteratureRecord] = []
    for item in items:
        if item is None:
            continue
        record = _record(as_dict(item), len(records) + 1)
        if record is not None:
            records.append(record)
    return records


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


class SemanticScholarProvider(FixedPacing):
    """Semantic Scholar as the service uses it (see the module docstring)."""

    info = INFO
    min_interval = MIN_INTERVAL
    serial = True

    def headers(self, values: Mapping[str, str]) -> Mapping[str, str] | None:
        """The API key (if any) as ``x-api-key``."""
        return headers_for(values)

    async def search(
        self, http: HttpClient, settings: ProviderSettings, request: SearchRequest
    ) -> list[LiteratureRecord]:
        """One ``/paper/search`` request."""
        url = f"{settings.base_url.rstrip('/')}/graph/v1/paper/search"
        return parse(await http.get_json(url, params_for(request)))


PROVIDER = SemanticScholarProvider()
