"""arXiv export API (Atom): relevance search.

Request: ``GET {ARXIV_URL}/api/query?search_query=…&sortBy=relevance&sortOrder=descending
&start=K&max_results=N``. arXiv's syntax (``ti:``, ``au:``, ``abs:``, ``cat:``, ``all:``,
``AND``/``OR``/``ANDNOT``, quoted phrases) passes through, a ``NOT`` written ``ANDNOT`` (arXiv's
exclusion; a bare ``NOT`` would be searched for as a word); a query without any of it is
scoped term by term as ``all:word AND all:word``, each negated term ``ANDNOT all:term``
(unscoped terms with a date sort are what gave other servers off-topic newest papers). Years
become
``submittedDate:[YYYY01010000 TO YYYY12312359]``. Every arXiv paper is free to read with a PDF,
which the research's OA rule counts as open access, so the open-access option needs no filter.

Terms of use: one request every three seconds on a single connection — a serial client with
a 3 s floor from the end of one exchange to the next start.

Errors come as a feed whose single entry's id is ``…/api/errors#…`` (HTTP 400 today, HTTP 200
in older behaviour); both are refused as API_ERROR rather than read as a paper. A feed with no
entry is trusted as empty only when ``opensearch:totalResults`` says 0 (or the start is past
it): ``totalResults`` 214881 with no entry is an error, never "nothing found".
"""

from __future__ import annotations

import re

from lxml import etree

from ...core.errors import Code, CoreError
from ...core.offload import run_blocking
from ...core.xmlsafe import parse_xml
from .. import sources
from ..identifiers import arxiv_abs_url, arxiv_pdf_url, normalize_arxiv, normalize_doi
from ..markup import collapse
from ..models import LiteratureRecord, OpenAccessEvidence, SearchRequest
from ..query import Excluded, split_negations
from .base import Fetcher, Page, ProviderInfo, ProviderSettings
from .common import FixedPace, as_year, check_xml, checked_page, count_value, unreadable

__all__ = [
    "DEFAULT_URL",
    "MIN_INTERVAL",
    "PROVIDER",
    "URL_SETTING",
    "ArxivProvider",
    "params_for",
    "parse",
    "search_query",
]

URL_SETTING = "ARXIV_URL"
DEFAULT_URL = "https://export.arxiv.org"
MIN_INTERVAL = 3.0
"""Seconds from the end of one exchange to the next start, one connection at a time."""

_ATOM = "{http://www.w3.org/2005/Atom}"
_ARXIV = "{http://arxiv.org/schemas/atom}"
_OPENSEARCH = "{http://a9.com/-/spec/opensearch/1.1/}"

_NATIVE = re.compile(
    r"\b(?:ti|au|abs|co|jr|cat|rn|id|all|submittedDate|lastUpdatedDate):|\b(?:AND|OR|ANDNOT)\b"
)
_TERM = re.compile(r'"[^"]+"|\S+')

INFO = ProviderInfo(
    id="arxiv",
    source=sources.ARXIV,
    url_setting=URL_SETTING,
    default_url=DEFAULT_URL,
    limitations=(
        "One request every three seconds: arXiv is the slowest source.",
        "Physics, mathematics, computer science and related fields only.",
    ),
    native_syntax=True,
    exclusion="ANDNOT (arXiv syntax): NOT and -term are sent as ANDNOT",
)


def search_query(request: SearchRequest) -> str:
    """The ``search_query`` value: arXiv syntax as given, bare words scoped to ``all:``."""
    query = request.query
    parts = split_negations(query)
    if not _NATIVE.search(parts.positive):
        terms = [t for t in _TERM.findall(parts.positive) if t.strip('"').strip()]
        query = " AND ".join(f"all:{t}" for t in terms) or parts.positive
        query += "".join(f" ANDNOT {_scoped(e)}" for e in parts.excluded)
    else:
        if parts.excluded:
            query = parts.positive + "".join(f" ANDNOT {_scoped(e)}" for e in parts.excluded)
        if " " in query and not query.startswith("("):
            query = f"({query})"
    if request.year_from is not None or request.year_to is not None:
        low = request.year_from if request.year_from is not None else 1991
        high = request.year_to if request.year_to is not None else 9999
        query = f"{query} AND submittedDate:[{low}01010000 TO {high}12312359]"
    return query


def _scoped(excluded: Excluded) -> str:
    """A negated term scoped for arXiv: ``all:word``, ``all:"a phrase"`` or a scoped group."""
    if not excluded.group:
        text = excluded.text
        return text if _NATIVE.search(text) else f"all:{text}"
    inner = " ".join(t if t in ("AND", "OR", "ANDNOT") or _NATIVE.search(t) else f"all:{t}"
                     for t in _TERM.findall(excluded.text.replace("(", " ").replace(")", " ")))
    return f"({inner})"


def params_for(request: SearchRequest, *, offset: int = 0) -> dict[str, str]:
    """The exact ``/api/query`` query parameters."""
    return {
        "search_query": search_query(request),
        "sortBy": "relevance",
        "sortOrder": "descending",
        "start": str(offset),
        "max_results": str(request.limit),
    }


def parse(body: bytes, *, limit: int | None = None, offset: int = 0) -> Page:
    """Read an arXiv Atom feed into a page, in feed (= relevance) order.

    At most ``limit`` entries are read; ``offset`` is the ``start`` asked for.

    Raises:
        CoreError: API_ERROR for arXiv's error feed (an entry id under ``/api/errors``), a
            document that is not an Atom feed, ``totalResults`` above the start with no entry,
            or no readable entry.
        XmlParseError, UnsafeXmlError: the body is not safe, well-formed XML.
    """
    root = parse_xml(body)
    if root.tag != f"{_ATOM}feed":
        raise unreadable("arXiv", "Atom feed")
    entries = root.findall(f"{_ATOM}entry")[:limit]
    for entry in entries:
        ident = entry.findtext(f"{_ATOM}id") or ""
        if "/api/errors" in ident:
            reason = ident.rsplit("#", 1)[-1] if "#" in ident else "error"
            raise CoreError(
                Code.API_ERROR,
                "arXiv refused the query.",
                details={"provider": "arxiv", "reason": reason[:100]},
                remediation="Check the arXiv query syntax (ti:, au:, abs:, cat:, AND/OR).",
            )
    records: list[LiteratureRecord] = []
    bad = 0
    for entry in entries:
        record = _record(entry, offset + len(records) + 1)
        if record is None:
            bad += 1
        else:
            records.append(record)
    total = count_value(root.findtext(f"{_OPENSEARCH}totalResults"))
    return checked_page("arXiv", records, total=total, unreadable_count=bad, offset=offset,
                        said="results match (totalResults)")


def _record(entry: etree._Element, rank: int) -> LiteratureRecord | None:
    title = collapse(entry.findtext(f"{_ATOM}title"))
    found = normalize_arxiv(entry.findtext(f"{_ATOM}id"))
    if not title or found is None:
        return None
    pdf_url = None
    for link in entry.findall(f"{_ATOM}link"):
        if link.get("title") == "pdf" and link.get("href"):
            pdf_url = link.get("href")
    authors = tuple(
        name for name in (collapse(a.findtext(f"{_ATOM}name"))
                          for a in entry.findall(f"{_ATOM}author")) if name
    )
    return LiteratureRecord(
        provider="arxiv",
        rank=rank,
        title=title,
        provider_id=found.id + (found.version or ""),
        doi=normalize_doi(entry.findtext(f"{_ARXIV}doi")),
        arxiv_id=found.id,
        arxiv_version=found.version,
        year=as_year(entry.findtext(f"{_ATOM}published")),
        authors=authors,
        venue=collapse(entry.findtext(f"{_ARXIV}journal_ref")) or "arXiv",
        abstract=collapse(entry.findtext(f"{_ATOM}summary")),
        url=arxiv_abs_url(found.id, found.version),
        pdf_url=pdf_url or arxiv_pdf_url(found.id, found.version),
        open_access=OpenAccessEvidence(is_open_access=True, source="arxiv"),
    )


class ArxivProvider(FixedPace):
    """arXiv as the service uses it (see the module docstring)."""

    info = INFO
    min_interval = MIN_INTERVAL
    serial = True

    async def search(self, http: Fetcher, settings: ProviderSettings, request: SearchRequest,
                     *, offset: int = 0) -> Page:
        """One ``/api/query`` request; the feed read off the event loop."""
        response = await http.get(f"{settings.base_url.rstrip('/')}/api/query",
                                  params_for(request, offset=offset))
        return await run_blocking(_read, response.content, request.limit, offset)


def _read(body: bytes, limit: int, offset: int) -> Page:
    check_xml(body, asked=limit, provider="arXiv")
    return parse(body, limit=limit, offset=offset)


PROVIDER = ArxivProvider()
