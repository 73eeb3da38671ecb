"""OpenAlex ``/works`` search.

Request: ``GET {OPENALEX_URL}/works?search=<keywords>&per-page=N&select=…`` with
``filter=from_publication_date:YYYY-01-01,to_publication_date:YYYY-12-31,is_oa:true`` for the
options that are set, ``api_key`` when ``OPENALEX_API_KEY`` is set and ``mailto`` when
``OPENALEX_MAILTO`` is. Filter values are comma-separated, so no user text ever goes into
``filter``; the query is the sanitised keyword form in ``search``, each negated term after it
as ``NOT term`` (OpenAlex's search documents uppercase Boolean ``AND``/``OR``/``NOT``).
OpenAlex pages by page number: records after an offset K come from one page of ``K + N``.

A list is trusted as empty only when ``meta.count`` says 0; ``results`` of another type (``null``
included), a count above zero with no result, or a page of unreadable works is an error.

The key travels in the query string: the URL is a credential. The core client reports URLs as
``scheme://host/path`` only and never logs a query string; ``api_key`` is also one of the
names the ledger redacts.

Since 13 February 2026 OpenAlex wants a (free) key; without one the daily budget is a handful
of searches, and a refusal surfaces as this provider's ``rate_limited`` status. Abstracts
come as ``abstract_inverted_index`` (word → positions) and are rebuilt in order.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ...core.offload import run_blocking
from .. import sources
from ..identifiers import (
    arxiv_from_doi,
    normalize_arxiv,
    normalize_doi,
    normalize_pmcid,
    normalize_pmid,
)
from ..markup import clean_markup
from ..models import LiteratureRecord, OpenAccessEvidence, SearchRequest
from ..query import split_negations
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

_WORDS = re.compile(r'"[^"]*"|[^\s()]+')
_PLAIN = re.compile(r"[\w][\w\-]*")

INFO = ProviderInfo(
    id="openalex",
    source=sources.OPENALEX,
    url_setting=URL_SETTING,
    default_url=DEFAULT_URL,
    limitations=(
        "Keyword search only: fields, wildcards and Boolean operators are removed.",
        "Without OPENALEX_API_KEY the daily allowance is a few searches; after it, "
        "OpenAlex answers rate_limited.",
    ),
    optional_settings=("OPENALEX_API_KEY", "OPENALEX_MAILTO"),
    native_syntax=False,
    exclusion="NOT (uppercase Boolean search) after the keywords",
)


def params_for(request: SearchRequest, values: Mapping[str, str], *,
               offset: int = 0) -> dict[str, str]:
    """The exact ``/works`` query parameters (the key among them when configured).

    Raises:
        CoreError: INVALID_INPUT when the query has no plain word left.
    """
    parts = split_negations(request.query)
    excluded = [_excluded(e.text, e.group) for e in parts.excluded]
    search = keywords(parts.positive) + "".join(f" NOT {e}" for e in excluded if e)
    params = {"search": search, "per-page": str(offset + request.limit), "select": SELECT}
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


def _excluded(text: str, group: bool) -> str:
    """A negated word, phrase or group in OpenAlex's form ("" when nothing searchable is left).

    A phrase keeps its quotes; a group keeps its ``AND``/``OR``; field syntax is removed.
    """
    if text.startswith('"') and not group:
        return text
    words = []
    for word in _WORDS.findall(text):
        if word in ("AND", "OR") or word.startswith('"'):
            words.append(word)
        else:
            words += _PLAIN.findall(word.rsplit(":", 1)[-1])
    while words and words[-1] in ("AND", "OR"):
        words.pop()
    while words and words[0] in ("AND", "OR"):
        words.pop(0)
    if not words:
        return ""
    return f"({' '.join(words)})" if group and len(words) > 1 else " ".join(words)


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


def parse(payload: Any, *, limit: int | None = None, offset: int = 0) -> Page:
    """Read a ``/works`` list (``results``) or a single Work into a page, in rank order.

    At most ``offset + limit`` works are read and the first ``offset`` dropped (a later page
    is read from the first).

    Raises:
        CoreError: API_ERROR when the payload is neither, ``results`` is not a list,
            ``meta.count`` is above the offset with no work, or no work is readable.
    """
    body = as_dict(payload)
    items = list_field(body, "results", "OpenAlex", "work list")
    if items is not None:
        total = count_value(as_dict(body.get("meta")).get("count"))
    elif as_str(body.get("id")):
        items, total = [body], 1
    else:
        raise unreadable("OpenAlex", "work list")
    window = items[offset:offset + limit if limit is not None else None]
    records: list[LiteratureRecord] = []
    bad = 0
    for item in window:
        record = _record(item, offset + len(records) + 1) if isinstance(item, dict) else None
        if record is None:
            bad += 1
        else:
            records.append(record)
    return checked_page("OpenAlex", records, total=total, unreadable_count=bad, offset=offset)


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


class OpenAlexProvider(FixedPace):
    """OpenAlex as the service uses it (see the module docstring)."""

    info = INFO
    min_interval = MIN_INTERVAL

    async def search(self, http: Fetcher, settings: ProviderSettings, request: SearchRequest,
                     *, offset: int = 0) -> Page:
        """One ``/works`` search; the body decoded and read off the event loop."""
        url = f"{settings.base_url.rstrip('/')}/works"
        response = await http.get(url, params_for(request, settings.values, offset=offset),
                                  headers=ACCEPT_JSON)
        return await run_blocking(_read, response.content, request.limit, offset)


def _read(body: bytes, limit: int, offset: int) -> Page:
    payload = load_json(body, asked=offset + limit, provider="OpenAlex")
    return parse(payload, limit=limit, offset=offset)


PROVIDER = OpenAlexProvider()
