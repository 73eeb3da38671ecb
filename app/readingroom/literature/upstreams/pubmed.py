"""PubMed through NCBI E-utilities: ``esearch`` by relevance, then one ``efetch`` for the page.

Request flow (two requests per search, both paced):

1. ``esearch.fcgi?db=pubmed&term=…&retmode=xml&retmax=N&sort=relevance`` — PubMed's own query
   syntax (``[tiab]``, ``[au]``, MeSH, Boolean) passes through. ``sort=relevance`` is always
   sent: without it PubMed answers newest first. Years become ``datetype=pdat`` with both
   ``mindate`` and ``maxdate`` (E-utilities needs the pair); the open-access filter is
   ``AND pubmed pmc open access[filter]`` in the term; ``retstart=K`` for a later page. Unset
   options are omitted, never sent empty (an empty ``mindate=`` silently returns nothing).
   The term is sent as typed (PubMed's ``NOT`` included); a ``-term`` is written
   ``NOT term``, PubMed's exclusion.
2. ``efetch.fcgi?db=pubmed&id=…&retmode=xml`` — the only E-utility with abstracts (esummary
   has none). Identifiers are read from the direct children of ``PubmedData/ArticleIdList``
   only: ``ReferenceList`` holds the cited papers' ids.

Both answers are read as XML (the real recorded samples are XML); each starts with a DOCTYPE
naming NCBI's DTD, which is removed by :func:`~readingroom.core.xmlsafe.strip_doctype` before
the hardened parser reads it, off the event loop. ``Count`` above the start with no id, or ids
answered by an ``efetch`` set without any of their articles, is an error, never "nothing
found"; an ``efetch`` that delivers only some of them says how many are missing.

Etiquette: ``tool`` on every call (``literature-search-mcp`` unless ``NCBI_TOOL``), ``email``
only when ``NCBI_EMAIL`` is set, ``api_key`` when ``NCBI_API_KEY`` is set; at most 3 requests
a second without a key and 10 with one (at most three requests in flight).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from lxml import etree

from ...core.errors import Code, CoreError
from ...core.offload import run_blocking
from ...core.xmlsafe import parse_xml, strip_doctype
from .. import sources
from ..identifiers import (
    doi_url,
    normalize_doi,
    normalize_pmcid,
    normalize_pmid,
    pubmed_url,
)
from ..markup import collapse, element_text, join_parts
from ..models import LiteratureRecord, Note, OpenAccessEvidence, SearchRequest
from ..query import minus_as_not
from .base import Fetcher, Pacing, Page, ProviderInfo, ProviderSettings
from .common import (
    as_year,
    check_xml,
    checked_page,
    count_value,
    setting,
    unreadable,
)

__all__ = [
    "DEFAULT_TOOL",
    "DEFAULT_URL",
    "MIN_INTERVAL",
    "MIN_INTERVAL_WITH_KEY",
    "OA_FILTER",
    "PROVIDER",
    "URL_SETTING",
    "EsearchResult",
    "PubMedProvider",
    "efetch_params",
    "esearch_params",
    "in_esearch_order",
    "parse",
    "parse_esearch",
    "read_pages",
]

URL_SETTING = "PUBMED_EUTILS_URL"
DEFAULT_URL = "https://eutils.ncbi.nlm.nih.gov/entrez/eutils"
DEFAULT_TOOL = "literature-search-mcp"
MIN_INTERVAL = 0.34
"""Seconds between request starts without a key: NCBI allows 3 a second."""
MIN_INTERVAL_WITH_KEY = 0.1
"""Seconds between request starts with ``NCBI_API_KEY``: NCBI allows 10 a second."""
OA_FILTER = "pubmed pmc open access[filter]"
"""PubMed's filter for the PMC open-access subset (no E-utilities parameter exists)."""
_MIN_YEAR = "1000"
_MAX_YEAR = "3000"

_OPTIONAL = ("NCBI_TOOL", "NCBI_EMAIL", "NCBI_API_KEY")

INFO = ProviderInfo(
    id="pubmed",
    source=sources.PUBMED,
    url_setting=URL_SETTING,
    default_url=DEFAULT_URL,
    limitations=(
        "Biomedical literature only.",
        "Only the first 10,000 hits of a query can be paged through.",
        "Open access means the PMC open-access subset.",
    ),
    optional_settings=_OPTIONAL,
    native_syntax=True,
    exclusion="NOT (PubMed syntax): sent as typed; -term is written NOT term",
)


@dataclass(frozen=True)
class EsearchResult:
    """What ``esearch`` answered: the hit count and the PMIDs of this page, in rank order."""

    count: int
    ids: tuple[str, ...]
    phrases_not_found: tuple[str, ...] = ()


def _etiquette(values: Mapping[str, str]) -> dict[str, str]:
    params = {"tool": setting(values, "NCBI_TOOL") or DEFAULT_TOOL}
    email = setting(values, "NCBI_EMAIL")
    if email:
        params["email"] = email
    key = setting(values, "NCBI_API_KEY")
    if key:
        params["api_key"] = key
    return params


def esearch_params(request: SearchRequest, values: Mapping[str, str], *,
                   offset: int = 0) -> dict[str, str]:
    """The exact ``esearch`` query parameters for ``request``."""
    term = minus_as_not(request.query)
    if request.open_access:
        term = f"({term}) AND {OA_FILTER}"
    params = {
        "db": "pubmed",
        "term": term,
        "retmode": "xml",
        "retmax": str(request.limit),
        "sort": "relevance",
    }
    if offset:
        params["retstart"] = str(offset)
    if request.year_from is not None or request.year_to is not None:
        params["datetype"] = "pdat"
        params["mindate"] = str(request.year_from) if request.year_from is not None else _MIN_YEAR
        params["maxdate"] = str(request.year_to) if request.year_to is not None else _MAX_YEAR
    return {**params, **_etiquette(values)}


def efetch_params(pmids: tuple[str, ...], values: Mapping[str, str]) -> dict[str, str]:
    """The exact ``efetch`` query parameters for one page of PMIDs."""
    return {"db": "pubmed", "id": ",".join(pmids), "retmode": "xml", **_etiquette(values)}


def _root(body: bytes) -> etree._Element:
    return parse_xml(strip_doctype(body.decode("utf-8", errors="replace")))


def parse_esearch(body: bytes) -> EsearchResult:
    """Read an ``esearch`` XML answer (zero hits is ``Count 0`` with ``PhraseNotFound``).

    Raises:
        CoreError: API_ERROR when the document is not an ``eSearchResult`` or reports an
            ``ERROR`` element (NCBI's way of refusing a term).
        XmlParseError, UnsafeXmlError: the body is not safe, well-formed XML.
    """
    root = _root(body)
    if root.tag != "eSearchResult":
        raise unreadable("PubMed", "esearch result")
    error = root.findtext("ERROR")
    if error and error.strip():
        raise CoreError(
            Code.API_ERROR,
            "PubMed refused the search term.",
            details={"provider": "pubmed"},
            remediation="Check the PubMed query syntax (field tags in [brackets]).",
        )
    count = count_value(root.findtext("Count"))
    if count is None:
        raise unreadable("PubMed", "esearch result", "its Count is not a number")
    ids = tuple(
        pmid for pmid in (normalize_pmid(e.text) for e in root.findall("IdList/Id")) if pmid
    )
    not_found = tuple(
        t for t in (collapse(e.text) for e in root.findall("ErrorList/PhraseNotFound")) if t
    )
    return EsearchResult(count=count, ids=ids, phrases_not_found=not_found)


def parse(body: bytes, *, open_access_filtered: bool = False, limit: int | None = None) -> Page:
    """Read an ``efetch`` PubMed XML answer into a page, in document (= request) order.

    ``PubmedBookArticle`` entries (NCBI Bookshelf) are skipped, articles without a title count
    as unreadable. ``open_access_filtered`` says the search carried :data:`OA_FILTER`, which
    makes every record positive open-access evidence. At most ``limit`` articles are read.

    Raises:
        CoreError: API_ERROR when the document is not a ``PubmedArticleSet`` or holds no
            readable article (an efetch set has no count: an empty one is never a zero).
        XmlParseError, UnsafeXmlError: the body is not safe, well-formed XML.
    """
    records, bad = _articles(body, open_access_filtered, limit)
    return checked_page("PubMed", records, total=None, unreadable_count=bad)


def _articles(body: bytes, open_access_filtered: bool,
              limit: int | None) -> tuple[list[LiteratureRecord], int]:
    root = _root(body)
    if root.tag != "PubmedArticleSet":
        raise unreadable("PubMed", "PubmedArticleSet")
    records: list[LiteratureRecord] = []
    bad = 0
    for article in root.findall("PubmedArticle")[:limit]:
        record = _record(article, len(records) + 1, open_access_filtered)
        if record is None:
            bad += 1
        else:
            records.append(record)
    return records, bad


def _record(
    article: etree._Element, rank: int, open_access_filtered: bool
) -> LiteratureRecord | None:
    citation = article.find("MedlineCitation")
    if citation is None:
        return None
    art = citation.find("Article")
    if art is None:
        return None
    title = element_text(art.find("ArticleTitle")) or element_text(art.find("VernacularTitle"))
    if not title:
        return None
    ids = {
        (e.get("IdType") or "").lower(): (e.text or "").strip()
        for e in article.findall("PubmedData/ArticleIdList/ArticleId")
    }
    pmid = normalize_pmid(citation.findtext("PMID")) or normalize_pmid(ids.get("pubmed"))
    doi = normalize_doi(ids.get("doi"))
    if doi is None:
        for loc in art.findall("ELocationID"):
            if (loc.get("EIdType") or "").lower() == "doi":
                doi = normalize_doi(loc.text)
                break
    pmcid = normalize_pmcid(ids.get("pmc"))
    journal = art.find("Journal")
    venue = None
    year = None
    if journal is not None:
        venue = collapse(journal.findtext("Title")) or collapse(journal.findtext("ISOAbbreviation"))
        pub_date = journal.find("JournalIssue/PubDate")
        if pub_date is not None:
            year = as_year(pub_date.findtext("Year")) or as_year(pub_date.findtext("MedlineDate"))
    if year is None:
        year = as_year(art.findtext("ArticleDate/Year"))
    url = pubmed_url(pmid) if pmid else (doi_url(doi) if doi else None)
    evidence = (
        OpenAccessEvidence(is_open_access=True, source="pmc_oa_filter")
        if open_access_filtered
        else OpenAccessEvidence()
    )
    return LiteratureRecord(
        provider="pubmed",
        rank=rank,
        title=title,
        provider_id=pmid,
        doi=doi,
        pmid=pmid,
        pmcid=pmcid,
        year=year,
        authors=_authors(art),
        venue=venue,
        abstract=_abstract(art),
        url=url,
        pdf_url=None,
        open_access=evidence,
    )


def _authors(art: etree._Element) -> tuple[str, ...]:
    names: list[str] = []
    for author in art.findall("AuthorList/Author"):
        collective = collapse(author.findtext("CollectiveName"))
        if collective:
            names.append(collective)
            continue
        last = collapse(author.findtext("LastName"))
        first = collapse(author.findtext("ForeName")) or collapse(author.findtext("Initials"))
        if last and first:
            names.append(f"{first} {last}")
        elif last:
            names.append(last)
    return tuple(names)


def _abstract(art: etree._Element) -> str | None:
    parts: list[str] = []
    for piece in art.findall("Abstract/AbstractText"):
        text = element_text(piece)
        if not text:
            continue
        label = collapse(piece.get("Label"))
        parts.append(f"{label}: {text}" if label else text)
    return join_parts(parts)


def in_esearch_order(
    records: list[LiteratureRecord], pmids: tuple[str, ...]
) -> list[LiteratureRecord]:
    """``records`` in the relevance order ``esearch`` gave, ranked 1… again.

    ``efetch`` is not documented to keep the order of its ``id`` list; the rank must be
    PubMed's relevance rank, so it is restored from the ``esearch`` answer.
    """
    position = {pmid: i for i, pmid in enumerate(pmids)}
    ordered = sorted(records, key=lambda r: position.get(r.pmid or "", len(position)))
    return [replace(r, rank=i) for i, r in enumerate(ordered, start=1)]


def read_pages(
    found: EsearchResult, records: list[LiteratureRecord], unreadable_count: int,
    pmids: tuple[str, ...], *, offset: int = 0,
) -> Page:
    """One page from an ``esearch`` answer and the ``efetch`` of its PMIDs.

    Raises:
        CoreError: API_ERROR when efetch delivered none of the PMIDs asked for.
    """
    if not records:
        raise CoreError(
            Code.API_ERROR,
            f"PubMed's esearch found {found.count} records and gave {len(pmids)} PMIDs for "
            "this page, but efetch delivered none of them"
            f"{f' ({unreadable_count} unreadable)' if unreadable_count else ''}.",
            details={"provider": "pubmed", "count": found.count, "asked": len(pmids)},
            remediation="Try again later. The result is unknown, not empty.",
        )
    ordered = in_esearch_order(records, pmids)
    page = Page(tuple(ordered), total=found.count, unreadable=unreadable_count).ranked_from(
        offset)
    delivered = {r.pmid for r in records} & set(pmids)
    missing = len(pmids) - len(delivered) - unreadable_count
    if missing > 0:
        page = page.with_notes(Note(
            Code.RECORD_UNREADABLE,
            f"efetch delivered {len(delivered)} of the {len(pmids)} PMIDs esearch gave for "
            f"this page; {missing} missing.", field="sources"))
    return page


class PubMedProvider:
    """PubMed as the service uses it (see the module docstring for the requests)."""

    info = INFO

    def pacing(self, settings: ProviderSettings) -> Pacing:
        """3 requests a second, 10 with ``NCBI_API_KEY``; at most three in flight."""
        keyed = setting(settings.values, "NCBI_API_KEY") is not None
        return Pacing(MIN_INTERVAL_WITH_KEY if keyed else MIN_INTERVAL, serial=False,
                      concurrency=3)

    def headers(self, settings: ProviderSettings) -> Mapping[str, str] | None:
        """None: the etiquette parameters travel in the query string."""
        return None

    async def search(self, http: Fetcher, settings: ProviderSettings, request: SearchRequest,
                     *, offset: int = 0) -> Page:
        """``esearch`` by relevance, then one ``efetch`` for the PMIDs found."""
        base = settings.base_url.rstrip("/")
        params = esearch_params(request, settings.values, offset=offset)
        answer = await http.get(f"{base}/esearch.fcgi", params)
        found = await run_blocking(_read_esearch, answer.content, request.limit)
        if not found.ids:
            if found.count > offset:
                raise CoreError(
                    Code.API_ERROR,
                    f"PubMed's esearch said {found.count} records match but gave no PMID.",
                    details={"provider": "pubmed", "count": found.count},
                    remediation="Try again later. The result is unknown, not empty.",
                )
            return Page((), total=found.count)
        pmids = found.ids[: request.limit]
        fetched = await http.get(f"{base}/efetch.fcgi", efetch_params(pmids, settings.values))
        records, bad = await run_blocking(_read_efetch, fetched.content,
                                      bool(request.open_access), len(pmids))
        return read_pages(found, records, bad, pmids, offset=offset)


def _read_esearch(body: bytes, limit: int) -> EsearchResult:
    check_xml(body, asked=limit, provider="PubMed")
    return parse_esearch(body)


def _read_efetch(body: bytes, open_access_filtered: bool,
                 limit: int) -> tuple[list[LiteratureRecord], int]:
    check_xml(body, asked=limit, provider="PubMed")
    return _articles(body, open_access_filtered, limit)


PROVIDER = PubMedProvider()
