"""Parser of NDL Search SRU ``searchRetrieve`` responses in the DC-NDL (RDF/XML) schema.

Pure: bytes in, :class:`SruResponse` out, no I/O. The request this parser expects is
``recordSchema=dcndl`` with ``recordPacking=xml``. What it knows about the format comes from real
responses (``shared/fixtures/ndl``) and the research notes on them:

* The envelope is SRW 1.x in the default namespace. The ``recordSchema`` element always says
  ``info:srw/schema/1/dc-v1.1``, even for dcndl records, so it is never consulted; the record's
  own payload decides.
* NDL reports an empty result as a diagnostic (``Record does not exist``) with no
  ``numberOfRecords``. Every NDL diagnostic carries the same URI, so diagnostics are classified
  on their message through :data:`DIAGNOSTIC_TABLE`.
* One record may hold several ``dcndl:BibResource`` elements with the same ``rdf:about``: in
  RDF/XML they are statements about one resource, so they are merged, never treated as records.
  The "manifestation stub" holds only ``dcndl:record`` links to holdings and copies.
* Every ``<record>`` gives exactly one :class:`RecordResult`; a record that cannot be read is
  reported with a problem, never dropped.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import TypeVar
from urllib.parse import unquote, urlsplit

from lxml import etree
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..core.xmlsafe import XmlParseError, parse_xml

__all__ = [
    "DIAGNOSTIC_TABLE",
    "PROBLEM_DC_SCHEMA",
    "PROBLEM_STRING_PACKED",
    "Classification",
    "Creator",
    "DiagnosticKind",
    "Holding",
    "MaterialType",
    "NdlItem",
    "Publisher",
    "RecordResult",
    "SruResponse",
    "Subject",
    "UpstreamDiagnostic",
    "classify_diagnostic",
    "parse",
]

SRW_NS = "http://www.loc.gov/zing/srw/"
DIAG_NS = "http://www.loc.gov/zing/srw/diagnostic/"
SRW_DC_NS = "info:srw/schema/1/dc-v1.1"
RDF_NS = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDFS_NS = "http://www.w3.org/2000/01/rdf-schema#"
DC_NS = "http://purl.org/dc/elements/1.1/"
DCTERMS_NS = "http://purl.org/dc/terms/"
DCNDL_NS = "http://ndl.go.jp/dcndl/terms/"
FOAF_NS = "http://xmlns.com/foaf/0.1/"
OWL_NS = "http://www.w3.org/2002/07/owl#"

NDL_SEARCH_BOOKS = "https://ndlsearch.ndl.go.jp/books/"

PROBLEM_STRING_PACKED = "record packed as string (recordPacking=string); request recordPacking=xml"
PROBLEM_DC_SCHEMA = "record is in the dc schema; request recordSchema=dcndl"
PROBLEM_OTHER_SCHEMA = "record data is not DC-NDL RDF/XML; request recordSchema=dcndl"


def _q(ns: str, local: str) -> str:
    return f"{{{ns}}}{local}"


RDF_RDF = _q(RDF_NS, "RDF")
RDF_ABOUT = _q(RDF_NS, "about")
RDF_RESOURCE = _q(RDF_NS, "resource")
RDF_DATATYPE = _q(RDF_NS, "datatype")
RDF_VALUE = _q(RDF_NS, "value")
RDFS_LABEL = _q(RDFS_NS, "label")
RDFS_SEE_ALSO = _q(RDFS_NS, "seeAlso")
DC_TITLE = _q(DC_NS, "title")
DC_CREATOR = _q(DC_NS, "creator")
DC_SUBJECT = _q(DC_NS, "subject")
DCT_TITLE = _q(DCTERMS_NS, "title")
DCT_CREATOR = _q(DCTERMS_NS, "creator")
DCT_PUBLISHER = _q(DCTERMS_NS, "publisher")
DCT_IDENTIFIER = _q(DCTERMS_NS, "identifier")
DCT_DATE = _q(DCTERMS_NS, "date")
DCT_ISSUED = _q(DCTERMS_NS, "issued")
DCT_DESCRIPTION = _q(DCTERMS_NS, "description")
DCT_SUBJECT = _q(DCTERMS_NS, "subject")
DCT_LANGUAGE = _q(DCTERMS_NS, "language")
DCT_EXTENT = _q(DCTERMS_NS, "extent")
DCT_ACCESS_RIGHTS = _q(DCTERMS_NS, "accessRights")
DCT_IS_PART_OF = _q(DCTERMS_NS, "isPartOf")
DCT_RELATION = _q(DCTERMS_NS, "relation")
NDL_BIB_ADMIN = _q(DCNDL_NS, "BibAdminResource")
NDL_BIB_RESOURCE = _q(DCNDL_NS, "BibResource")
NDL_ITEM = _q(DCNDL_NS, "Item")
NDL_RECORD = _q(DCNDL_NS, "record")
NDL_CATEGORY = _q(DCNDL_NS, "bibRecordCategory")
NDL_TRANSCRIPTION = _q(DCNDL_NS, "transcription")
NDL_ALTERNATIVE = _q(DCNDL_NS, "alternative")
NDL_SERIES_TITLE = _q(DCNDL_NS, "seriesTitle")
NDL_LOCATION = _q(DCNDL_NS, "location")
NDL_PUBLICATION_PLACE = _q(DCNDL_NS, "publicationPlace")
NDL_ORIGINAL_LANGUAGE = _q(DCNDL_NS, "originalLanguage")
NDL_MATERIAL_TYPE = _q(DCNDL_NS, "materialType")
NDL_PUBLICATION_NAME = _q(DCNDL_NS, "publicationName")
NDL_PUBLICATION_VOLUME = _q(DCNDL_NS, "publicationVolume")
NDL_NUMBER = _q(DCNDL_NS, "number")
NDL_ISSUE = _q(DCNDL_NS, "issue")
NDL_PAGE_RANGE = _q(DCNDL_NS, "pageRange")
NDL_HOLDING_AGENT = _q(DCNDL_NS, "holdingAgent")
NDL_CALL_NUMBER = _q(DCNDL_NS, "callNumber")
NDL_LOCAL_CALL_NUMBER = _q(DCNDL_NS, "localCallNumber")
FOAF_AGENT = _q(FOAF_NS, "Agent")
FOAF_NAME = _q(FOAF_NS, "name")

_TOKEN_IN_BOOKS_URL = re.compile(r"/books/(R\d+-I[^/#?\s]+)")
_TOKEN_ANYWHERE = re.compile(r"\b(R\d+-I[^/#?\s]+)")
_RECORD_TYPE = re.compile(r"^type\s*:\s*(\S.*)$")
_YEAR = re.compile(r"^(\d{4})")
_NDL_SCHEME = re.compile(r"//id\.ndl\.go\.jp/(auth|class)/([^/]+)/(.+)$")

_M = TypeVar("_M", bound=BaseModel)

_DIGITAL_HOSTS = frozenset({"dl.ndl.go.jp"})
_CINII_HOSTS = frozenset({"cir.nii.ac.jp", "ci.nii.ac.jp"})


# --- diagnostics ------------------------------------------------------------------------------


class DiagnosticKind(StrEnum):
    """What an NDL SRU diagnostic means, read from its message."""

    NO_RECORDS = "no_records"
    """``Record does not exist``: NDL's way of reporting a successful search with zero hits."""
    QUERY_SYNTAX = "query_syntax"
    """``illegal query syntax``: the CQL was refused (reserved AND/OR, bad parentheses)."""
    INVALID_REQUEST = "invalid_request"
    """A request parameter was refused (operation, version, missing query, illegal values)."""
    OTHER = "other"
    """A message this parser does not know."""


DIAGNOSTIC_TABLE: tuple[tuple[re.Pattern[str], DiagnosticKind], ...] = (
    (re.compile(r"\brecord does not exist\b", re.IGNORECASE), DiagnosticKind.NO_RECORDS),
    (re.compile(r"\billegal query syntax\b", re.IGNORECASE), DiagnosticKind.QUERY_SYNTAX),
    (re.compile(r"\billegal \w+ value\b", re.IGNORECASE), DiagnosticKind.INVALID_REQUEST),
    (re.compile(r"\bversion must be\b", re.IGNORECASE), DiagnosticKind.INVALID_REQUEST),
    (re.compile(r"\bquery must be present\b", re.IGNORECASE), DiagnosticKind.INVALID_REQUEST),
    (
        re.compile(r"\boperation is not searchRetrieve\b", re.IGNORECASE),
        DiagnosticKind.INVALID_REQUEST,
    ),
)
"""NDL's diagnostic messages (spec 表3-5), first match wins; anything else is ``OTHER``."""


def classify_diagnostic(message: str | None) -> DiagnosticKind:
    """Classify an NDL diagnostic by its message text through :data:`DIAGNOSTIC_TABLE`.

    Args:
        message: the diagnostic's ``<message>`` text.

    Returns:
        The first matching kind, or ``DiagnosticKind.OTHER``.
    """
    if message:
        for pattern, kind in DIAGNOSTIC_TABLE:
            if pattern.search(message):
                return kind
    return DiagnosticKind.OTHER


@dataclass(frozen=True, slots=True)
class UpstreamDiagnostic:
    """One SRU diagnostic as NDL sent it, with its classification.

    Attributes:
        uri: the ``<uri>`` (always ``info:srw/diagnostic/1/1`` at NDL: it carries no meaning).
        message: the ``<message>`` text, which does carry the meaning.
        details: the ``<details>`` text (NDL sends "An error occurred" or nothing).
        kind: the classification of ``message``.
    """

    uri: str | None
    message: str | None
    details: str | None
    kind: DiagnosticKind


# --- the item model ---------------------------------------------------------------------------


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MaterialType(_Model):
    """An NDL material type, read from the attributes of the empty ``dcndl:materialType``."""

    uri: str | None = Field(
        default=None, description="The type URI, e.g. http://ndl.go.jp/ndltype/Book."
    )
    label: str | None = Field(
        default=None, description="NDL's Japanese label, e.g. 図書, 記事・論文."
    )


class Creator(_Model):
    """A creator as an agent (``dcterms:creator/foaf:Agent``)."""

    name: str | None = Field(default=None, description="The heading form of the name (foaf:name).")
    reading: str | None = Field(
        default=None,
        description="The katakana reading of the name (dcndl:transcription); not a romanisation.",
    )
    authority_uri: str | None = Field(
        default=None, description="The NDL authority URI (id.ndl.go.jp/auth/…), when linked."
    )


class Publisher(_Model):
    """A publisher as an agent (``dcterms:publisher/foaf:Agent``)."""

    name: str | None = Field(
        default=None,
        description="The publisher's name as given; in article records often 'place : publisher'.",
    )
    reading: str | None = Field(
        default=None, description="The katakana reading of the name (dcndl:transcription)."
    )
    location: str | None = Field(
        default=None, description="The place of publication as transcribed (dcndl:location)."
    )


class Subject(_Model):
    """A subject heading or subject resource (``dcterms:subject``, or an untyped ``dc:subject``)."""

    label: str | None = Field(
        default=None, description="The heading text (rdf:value); null for a bare resource link."
    )
    uri: str | None = Field(default=None, description="The heading's or class's URI, when given.")
    scheme: str | None = Field(
        default=None,
        description="The vocabulary, from the URI path: ndlsh, ndlna, ndlc, ndc9, ndc10 ….",
    )


class Classification(_Model):
    """A classification number (typed ``dc:subject``, or a ``dcterms:subject`` class URI)."""

    scheme: str = Field(description="The scheme, lower case: ndc, ndc9, ndc10, ndlc ….")
    notation: str = Field(description="The class number as given, e.g. 366.6 or ZE12.")


class Holding(_Model):
    """One holding or copy (``dcndl:Item``): an NDL copy, a digitised copy, a CiNii record …."""

    item_uri: str | None = Field(default=None, description="The Item's rdf:about (…#item).")
    repository: str | None = Field(
        default=None, description="The repository number (R…) in the Item's URI."
    )
    agent: str | None = Field(
        default=None, description="The holding library's name (dcndl:holdingAgent/foaf:name)."
    )
    call_number: str | None = Field(default=None, description="The call number (dcndl:callNumber).")
    local_call_number: str | None = Field(
        default=None, description="The library's local call number (dcndl:localCallNumber)."
    )
    see_also: list[str] = Field(
        default_factory=list,
        description="Links of the copy (rdfs:seeAlso): the viewer, a DOI, a CiNii page ….",
    )


class NdlItem(_Model):
    """One bibliographic record of NDL Search, read from DC-NDL RDF/XML."""

    record_position: int | None = Field(
        default=None, description="The record's position in the result set (recordPosition)."
    )
    ndl_search_id: str = Field(
        description="The NDL Search record token R…-I…, from the BibAdminResource's rdf:about."
    )
    ndl_url: str = Field(description="The record's page: https://ndlsearch.ndl.go.jp/books/<id>.")
    repository: str | None = Field(
        default=None,
        description=(
            "The provider repository number (R100000002 NDL holdings, R000000004 periodicals "
            "index, R100000039 Digital Collections …) of this record, not of the dpid searched."
        ),
    )
    record_type: str | None = Field(
        default=None, description="The admin record's type (book, article …)."
    )
    material_type: list[MaterialType] = Field(
        default_factory=list, description="NDL material types (dcndl:materialType)."
    )
    title: str = Field(description="The title proper (dcterms:title, else dc:title's value).")
    title_reading: str | None = Field(
        default=None,
        description=(
            "The katakana reading of the title (dcndl:transcription). A reading, not a "
            "romanisation: DC-NDL gives no romanised title."
        ),
    )
    alternative_titles: list[str] = Field(
        default_factory=list, description="Other titles (dcndl:alternative), often English."
    )
    series_titles: list[str] = Field(
        default_factory=list, description="Series titles (dcndl:seriesTitle)."
    )
    creators: list[Creator] = Field(
        default_factory=list, description="Creators as agents (dcterms:creator/foaf:Agent)."
    )
    creator_statements: list[str] = Field(
        default_factory=list,
        description="Free statements of responsibility (dc:creator), e.g. '夏目漱石 著'.",
    )
    publishers: list[Publisher] = Field(
        default_factory=list, description="Publishers (dcterms:publisher/foaf:Agent)."
    )
    publication_place: str | None = Field(
        default=None, description="Country of publication, ISO 3166 (dcndl:publicationPlace)."
    )
    issued: str | None = Field(
        default=None, description="The normalised date, W3CDTF (dcterms:issued): 1951, 2001-06-28."
    )
    year: int | None = Field(default=None, description="The year of dcterms:issued.")
    date_text: str | None = Field(
        default=None, description="The date as transcribed (dcterms:date), e.g. '(通号 285) 1951'."
    )
    languages: list[str] = Field(
        default_factory=list, description="Languages, ISO 639-2 (dcterms:language)."
    )
    original_languages: list[str] = Field(
        default_factory=list, description="Languages of the original (dcndl:originalLanguage)."
    )
    ndl_bib_id: str | None = Field(default=None, description="The NDL bibliographic ID (NDLBibID).")
    jpno: str | None = Field(default=None, description="The Japanese National Bibliography number.")
    isbn: list[str] = Field(default_factory=list, description="ISBNs as given (often hyphenated).")
    issn: list[str] = Field(default_factory=list, description="ISSNs as given.")
    doi: str | None = Field(default=None, description="The record's DOI identifier, when typed.")
    other_identifiers: dict[str, list[str]] = Field(
        default_factory=dict,
        description=(
            "Other typed identifiers, keyed by the datatype's last path segment "
            "(TOHANMARCNO, ISSNL …); untyped ones under 'untyped'."
        ),
    )
    subjects: list[Subject] = Field(
        default_factory=list,
        description="Subject headings and subject resources (dcterms:subject; untyped dc:subject).",
    )
    classifications: list[Classification] = Field(
        default_factory=list,
        description="Classification numbers (typed dc:subject; dcterms:subject class URIs).",
    )
    extent: str | None = Field(default=None, description="Extent and size (dcterms:extent).")
    descriptions: list[str] = Field(
        default_factory=list, description="Notes of the description (dcterms:description)."
    )
    journal: str | None = Field(
        default=None, description="For articles: the journal's name (dcndl:publicationName)."
    )
    volume: str | None = Field(
        default=None, description="For articles: the volume (dcndl:publicationVolume)."
    )
    number: str | None = Field(default=None, description="For articles: the number (dcndl:number).")
    issue: str | None = Field(
        default=None, description="For articles: the running issue number, 通号 (dcndl:issue)."
    )
    pages: str | None = Field(
        default=None,
        description="For articles: the page range as given (dcndl:pageRange), e.g. 'p590～593'.",
    )
    access_rights: list[str] = Field(
        default_factory=list,
        description="Access statements (dcterms:accessRights), e.g. インターネット公開.",
    )
    digitized_copies: list[str] = Field(
        default_factory=list,
        description="NDL Digital Collections links (dl.ndl.go.jp) in the record or its Items.",
    )
    cinii_links: list[str] = Field(
        default_factory=list,
        description="CiNii links (cir.nii.ac.jp, ci.nii.ac.jp) found in the record or its Items.",
    )
    is_part_of: list[str] = Field(
        default_factory=list,
        description="Hosts (dcterms:isPartOf): the serial's record, its ISSN, the digitised issue.",
    )
    relations: list[str] = Field(
        default_factory=list, description="Related resources (dcterms:relation)."
    )
    see_also: list[str] = Field(
        default_factory=list, description="Links of the description (rdfs:seeAlso)."
    )
    holdings: list[Holding] = Field(
        default_factory=list,
        description="Holdings and copies (dcndl:Item); absent when the request set onlyBib.",
    )
    holding_records: list[str] = Field(
        default_factory=list,
        description="Links to every holding or copy record (dcndl:record in the manifestation).",
    )
    matched_in: list[str] = Field(
        default_factory=list,
        description="Which searched fields this record matched; filled by the service, not here.",
    )


# --- the response -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RecordResult:
    """The outcome of reading one ``<record>``: an item, or a problem saying why not.

    Attributes:
        position: the record's ``recordPosition``.
        item: the item, or None when the record could not be read.
        problem: why the record could not be read, or None.
    """

    position: int | None
    item: NdlItem | None
    problem: str | None


@dataclass(frozen=True, slots=True)
class SruResponse:
    """One parsed SRU ``searchRetrieve`` response.

    Attributes:
        total: ``numberOfRecords``; None when absent (as in NDL's zero-result diagnostic).
        next_record_position: ``nextRecordPosition``; None when absent or 0.
        records: one result per ``<record>``, in order.
        diagnostics: the SRU diagnostics, classified.
        facets: ``extraResponseData`` facets, e.g. ``facets["REPOSITORY_NO"]["R100000002"]``.
        packing: the ``recordPacking`` the records report, or None without records.
        format_problem: set when the records are not dcndl in xml packing (string packing, the
            dc schema): the request must change; no record of such a response is an item.
        version: the SRW ``version``.
    """

    total: int | None
    next_record_position: int | None
    records: list[RecordResult]
    diagnostics: list[UpstreamDiagnostic]
    facets: dict[str, dict[str, int]]
    packing: str | None
    format_problem: str | None = None
    version: str | None = None

    @property
    def items(self) -> list[NdlItem]:
        """The readable records' items, in order."""
        return [r.item for r in self.records if r.item is not None]

    @property
    def unreadable(self) -> int:
        """How many records could not be read (each counted for ``RECORD_UNREADABLE``)."""
        return sum(1 for r in self.records if r.item is None)

    @property
    def zero_result(self) -> bool:
        """True when NDL reported a checked empty result (``Record does not exist``)."""
        return not self.records and any(
            d.kind is DiagnosticKind.NO_RECORDS for d in self.diagnostics
        )


# --- helpers ----------------------------------------------------------------------------------


class _RecordError(Exception):
    """A record that cannot become an item; the message is the record's problem."""


def _local(tag: object) -> str | None:
    if not isinstance(tag, str):
        return None  # comments and processing instructions
    return tag.rpartition("}")[2]


def _elements(parent: etree._Element | None) -> Iterator[etree._Element]:
    if parent is not None:
        for child in parent:
            if isinstance(child.tag, str):
                yield child


def _by_local(parent: etree._Element | None, local: str) -> list[etree._Element]:
    return [c for c in _elements(parent) if _local(c.tag) == local]


def _first_by_local(parent: etree._Element | None, local: str) -> etree._Element | None:
    found = _by_local(parent, local)
    return found[0] if found else None


def _text(el: etree._Element | None) -> str | None:
    if el is None or el.text is None:
        return None
    return el.text.strip() or None


def _int(text: str | None) -> int | None:
    if text is None:
        return None
    try:
        return int(text.strip())
    except ValueError:
        return None


def _unique(values: Iterable[str | None]) -> list[str]:
    seen: dict[str, None] = {}
    for value in values:
        if value and value not in seen:
            seen[value] = None
    return list(seen)


def _host(url: str) -> str | None:
    try:
        return urlsplit(url).hostname
    except ValueError:
        return None


def _token(uri: str | None) -> str | None:
    if not uri:
        return None
    match = _TOKEN_IN_BOOKS_URL.search(uri) or _TOKEN_ANYWHERE.search(uri)
    return match.group(1) if match else None


class _Props:
    """The merged property elements of one or more RDF descriptions of the same resource."""

    def __init__(self, descriptions: Iterable[etree._Element]) -> None:
        self._by_tag: dict[str, list[etree._Element]] = {}
        for description in descriptions:
            for prop in _elements(description):
                self._by_tag.setdefault(prop.tag, []).append(prop)

    def all(self, tag: str) -> list[etree._Element]:
        return self._by_tag.get(tag, [])

    def texts(self, tag: str) -> list[str]:
        return _unique(_text(el) for el in self.all(tag))

    def text(self, tag: str) -> str | None:
        texts = self.texts(tag)
        return texts[0] if texts else None

    def resources(self, tag: str) -> list[str]:
        return _unique(el.get(RDF_RESOURCE) for el in self.all(tag))

    def links(self, tag: str) -> list[str]:
        """Resource URIs, and plain-text values, of a link property."""
        return _unique([*self.resources(tag), *self.texts(tag)])


def _value_of(prop: etree._Element) -> tuple[str | None, str | None]:
    """The (value, reading) of a literal property or of its nested ``rdf:Description``."""
    description = next(_elements(prop), None)
    if description is None:
        return _text(prop), None
    return _text(description.find(RDF_VALUE)), _text(description.find(NDL_TRANSCRIPTION))


def _agents(props: list[etree._Element]) -> Iterator[tuple[str | None, str | None, etree._Element]]:
    """(name, reading, agent element) for each agent of the given creator/publisher properties."""
    for prop in props:
        agents = list(_elements(prop))
        if not agents:
            name = _text(prop)
            if name or prop.get(RDF_RESOURCE):
                yield name, None, prop
            continue
        for agent in agents:
            yield _text(agent.find(FOAF_NAME)), _text(agent.find(NDL_TRANSCRIPTION)), agent


def _authority_uri(agent: etree._Element) -> str | None:
    uri = agent.get(RDF_ABOUT) or agent.get(RDF_RESOURCE)
    if uri:
        return uri
    # In string-packed output NDL links the authority through rdfs:seeAlso instead of rdf:about.
    for see_also in agent.findall(RDFS_SEE_ALSO):
        resource = see_also.get(RDF_RESOURCE)
        if resource and "/auth/" in resource:
            return resource
    return None


def _scheme_and_notation(uri: str) -> tuple[str | None, str | None, bool]:
    """(scheme, notation, is_class) of an id.ndl.go.jp authority or class URI."""
    match = _NDL_SCHEME.search(uri)
    if match is None:
        return None, None, False
    kind, scheme, rest = match.groups()
    return scheme.lower(), unquote(rest), kind == "class"


def _datatype_kind(datatype: str | None) -> str:
    if not datatype:
        return "untyped"
    return re.split(r"[/#]", datatype.rstrip("/#"))[-1] or "untyped"


# --- reading one record -----------------------------------------------------------------------


def _primary_about(groups: dict[str, list[etree._Element]], admin: _Props | None) -> str:
    if admin is not None:
        for wanted in admin.resources(NDL_RECORD):
            if wanted in groups:
                return wanted
    for about in groups:
        if about.endswith("#material"):
            return about
    for about, descriptions in groups.items():
        if _Props(descriptions).all(DCT_TITLE) or _Props(descriptions).all(DC_TITLE):
            return about
    return next(iter(groups))


def _holding(item: etree._Element) -> Holding:
    props = _Props([item])
    agent_name = None
    for holder in props.all(NDL_HOLDING_AGENT):
        agent = holder.find(FOAF_AGENT)
        agent_name = _text(agent.find(FOAF_NAME)) if agent is not None else _text(holder)
        if agent_name:
            break
    item_uri = item.get(RDF_ABOUT)
    token = _token(item_uri)
    return Holding(
        item_uri=item_uri,
        repository=token.split("-", 1)[0] if token else None,
        agent=agent_name,
        call_number=props.text(NDL_CALL_NUMBER),
        local_call_number=props.text(NDL_LOCAL_CALL_NUMBER),
        see_also=props.resources(RDFS_SEE_ALSO),
    )


def _read_item(rdf: etree._Element, position: int | None) -> NdlItem:
    admin_el = rdf.find(NDL_BIB_ADMIN)
    admin = _Props([admin_el]) if admin_el is not None else None
    groups: dict[str, list[etree._Element]] = {}
    for resource in rdf.findall(NDL_BIB_RESOURCE):
        groups.setdefault(resource.get(RDF_ABOUT) or "", []).append(resource)
    if not groups:
        raise _RecordError("record has no dcndl:BibResource (no bibliographic description)")
    primary = _primary_about(groups, admin)
    props = _Props(groups[primary])

    token = _token(admin_el.get(RDF_ABOUT) if admin_el is not None else None) or _token(primary)
    if token is None:
        raise _RecordError("record has no NDL Search identifier (R…-I… token)")

    title = props.text(DCT_TITLE)
    title_reading = None
    for dc_title in props.all(DC_TITLE):
        value, reading = _value_of(dc_title)
        title = title or value
        title_reading = title_reading or reading
    if not title:
        raise _RecordError("record has no title")

    identifiers: dict[str, list[str]] = {}
    for ident in props.all(DCT_IDENTIFIER):
        value = _text(ident)
        if value:
            kind = _datatype_kind(ident.get(RDF_DATATYPE))
            if value not in identifiers.setdefault(kind, []):
                identifiers[kind].append(value)

    subjects: list[Subject] = []
    classifications: list[Classification] = []

    def add_class(scheme: str, notation: str) -> None:
        entry = Classification(scheme=scheme, notation=notation)
        if entry not in classifications:
            classifications.append(entry)

    def add_subject(label: str | None, uri: str | None) -> None:
        scheme = _scheme_and_notation(uri)[0] if uri else None
        entry = Subject(label=label, uri=uri, scheme=scheme)
        if (label or uri) and entry not in subjects:
            subjects.append(entry)

    for subject in props.all(DCT_SUBJECT):
        resource = subject.get(RDF_RESOURCE)
        if resource:
            add_subject(None, resource)
            scheme, notation, is_class = _scheme_and_notation(resource)
            if is_class and scheme and notation:
                add_class(scheme, notation)
        descriptions = list(_elements(subject))
        for description in descriptions:
            add_subject(_text(description.find(RDF_VALUE)), description.get(RDF_ABOUT))
        if not resource and not descriptions:
            add_subject(_text(subject), None)
    for subject in props.all(DC_SUBJECT):
        value = _text(subject)
        datatype = subject.get(RDF_DATATYPE)
        if value and datatype:
            add_class(_datatype_kind(datatype).lower(), value)
        elif value:
            add_subject(value, None)

    holdings = [_holding(item) for item in rdf.findall(NDL_ITEM)]
    is_part_of = props.links(DCT_IS_PART_OF)
    relations = props.links(DCT_RELATION)
    see_also = props.resources(RDFS_SEE_ALSO)
    every_link = [*is_part_of, *relations, *see_also, *(u for h in holdings for u in h.see_also)]

    issued = props.text(DCT_ISSUED)
    year_match = _YEAR.match(issued) if issued else None
    record_type = None
    if admin is not None:
        for note in admin.texts(DCT_DESCRIPTION):
            match = _RECORD_TYPE.match(note)
            if match:
                record_type = match.group(1).strip()
                break
    repository = admin.text(NDL_CATEGORY) if admin is not None else None
    extents = props.texts(DCT_EXTENT)

    return NdlItem(
        record_position=position,
        ndl_search_id=token,
        ndl_url=NDL_SEARCH_BOOKS + token,
        repository=repository or token.split("-", 1)[0],
        record_type=record_type,
        material_type=_unique_models(
            MaterialType(uri=el.get(RDF_RESOURCE), label=el.get(RDFS_LABEL) or _text(el))
            for el in props.all(NDL_MATERIAL_TYPE)
        ),
        title=title,
        title_reading=title_reading,
        alternative_titles=_unique(_value_of(el)[0] for el in props.all(NDL_ALTERNATIVE)),
        series_titles=_unique(_value_of(el)[0] for el in props.all(NDL_SERIES_TITLE)),
        creators=_unique_models(
            Creator(name=name, reading=reading, authority_uri=_authority_uri(agent))
            for name, reading, agent in _agents(props.all(DCT_CREATOR))
        ),
        creator_statements=props.texts(DC_CREATOR),
        publishers=_unique_models(
            Publisher(name=name, reading=reading, location=_text(agent.find(NDL_LOCATION)))
            for name, reading, agent in _agents(props.all(DCT_PUBLISHER))
        ),
        publication_place=props.text(NDL_PUBLICATION_PLACE),
        issued=issued,
        year=int(year_match.group(1)) if year_match else None,
        date_text=props.text(DCT_DATE),
        languages=props.texts(DCT_LANGUAGE),
        original_languages=props.texts(NDL_ORIGINAL_LANGUAGE),
        ndl_bib_id=_first(identifiers.pop("NDLBibID", [])),
        jpno=_first(identifiers.pop("JPNO", [])),
        isbn=identifiers.pop("ISBN", []),
        issn=identifiers.pop("ISSN", []),
        doi=_first(identifiers.pop("DOI", [])),
        other_identifiers=identifiers,
        subjects=subjects,
        classifications=classifications,
        extent="; ".join(extents) if extents else None,
        descriptions=props.texts(DCT_DESCRIPTION),
        journal=props.text(NDL_PUBLICATION_NAME),
        volume=props.text(NDL_PUBLICATION_VOLUME),
        number=props.text(NDL_NUMBER),
        issue=props.text(NDL_ISSUE),
        pages=props.text(NDL_PAGE_RANGE),
        access_rights=props.texts(DCT_ACCESS_RIGHTS),
        digitized_copies=_unique(u for u in every_link if _host(u) in _DIGITAL_HOSTS),
        cinii_links=_unique(u for u in every_link if _host(u) in _CINII_HOSTS),
        is_part_of=is_part_of,
        relations=relations,
        see_also=see_also,
        holdings=holdings,
        holding_records=props.resources(NDL_RECORD),
    )


def _first(values: list[str]) -> str | None:
    return values[0] if values else None


def _unique_models(models: Iterable[_M]) -> list[_M]:
    unique: list[_M] = []
    for model in models:
        if any(value is not None for value in model.model_dump().values()) and model not in unique:
            unique.append(model)
    return unique


def _read_record(record: etree._Element) -> tuple[RecordResult, bool]:
    """Read one ``<record>``; the flag is True when its problem is the response's format."""
    position = _int(_text(_first_by_local(record, "recordPosition")))
    packing = _text(_first_by_local(record, "recordPacking"))
    data = _first_by_local(record, "recordData")
    if data is None:
        return RecordResult(position, None, "record has no recordData"), False
    payloads = list(_elements(data))
    if not payloads:
        text = "".join(data.itertext()).strip()
        if text or packing == "string":
            problem = PROBLEM_STRING_PACKED
            if SRW_DC_NS in text:
                problem = f"{problem}; {PROBLEM_DC_SCHEMA}"
            return RecordResult(position, None, problem), True
        return RecordResult(position, None, "record data is empty"), False
    payload = payloads[0]
    if payload.tag == _q(SRW_DC_NS, "dc"):
        return RecordResult(position, None, PROBLEM_DC_SCHEMA), True
    if payload.tag != RDF_RDF:
        return RecordResult(position, None, PROBLEM_OTHER_SCHEMA), True
    try:
        item = _read_item(payload, position)
    except _RecordError as exc:
        return RecordResult(position, None, str(exc)), False
    except ValidationError:
        return RecordResult(position, None, "record has field values that cannot be read"), False
    return RecordResult(position, item, None), False


def _facets(extra: etree._Element | None) -> dict[str, dict[str, int]]:
    facets: dict[str, dict[str, int]] = {}
    for block in _by_local(extra, "facets"):
        for lst in _by_local(block, "lst"):
            name = lst.get("name")
            if not name:
                continue
            counts = facets.setdefault(name, {})
            for entry in _by_local(lst, "int"):
                key, count = entry.get("name"), _int(_text(entry))
                if key is not None and count is not None:
                    counts[key] = count
    return facets


def _diagnostics(root: etree._Element) -> list[UpstreamDiagnostic]:
    found: list[UpstreamDiagnostic] = []
    for block in _by_local(root, "diagnostics"):
        for diagnostic in _by_local(block, "diagnostic"):
            message = _text(_first_by_local(diagnostic, "message"))
            details = _text(_first_by_local(diagnostic, "details"))
            found.append(
                UpstreamDiagnostic(
                    uri=_text(_first_by_local(diagnostic, "uri")),
                    message=message,
                    details=details,
                    # Only when there is no message at all is details the best evidence.
                    kind=classify_diagnostic(message if message is not None else details),
                )
            )
    return found


def parse(data: bytes) -> SruResponse:
    """Parse an NDL Search SRU ``searchRetrieve`` response (``recordSchema=dcndl``).

    Args:
        data: the response body.

    Returns:
        The parsed response: one :class:`RecordResult` per ``<record>``, the diagnostics
        classified, the facets.

    Raises:
        UnsafeXmlError: the body was refused unread (DOCTYPE, size).
        XmlParseError: the body is not well-formed XML, is an HTML page, or is not an SRU
            ``searchRetrieveResponse``.
    """
    root = parse_xml(data)
    local = _local(root.tag) or ""
    if local != "searchRetrieveResponse":
        if local.lower() == "html":
            raise XmlParseError(
                "The upstream answered with an HTML page instead of an SRU response.",
                details={"reason": "html"},
            )
        raise XmlParseError(
            "The upstream answer is not an SRU searchRetrieve response.",
            details={"reason": "not_sru"},
        )
    next_position = _int(_text(_first_by_local(root, "nextRecordPosition")))
    results: list[RecordResult] = []
    format_problem: str | None = None
    packing: str | None = None
    for record in _by_local(_first_by_local(root, "records"), "record"):
        result, is_format = _read_record(record)
        results.append(result)
        if is_format and format_problem is None:
            format_problem = result.problem
        if packing is None:
            packing = _text(_first_by_local(record, "recordPacking"))
    diagnostics = _diagnostics(root)
    return SruResponse(
        total=_int(_text(_first_by_local(root, "numberOfRecords"))),
        next_record_position=next_position or None,
        records=results,
        diagnostics=diagnostics,
        facets=_facets(_first_by_local(root, "extraResponseData")),
        packing=packing,
        format_problem=format_problem,
        version=_text(_first_by_local(root, "version")),
    )
