"""OpenAlex ``/works`` search.

Request: ``GET {OPENALEX_URL}/works?search=<keywords>&per-page=N&select=…`` with
``filter=from_publication_date:YYYY-01-01,to_publication_date:YYYY-12-31,is_oa:true`` for the
options that are set, ``api_key`` when ``OPENALEX_API_KEY`` is set and ``mailto`` when
``OPENALEX_MAILTO`` is. Filter values are comma-separated, so no user text ever goes into
``filter``; the query is the sanitised keyword form in ``search``.

The key travels in the query string: the URL is a credential. The core client reports URLs as
``scheme://host/path`` only and never logs a query string; ``api_key`` is also one of the
names the ledger redacts.

Since 13 February 2026 OpenAlex wants a (free) key; without one the daily budget is a handful
of searches, and a refusal surfaces as this provider's ``rate_limited`` status. Abstracts
come as ``abstract_inverted_index`` (word → positions) and are rebuilt in order.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

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
from ..text import clean_markup
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
    "DEFAULT_URL",
    "MIN_INTERVAL",
    "PROVIDER",
    "SELECT",
    "URL_SETTING",
    "OpenAlexProvider",
    "open_access_evidence",
    "params_for",
    "parse",
    "rebuild_abstract",
]

URL_SETTING = "OPENALEX_URL"
DEFAULT_URL = "https://api.openalex.org"
MIN_INTERVAL = 0.1
"""Seconds between request starts (OpenAlex allows 100 a second; the budget is the limit)."""
SELECT = (
    "id,doi,title,display_name,publication_year,ids,authorships,primary_location,"
    "best_oa_location,locations,open_access,abstract_inverted_index,type"
)

INFO = ProviderInfo(
    id="openalex",
    source=Source(
        id="openalex",
        name="OpenAlex",
        licence="CC0",
        url="https://openalex.org/",
        credit="Data from OpenAlex (OurResearch), CC0",
    ),
    url_setting=URL_SETTING,
    default_url=DEFAULT_URL,
    limitations=(
        "Keyword search only: fields, wildcards and Boolean operators are removed.",
        "Without OPENALEX_API_KEY the daily allowance is a few searches; after it, "
        "OpenAlex answers rate_limited.",
    ),
    optional_settings=("OPENALEX_API_KEY", "OPENALEX_MAILTO"),
    native_syntax=False,
)


def params_for(request: SearchRequest, values: Mapping[str, str]) -> dict[str, str]:
    """The exact ``/works`` query parameters (the key among them when configured).

    Raises:
        CoreError: INVALID_INPUT when the query has no plain word left.
    """
    params = {"search": keywords(request.query), "per-page": str(request.limit), "select": SELECT}
    filters = []
    if request.year_from is not None:
        filters.append(f"from_publication_date:{request.year_from}-01-01")
    if request.year_to is not None:
        filters.append(f"to_publication_date:{request.year_to}-12-31")
    if request.open_access:
        filters.append("is_oa:true")
    if filters:
        params["filter"] = ",".join(filters)
    key = setting(values, "OPENALEX_API_KEY")
    if key:
        params["api_key"] = key
    mailto = setting(values, "OPENALEX_MAILTO")
    if mailto:
        params["mailto"] = mailto
    return params


def rebuild_abstract(index: Any) -> str | None:
    """The abstract text from an ``abstract_inverted_index`` (None when absent or empty)."""
    if not isinstance(index, dict):
        return None
    placed: dict[int, str] = {}
    for word, positions in index.items():
        for position in as_list(positions):
            if isinstance(position, int) and not isinstance(position, bool) and position >= 0:
                placed[position] = str(word)
    if not placed:
        return None
    text = " ".join(placed[i] for i in sorted(placed))
    return " ".join(text.split()) or None


def parse(payload: Any) -> list[LiteratureRecord]:
    """Read a ``/works`` list (``results``) or a single Work into records, in rank order.

    Raises:
        CoreError: API_ERROR when the payload is neither.
    """
    body = as_dict(payload)
    if "results" in body:
        items = as_list(body.get("results"))
    elif as_str(body.get("id")):
        items = [body]
    else:
        raise unreadable("OpenAlex", "work list")
    records: list[LiteratureRecord] = []
    for item in items:
        record = _record(as_dict(item), len(records) + 1)
        if record is not None:
            records.append(record)
    return records


def open_access_evidence(work: dict[str, Any]) -> OpenAccessEvidence:
    """``open_access.is_oa`` is OpenAlex's flag; the best OA location's licence goes with it."""
    flag = as_dict(work.get("open_access")).get("is_oa")
    best = as_dict(work.get("best_oa_location")) or as_dict(work.get("primary_location"))
    licence = as_str(best.get("license"))
    if flag is True:
        return OpenAccessEvidence(is_open_access=True, licence=licence, source="oa_flag")
    if flag is False:
        return OpenAccessEvidence(is_open_access=False, source="oa_flag")
    return OpenAccessEvidence()


def _arxiv(work: dict[str, Any], doi: str | None) -> tuple[str | None, str | None]:
    from_doi = arxiv_from_doi(doi)
    if from_doi:
        return from_doi, None
    for location in as_list(work.get("locations")):
        landing = as_str(as_dict(location).get("landing_page_url")) or ""
        if "arxiv.org/abs/" in landing:
            found = normalize_arxiv(landing)
            if found:
                return found.id, found.version
    return None, None


def _record(work: dict[str, Any], rank: int) -> LiteratureRecord | None:
    title = clean_markup(as_str(work.get("title")) or as_str(work.get("display_name")))
    if not title:
        return None
    ids = as_dict(work.get("ids"))
    doi = normalize_doi(as_str(work.get("doi")) or as_str(ids.get("doi")))
    arxiv_id, arxiv_version = _arxiv(work, doi)
    authors = []
    for authorship in as_list(work.get("authorships")):
        entry = as_dict(authorship)
        name = as_str(as_dict(entry.get("author")).get("display_name")) or as_str(
            entry.get("raw_author_name")
        )
        if name:
            authors.append(name)
    primary = as_dict(work.get("primary_location"))
    best = as_dict(work.get("best_oa_location"))
    openalex_id = as_str(work.get("id"))
    return LiteratureRecord(
        provider="openalex",
        rank=rank,
        title=" ".join(title.split("\n")),
        provider_id=openalex_id.rsplit("/", 1)[-1] if openalex_id else None,
        doi=doi,
        pmid=normalize_pmid(as_str(ids.get("pmid"))),
        pmcid=normalize_pmcid(as_str(ids.get("pmcid"))),
        arxiv_id=arxiv_id,
        arxiv_version=arxiv_version,
        year=as_year(work.get("publication_year")),
        authors=tuple(authors),
        venue=as_str(as_dict(primary.get("source")).get("display_name")),
        abstract=rebuild_abstract(work.get("abstract_inverted_index")),
        url=as_str(primary.get("landing_page_url")) or as_str(work.get("doi")) or openalex_id,
        pdf_url=as_str(best.get("pdf_url")) or as_str(primary.get("pdf_url")),
        open_access=open_access_evidence(work),
    )


class OpenAlexProvider(FixedPacing):
    """OpenAlex as the service uses it (see the module docstring)."""

    info = INFO
    min_interval = MIN_INTERVAL

    async def search(
        self, http: HttpClient, settings: ProviderSettings, request: SearchRequest
    ) -> list[LiteratureRecord]:
        """One ``/works`` search."""
        url = f"{settings.base_url.rstrip('/')}/works"
        return parse(await http.get_json(url, params_for(request, settings.values)))


PROVIDER = OpenAlexProvider()
