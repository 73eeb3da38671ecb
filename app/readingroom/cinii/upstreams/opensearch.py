"""CiNii Research OpenSearch v2: the search client and the pure parse of its JSON-LD answers.

**The request.** ``GET <base>/opensearch/v2/<type>`` with ``format=json`` and the application id
(``appid``, required by NII's documentation). Types: ``articles``, ``books``, ``dissertations``,
``projects`` (KAKEN research projects) and ``all``. Fields as the API names them: ``q`` (free
words, ANDed), ``title``, ``creator``, ``publisher``, ``isbn``, ``from``/``until`` (``YYYY`` or
``YYYYMM``), ``sortorder`` (4 relevance, 0 newest, 1 oldest, 10 most cited — articles only),
``count`` (CiNii allows 1-200; this server asks at most 100) and ``start``.

**The answer** (real v1 recordings in ``shared/fixtures/cinii``; no v2 recording exists, and the
reader makes no assumption the v1 answer does not support): a JSON-LD channel with
``@context`` (whose ``@language`` is the default language of its plain strings),
``opensearch:totalResults`` (a number, or a string of digits), ``opensearch:startIndex`` and
``items``, each with ``@id`` (the CRID URL), ``title`` (sometimes missing), ``dc:creator``,
``dc:type``, ``prism:*``, ``dc:identifier`` typed ``cir:NAID``, ``cir:NDL_BIB_ID`` ….

The channel's own ``@id`` and ``link`` are the request URL, application id included: they are
never read into an item.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...core.http import HttpClient, UpstreamBodyError
from ...core.offload import run_blocking
from ..models import CiniiItem, ItemResult, SearchPage
from .jsonld import (
    MAX_VALUES,
    add_identifier,
    choose,
    creators_of,
    crid_of,
    first_text,
    related_links,
    texts,
    year_of,
)

__all__ = [
    "CONTAINERS_BASE",
    "CONTAINERS_PER_ITEM",
    "RECORD_TYPES",
    "SEARCH_TYPES",
    "OpenSearchClient",
    "OpenSearchExchange",
    "decode",
    "parse",
    "parse_item",
    "record_type_of",
]

SEARCH_TYPES: dict[str, str] = {
    "articles": "article",
    "books": "book",
    "dissertations": "dissertation",
    "projects": "project",
    "all": "unknown",
}
"""Each OpenSearch type, and the record type its items have when they name none."""

RECORD_TYPES: dict[str, str] = {
    "article": "article",
    "book": "book",
    "dissertation": "dissertation",
    "doctoralthesis": "dissertation",
    "thesis": "dissertation",
    "project": "project",
    "researchproject": "project",
    "research project": "project",
    "data": "data",
    "dataset": "data",
    "researcher": "researcher",
    "product": "product",
}
"""CiNii's type names (dc:type, @type), case-folded, and the record type they mean."""

CONTAINERS_BASE = 200
CONTAINERS_PER_ITEM = 200
"""JSON objects and arrays an answer of N items may hold: far above a real item's dozen."""


def record_type_of(type_value: Any, fallback: str) -> tuple[str, str | None]:
    """(record type, the type as given) of ``dc:type``/``@type``; ``fallback`` without one."""
    label = first_text(type_value)
    if label is None:
        return fallback, None
    key = label.strip().casefold().removeprefix("cir:")
    return RECORD_TYPES.get(key, key[:40] or fallback), label


def decode(body: bytes, max_containers: int) -> Any:
    """``body`` as JSON after counting its containers; ``API_ERROR`` otherwise.

    Raises:
        UpstreamBodyError: too many containers, not UTF-8, not JSON, nested too deeply.
    """
    if body.lstrip()[:15].lower().startswith((b"<!doctype html", b"<html")):
        raise UpstreamBodyError(
            "CiNii Research answered with an HTML page instead of JSON (maintenance, or a "
            "refused request). The result is unknown.",
            details={"reason": "html"},
        )
    containers = body.count(b"{") + body.count(b"[")
    if containers > max_containers:
        raise UpstreamBodyError(
            f"CiNii Research answered with {containers} JSON objects and arrays, more than an "
            f"answer of the records asked for can hold ({max_containers}); it was not read. "
            "The result is unknown.",
            details={"reason": "too_many_values", "containers": containers,
                     "max_containers": max_containers},
        )
    try:
        return json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        reason = {UnicodeDecodeError: "not UTF-8", RecursionError: "nested too deeply"}.get(
            type(exc), "not JSON")
        # `from None`: a JSON error quotes the document, and the body is never reported.
        raise UpstreamBodyError(
            f"CiNii Research answered with a body that is {reason}. The result is unknown.",
            details={"reason": reason},
        ) from None


def _count(value: Any) -> int | None:
    """A count given as a number or a string of digits; None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit() and len(value.strip()) <= 12:
        return int(value.strip())
    return None


def _context_language(payload: Mapping[str, Any]) -> str | None:
    context = payload.get("@context")
    if isinstance(context, Mapping):
        value = context.get("@language")
        if isinstance(value, str) and value.strip():
            return value.strip()[:35]
    return None


def parse_item(raw: Any, position: int, fallback_type: str, language: str | None) -> ItemResult:
    """One OpenSearch item, or why it cannot be read (pure; never raises)."""
    if not isinstance(raw, Mapping):
        return ItemResult(position, None, f"the item is a {type(raw).__name__}, not an object")
    crid = crid_of(raw.get("@id"))
    if crid is None:
        link = raw.get("link")
        crid = crid_of(link.get("@id")) if isinstance(link, Mapping) else None
    if crid is None:
        return ItemResult(position, None, "the item has no CRID (@id)")
    try:
        return ItemResult(position, _item(raw, crid, fallback_type, language), None)
    except (ValueError, TypeError) as exc:  # pydantic's ValidationError is a ValueError
        return ItemResult(position, None, f"the item could not be read ({type(exc).__name__})")


def _item(raw: Mapping[str, Any], crid: str, fallback_type: str,
          language: str | None) -> CiniiItem:
    record_type, label = record_type_of(raw.get("dc:type") or raw.get("@type"), fallback_type)
    if label == "item":  # the OpenSearch item's own @type says nothing about the record
        record_type, label = fallback_type, None
    titles = texts(raw.get("title", raw.get("dc:title")), language)
    title, title_ja, title_en, reading = choose(titles)
    publication_names = texts(raw.get("prism:publicationName"), language)
    identifiers: dict[str, list[str]] = {}
    raw_ids = raw.get("dc:identifier")
    for entry in (raw_ids if isinstance(raw_ids, list) else [raw_ids])[:MAX_VALUES]:
        if isinstance(entry, Mapping):
            add_identifier(identifiers, entry.get("@type"), entry.get("@value"))
        elif entry is not None:
            add_identifier(identifiers, None, entry)
    for key, kind in (("prism:doi", "DOI"), ("prism:issn", "ISSN"), ("dc:isbn", "ISBN"),
                      ("prism:isbn", "ISBN")):
        for text in texts(raw.get(key)):
            add_identifier(identifiers, kind, text.value)
    sources = [s for s in (_link(v) for v in _list(raw.get("dc:source"))) if s]
    date = first_text(raw.get("prism:publicationDate")) or first_text(raw.get("dc:date"))
    start_page = first_text(raw.get("prism:startingPage"))
    end_page = first_text(raw.get("prism:endingPage"))
    return CiniiItem(
        crid=crid,
        url=f"https://cir.nii.ac.jp/crid/{crid}",
        record_type=record_type,
        type_label=label,
        title=title,
        title_ja=title_ja,
        title_en=title_en,
        title_reading=reading,
        titles=titles,
        title_missing=title is None,
        creators=creators_of(raw.get("dc:creator"), language),
        publication_name=choose(publication_names)[0],
        publication_names=publication_names,
        publishers=texts(raw.get("dc:publisher"), language),
        date=date,
        year=year_of(date),
        volume=first_text(raw.get("prism:volume")),
        number=first_text(raw.get("prism:number")),
        starting_page=start_page,
        ending_page=end_page,
        pages=_pages(start_page, end_page) or first_text(raw.get("prism:pageRange")),
        doi=_one(identifiers, "DOI"),
        naid=_one(identifiers, "NAID"),
        ncid=_one(identifiers, "NCID"),
        isbn=list(identifiers.get("ISBN", [])),
        issn=list(identifiers.get("ISSN", [])),
        identifiers=identifiers,
        languages=[t.value for t in texts(raw.get("dc:language"))],
        related=related_links(identifiers, sources, []),
    )


def _list(value: Any) -> list[Any]:
    return (value if isinstance(value, list) else [value])[:MAX_VALUES]


def _link(value: Any) -> str | None:
    if isinstance(value, Mapping):
        value = value.get("@id")
    return value.strip() if isinstance(value, str) else None


def _one(identifiers: Mapping[str, list[str]], kind: str) -> str | None:
    values = identifiers.get(kind)
    return values[0] if values else None


def _pages(start: str | None, end: str | None) -> str | None:
    if start and end:
        return f"{start}-{end}"
    return start or end


def parse(payload: Any, search_type: str) -> SearchPage:
    """One OpenSearch answer (decoded JSON) as a :class:`SearchPage` (pure; never raises).

    The count must be a number (or a string of digits) and ``items``, when present, a list;
    otherwise the page says why (:attr:`SearchPage.problem`) and holds no items.
    """
    fallback = SEARCH_TYPES.get(search_type, "unknown")
    if isinstance(payload, Mapping) and "@graph" in payload and isinstance(
            payload["@graph"], list) and payload["@graph"] and isinstance(
            payload["@graph"][0], Mapping):
        channel: Mapping[str, Any] = payload["@graph"][0]
        language = _context_language(payload) or _context_language(channel)
    elif isinstance(payload, Mapping):
        channel, language = payload, _context_language(payload)
    else:
        return SearchPage(None, None, problem=f"the answer is a {type(payload).__name__}, "
                          "not a JSON object")
    total = _count(channel.get("opensearch:totalResults"))
    start = _count(channel.get("opensearch:startIndex"))
    raw_items = channel.get("items", [])
    if raw_items is None:
        raw_items = []
    if not isinstance(raw_items, list):
        return SearchPage(total, start, problem=f"items is a {type(raw_items).__name__}, "
                          "not a list")
    if "opensearch:totalResults" not in channel:
        return SearchPage(None, start, problem="opensearch:totalResults is missing")
    if total is None:
        return SearchPage(None, start, problem="opensearch:totalResults is not a count")
    results = [parse_item(raw, n, fallback, language) for n, raw in enumerate(raw_items, 1)]
    return SearchPage(total, start, results)


@dataclass(frozen=True)
class OpenSearchExchange:
    """One search sent and its parsed answer.

    Attributes:
        params: the parameters sent, the application id left out.
        endpoint: the URL searched (no query string).
        page: the parsed answer.
    """

    params: dict[str, str]
    endpoint: str
    page: SearchPage


class OpenSearchClient:
    """Searches over the shared, paced CiNii client; the answer is read off the event loop."""

    def __init__(self, http: HttpClient, base_url: str) -> None:
        self._http = http
        self.base_url = base_url.rstrip("/")

    def endpoint(self, search_type: str) -> str:
        """The OpenSearch v2 URL of ``search_type``."""
        if search_type not in SEARCH_TYPES:
            raise ValueError(f"unknown CiNii search type {search_type!r}")
        return f"{self.base_url}/opensearch/v2/{search_type}"

    async def search(self, search_type: str, params: Mapping[str, str], appid: str
                     ) -> OpenSearchExchange:
        """Send one search and parse its answer.

        Raises:
            CoreError: RATE_LIMITED, TRANSPORT_ERROR, API_ERROR (a refused request, a body
                that is not JSON or too large).
        """
        endpoint = self.endpoint(search_type)
        sent = {**params, "format": "json"}
        response = await self._http.get(endpoint, {**sent, "appid": appid})
        asked = int(sent.get("count", "20") or 20)
        budget = CONTAINERS_BASE + CONTAINERS_PER_ITEM * max(1, asked)
        page = await run_blocking(_decode_and_parse, response.content, budget, search_type)
        return OpenSearchExchange(params=sent, endpoint=endpoint, page=page)


def _decode_and_parse(body: bytes, budget: int, search_type: str) -> SearchPage:
    payload = decode(body, budget)
    return parse(payload, search_type)

