"""Crossref REST ``/works``: keyword search over DOI metadata.

Request: ``GET {CROSSREF_URL}/works?query=<keywords>&rows=N&select=…`` (``offset=K`` for a
later page) with ``filter=from-pub-date:YYYY,until-pub-date:YYYY-12-31`` for years and
``mailto`` when ``CROSSREF_MAILTO`` is set. Crossref has no query language and no open-access
filter, so the query is the sanitised keyword form and open access is left to the evidence
rule. Crossref's REST API "does not support boolean operators" (Crossref staff, community
forum), so a negated term cannot be sent: it is left out and the answer says so.

A ``work-list`` page is trusted as empty only when ``total-results`` says 0; ``items`` of
another type than a list, a count above zero with no item, or a page of unreadable items is
an error (:func:`.common.checked_page`).

Pools (Crossref, from December 2025): a list query without ``mailto`` is in the public pool,
1 request a second, one at a time; with ``mailto`` in the polite pool, 3 a second and up to 3
at once. The client is built for the pool the settings put it in.

Open-access evidence: a ``license[].URL`` under creativecommons.org. Text-mining links
(``link[]`` with ``intended-application: text-mining``) and publisher terms are not evidence,
and no PDF link is trusted. Abstracts are JATS strings and are cleaned.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...core.offload import run_blocking
from .. import sources
from ..identifiers import arxiv_from_doi, doi_url, normalize_doi
from ..markup import clean_markup
from ..models import LiteratureRecord, OpenAccessEvidence, SearchRequest
from ..query import dropped_note, split_negations
from .base import Fetcher, Pacing, Page, ProviderInfo, ProviderSettings
from .common import (
    ACCEPT_JSON,
    as_dict,
    as_list,
    as_str,
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
    "POLITE_INTERVAL",
    "PROVIDER",
    "PUBLIC_INTERVAL",
    "SELECT",
    "URL_SETTING",
    "CrossrefProvider",
    "open_access_evidence",
    "params_for",
    "parse",
]

URL_SETTING = "CROSSREF_URL"
DEFAULT_URL = "https://api.crossref.org"
PUBLIC_INTERVAL = 1.0
"""Public pool, list queries: 1 request a second, one at a time (serial)."""
POLITE_INTERVAL = 0.34
"""Polite pool (``mailto``), list queries: 3 requests a second."""
SELECT = (
    "DOI,title,subtitle,author,container-title,issued,published,published-print,"
    "published-online,posted,abstract,license,URL,type"
)
_DATE_FIELDS = ("issued", "published", "published-print", "published-online", "posted")

INFO = ProviderInfo(
    id="crossref",
    source=sources.CROSSREF,
    url_setting=URL_SETTING,
    default_url=DEFAULT_URL,
    limitations=(
        "Keyword search only: fields, wildcards and Boolean operators are removed.",
        "Many records have no abstract.",
        "No open-access filter: open access is judged from Creative Commons licences only.",
    ),
    optional_settings=("CROSSREF_MAILTO",),
    native_syntax=False,
    exclusion="none: Crossref's search has no Boolean operators; a negated term is left out "
    "and the answer says so",
)


def params_for(request: SearchRequest, values: Mapping[str, str], *,
               offset: int = 0) -> dict[str, str]:
    """The exact ``/works`` query parameters for ``request`` (records after ``offset``).

    Raises:
        CoreError: INVALID_INPUT when the query has no plain word left.
    """
    parts = split_negations(request.query)
    params = {"query": keywords(parts.positive), "rows": str(request.limit), "select": SELECT}
    if offset:
        params["offset"] = str(offset)
    filters = []
    if request.year_from is not None:
        filters.append(f"from-pub-date:{request.year_from}")
    if request.year_to is not None:
        filters.append(f"until-pub-date:{request.year_to}-12-31")
    if filters:
        params["filter"] = ",".join(filters)
    mailto = setting(values, "CROSSREF_MAILTO")
    if mailto:
        params["mailto"] = mailto
    return params


def parse(payload: Any, *, limit: int | None = None, offset: int = 0) -> Page:
    """Read a Crossref ``work-list`` (or a single ``work``) into a page, in rank order.

    At most ``limit`` items are read (a page that over-delivers is read as far as asked);
    ``offset`` is where the page starts (an empty page past the end is a real end).

    Raises:
        CoreError: API_ERROR when the payload is not a Crossref message, ``items`` is not a
            list, ``total-results`` is above the offset with no item, or no item is readable.
    """
    body = as_dict(payload)
    message = body.get("message")
    if body.get("status") != "ok" or not isinstance(message, dict):
        raise unreadable("Crossref", "work list")
    items = list_field(message, "items", "Crossref", "work list")
    total: int | None
    if items is None:
        items, total = [message], 1
    else:
        total = count_value(message.get("total-results"))
    records: list[LiteratureRecord] = []
    bad = 0
    for item in items[:limit]:
        record = _record(item, offset + len(records) + 1) if isinstance(item, dict) else None
        if record is None:
            bad += 1
        else:
            records.append(record)
    return checked_page("Crossref", records, total=total, unreadable_count=bad, offset=offset)


def open_access_evidence(item: dict[str, Any]) -> OpenAccessEvidence:
    """A Creative Commons licence is evidence; nothing else Crossref says is."""
    for entry in as_list(item.get("license")):
        url = as_str(as_dict(entry).get("URL"))
        if url and "creativecommons.org" in url.lower():
            return OpenAccessEvidence(is_open_access=True, licence=url, source="licence")
    return OpenAccessEvidence()


def _first(value: Any) -> str | None:
    for entry in as_list(value):
        text = clean_markup(as_str(entry))
        if text:
            return " ".join(text.split("\n"))
    return None


def _year(item: dict[str, Any]) -> int | None:
    for name in _DATE_FIELDS:
        parts = as_list(as_dict(item.get(name)).get("date-parts"))
        first = as_list(parts[0]) if parts else []
        if first and isinstance(first[0], int) and not isinstance(first[0], bool):
            return first[0] if 1000 <= first[0] <= 2999 else None
    return None


def _record(item: dict[str, Any], rank: int) -> LiteratureRecord | None:
    title = _first(item.get("title"))
    if not title:
        return None
    subtitle = _first(item.get("subtitle"))
    if subtitle and subtitle.casefold() not in title.casefold():
        title = f"{title}: {subtitle}"
    doi = normalize_doi(as_str(item.get("DOI")))
    authors = []
    for author in as_list(item.get("author")):
        entry = as_dict(author)
        given, family = as_str(entry.get("given")), as_str(entry.get("family"))
        name = f"{given} {family}" if given and family else family or as_str(entry.get("name"))
        if name:
            authors.append(name)
    return LiteratureRecord(
        provider="crossref",
        rank=rank,
        title=title,
        provider_id=doi,
        doi=doi,
        arxiv_id=arxiv_from_doi(doi),
        year=_year(item),
        authors=tuple(authors),
        venue=_first(item.get("container-title")),
        abstract=clean_markup(as_str(item.get("abstract"))),
        url=doi_url(doi) if doi else as_str(item.get("URL")),
        pdf_url=None,
        open_access=open_access_evidence(item),
    )


class CrossrefProvider:
    """Crossref as the service uses it (see the module docstring)."""

    info = INFO

    def pacing(self, settings: ProviderSettings) -> Pacing:
        """Public pool: serial, 1 a second; polite pool (``CROSSREF_MAILTO``): 3 a second, 3 at
        once."""
        if setting(settings.values, "CROSSREF_MAILTO"):
            return Pacing(POLITE_INTERVAL, serial=False, concurrency=3)
        return Pacing(PUBLIC_INTERVAL, serial=True)

    def headers(self, settings: ProviderSettings) -> Mapping[str, str] | None:
        """None: the ``mailto`` travels in the query string."""
        return None

    async def search(self, http: Fetcher, settings: ProviderSettings, request: SearchRequest,
                     *, offset: int = 0) -> Page:
        """One ``/works`` query; the body decoded and read off the event loop."""
        url = f"{settings.base_url.rstrip('/')}/works"
        params = params_for(request, settings.values, offset=offset)
        response = await http.get(url, params, headers=ACCEPT_JSON)
        page = await run_blocking(_read, response.content, request.limit, offset)
        excluded = split_negations(request.query).excluded
        return page.with_notes(dropped_note(excluded)) if excluded else page


def _read(body: bytes, limit: int, offset: int) -> Page:
    return parse(load_json(body, asked=limit, provider="Crossref"), limit=limit, offset=offset)


PROVIDER = CrossrefProvider()
