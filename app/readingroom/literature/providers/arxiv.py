"""arXiv export API (Atom): relevance search.

Request: ``GET {ARXIV_URL}/api/query?search_query=…&sortBy=relevance&sortOrder=descending
&start=0&max_results=N``. arXiv's syntax (``ti:``, ``au:``, ``abs:``, ``cat:``, ``all:``,
``AND``/``OR``/``ANDNOT``, quoted phrases) passes through; a query without any of it is scoped
term by term as ``all:word AND all:word`` (unscoped terms with a date sort are what gave other
servers off-topic newest papers). Years become
``submittedDate:[YYYY01010000 TO YYYY12312359]``. Every arXiv paper is free to read with a PDF,
which the research's OA rule counts as open access, so the open-access option needs no filter.

Terms of use: one request every three seconds on a single connection — a serial client with
a 3 s floor from the end of one exchange to the next start.

Errors come as a feed whose single entry's id is ``…/api/errors#…`` (HTTP 400 today, HTTP 200
in older behaviour); both are refused as API_ERROR rather than read as a paper.
"""

from __future__ import annotations

import re

from lxml import etree

from ...core.errors import Code, CoreError
from ...core.http import HttpClient
from ...core.responses import Source
from ...core.xmlsafe import parse_xml
from ..identifiers import arxiv_abs_url, arxiv_pdf_url, normalize_arxiv, normalize_doi
from ..models import LiteratureRecord, OpenAccessEvidence, SearchRequest
from ..text import collapse
from .base import ProviderInfo, ProviderSettings
from .common import FixedPacing, as_year, unreadable

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

_NATIVE = re.compile(
    r"\b(?:ti|au|abs|co|jr|cat|rn|id|all|submittedDate|lastUpdatedDate):|\b(?:AND|OR|ANDNOT)\b"
)
_TERM = re.compile(r'"[^"]+"|\S+')

INFO = ProviderInfo(
    id="arxiv",
    source=Source(
        id="arxiv",
        name="arXiv",
        licence="arXiv metadata: CC0; papers under the licence chosen by their authors",
        url="https://arxiv.org/",
        credit="Thank you to arXiv for use of its open access interoperability.",
    ),
    url_setting=URL_SETTING,
    default_url=DEFAULT_URL,
    limitations=(
        "One request every three seconds: arXiv is the slowest source.",
        "Physics, mathematics, computer science and related fields only.",
    ),
    native_syntax=True,
)


def search_query(request: SearchRequest) -> str:
    """The ``search_query`` value: arXiv syntax as given, bare words scoped to ``all:``."""
    query = request.query.strip()
    if not _NATIVE.search(query):
        terms = [t for t in _TERM.findall(query) if t.strip('"').strip()]
        query = " AND ".join(f"all:{t}" for t in terms) or query
    elif " " in query and not query.startswith("("):
        query = f"({query})"
    if request.year_from is not None or request.year_to is not None:
        low = request.year_from if request.year_from is not None else 1991
        high = request.year_to if request.year_to is not None else 9999
        query = f"{query} AND submittedDate:[{low}01010000 TO {high}12312359]"
    return query


def params_for(request: SearchRequest) -> dict[str, str]:
    """The exact ``/api/query`` query parameters."""
    return {
        "search_query": search_query(request),
        "sortBy": "relevance",
        "sortOrder": "descending",
        "start": "0",
        "max_results": str(request.limit),
    }


def parse(body: bytes) -> list[LiteratureRecord]:
    """Read an arXiv Atom feed into records, in feed (= relevance) order.

    Raises:
        CoreError: API_ERROR for arXiv's error feed (an entry id under ``/api/errors``) or a
            document that is not an Atom feed.
        XmlParseError, UnsafeXmlError: the body is not safe, well-formed XML.
    """
    root = parse_xml(body)
    if root.tag != f"{_ATOM}feed":
        raise unreadable("arXiv", "Atom feed")
    entries = root.findall(f"{_ATOM}entry")
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
    for entry in entries:
        record = _record(entry, len(records) + 1)
        if record is not None:
            records.append(record)
    return records


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


class ArxivProvider(FixedPacing):
    """arXiv as the service uses it (see the module docstring)."""

    info = INFO
    min_interval = MIN_INTERVAL
    serial = True

    async def search(
        self, http: HttpClient, settings: ProviderSettings, request: SearchRequest
    ) -> list[LiteratureRecord]:
        """One ``/api/query`` request."""
        response = await http.get(f"{settings.base_url.rstrip('/')}/api/query",
                                  params_for(request))
        return parse(response.content)


PROVIDER = ArxivProvider()
