"""NDL Search over SRU: the client bound by the undertakings filed with the library, and the
pure parse of its DC-NDL (RDF/XML) records.

**The client.** The SRU client of NDL Search, bound by the undertakings filed with the library.

The undertakings are constants, not settings: nothing in the environment can lower them.

=====================================  ============================================
Undertaking                            Implementation
=====================================  ============================================
Requests strictly serial               ``Politeness(serial=True)``: one lock held
                                       across the wait, the request and its retry
At least one second between requests   ``MIN_REQUEST_INTERVAL = 1.0`` (monotonic),
                                       kept from the *end* of the previous exchange
                                       (response read, or failure) to the next
                                       start, retries included
No pacing margin                       ``PACING_MARGIN = 0.0``: the library answers
                                       a request only after receiving it, so an
                                       arrival counted from our end of the previous
                                       exchange is at least the floor after the
                                       library's last answer, and more than the
                                       floor after its last arrival (by the round
                                       trip and its own work). Jitter can only add
                                       to that; the 20 ms once added to a floor
                                       between starts bought nothing a floor from
                                       the end does not already give
At most 100 records per request        ``MAX_RECORDS = 100``; no auto-pagination
One polite retry on HTTP 429, then     ``max_retries=1``, Retry-After honoured and
stop                                   capped at ``RETRY_AFTER_CAP``
The harvesting interface is not used   no OAI-PMH code exists
No cache, no local store of records    nothing is kept between calls
Only the five declared dpids           every dpid in the CQL is checked before sending
=====================================  ============================================

**The records.** DC-NDL (RDF/XML) record data of NDL Search, read into
:class:`~readingroom.ndl.models.NdlItem`.

Pure: bytes in, :class:`~readingroom.ndl.models.SruResponse` out, no I/O. :func:`parse` reads the
SRU envelope through :func:`readingroom.core.sru.parse_search_retrieve` and each record's
``recordData`` here. The request it expects is ``recordSchema=dcndl`` with
``recordPacking=xml``. What it knows about the format comes from real responses
(``shared/fixtures/ndl``) and the research notes on them:

* The envelope is SRW 1.x in the default namespace. The ``recordSchema`` element always says
  ``info:srw/schema/1/dc-v1.1``, even for dcndl records, so it is never consulted; the record's
  own payload decides.
* NDL reports an empty result as a diagnostic (``Record does not exist``) with no
  ``numberOfRecords``; diagnostics are classified in :mod:`readingroom.ndl.diagnostics`.
* One record may hold several ``dcndl:BibResource`` elements with the same ``rdf:about``: in
  RDF/XML they are statements about one resource, so they are merged, never treated as records.
  The "manifestation stub" holds only ``dcndl:record`` links to holdings and copies.
* Every ``<record>`` gives exactly one :class:`~readingroom.ndl.models.RecordResult`; a record
  that cannot be read is reported with a problem, never dropped.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TypeVar
from urllib.parse import unquote, urlsplit

import httpx
from lxml import etree
from pydantic import BaseModel, ValidationError

from ... import __version__
from ...core.clock import Clock
from ...core.errors import Code, CoreError
from ...core.http import HttpClient, Politeness
from ...core.offload import run_blocking
from ...core.settings import env_str
from ...core.sru import SruRecord, parse_search_retrieve
from ...core.xmltree import children_named, elements, int_of, text_of
from .. import DEFAULT_ENDPOINT, ENV_NDL_SRU_URL
from ..cql import check_dpids
from ..diagnostics import classify
from ..models import (
    Classification,
    Creator,
    Holding,
    MaterialType,
    NdlItem,
    Publisher,
    RecordResult,
    Related,
    SruResponse,
    Subject,
)

__all__ = [
    "DEFAULT_ENDPOINT",
    "ENV_NDL_SRU_URL",
    "MAX_RECORDS",
    "MIN_REQUEST_INTERVAL",
    "PROBLEM_DC_SCHEMA",
    "PROBLEM_OTHER_SCHEMA",
    "PROBLEM_STRING_PACKED",
    "RESULT_WINDOW",
    "NdlClient",
    "SruExchange",
    "parse",
    "read_record",
]

MIN_REQUEST_INTERVAL = 1.0
MAX_RECORDS = 100
RESULT_WINDOW = 500
"""NDL serves no record past the 500th of a result set, whatever startRecord says."""
RETRY_AFTER_CAP = 30.0
DEFAULT_BACKOFF = 10.0
PACING_MARGIN = 0.0
"""Added to the floor; none is needed now that the floor counts from the end of the exchange
(see the table above). A constant, so it can only ever be raised here, never by a setting."""


UNDERTAKINGS = Politeness(
    min_interval=MIN_REQUEST_INTERVAL + PACING_MARGIN,
    serial=True,
    max_retries=1,
    default_backoff=DEFAULT_BACKOFF,
    max_backoff=RETRY_AFTER_CAP,
    retry_statuses=frozenset({429}),
)

_DPID_IN_CQL = re.compile(r'\bdpid\s*(?:=|any\b)\s*"([^"]*)"', re.IGNORECASE)


@dataclass(frozen=True)
class SruExchange:
    """One request sent and its parsed response."""

    params: dict[str, str]
    endpoint: str
    response: SruResponse


class NdlClient:
    """searchRetrieve over SRU 1.2 with DC-NDL records, one request at a time."""

    def __init__(
        self,
        endpoint: str | None = None,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        clock: Clock | None = None,
        timeout: float = 30.0,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.endpoint = endpoint or env_str(ENV_NDL_SRU_URL, DEFAULT_ENDPOINT, env)
        self._http = HttpClient(
            politeness=UNDERTAKINGS,
            timeout=timeout,
            user_agent=f"readingroom-ndl-mcp/{__version__} (+SRU; serial, >=1s interval)",
            transport=transport,
            clock=clock,
        )

    async def aclose(self) -> None:
        """Close the underlying HTTP client."""
        await self._http.aclose()

    @staticmethod
    def params_for(cql: str, *, start: int, count: int) -> dict[str, str]:
        """The exact request parameters; ``maximumRecords`` never exceeds :data:`MAX_RECORDS`."""
        return {
            "operation": "searchRetrieve",
            "version": "1.2",
            "recordSchema": "dcndl",
            "recordPacking": "xml",
            "query": cql,
            "startRecord": str(max(1, start)),
            "maximumRecords": str(min(max(1, count), MAX_RECORDS)),
        }

    async def search_retrieve(self, cql: str, *, start: int, count: int) -> SruExchange:
        """Send one searchRetrieve and parse the answer.

        Raises:
            CoreError: PROVIDER_NOT_PERMITTED (before sending), RATE_LIMITED, TRANSPORT_ERROR,
                API_ERROR (HTML or unreadable body).
        """
        dpids = [v for group in _DPID_IN_CQL.findall(cql) for v in group.split()]
        if not dpids:
            raise CoreError(
                Code.INVALID_INPUT,
                "Every NDL query must name its data providers.",
                remediation="This is a defect in the query builder.",
            )
        check_dpids(dpids)
        params = self.params_for(cql, start=start, count=count)
        response = await self._http.get(self.endpoint, params)
        ctype = response.headers.get("content-type", "").lower()
        body = response.content
        if "html" in ctype or body.lstrip()[:15].lower().startswith((b"<!doctype html", b"<html")):
            raise CoreError(
                Code.API_ERROR,
                "NDL Search answered with an HTML page instead of an SRU response.",
                details={"status": response.status_code, "content_type": ctype},
                remediation="The service may be under maintenance; try again later.",
            )
        # Off the event loop: pings and cancels are answered while a page is read.
        parsed = await run_blocking(parse, body)
        return SruExchange(params=params, endpoint=self.endpoint, response=parsed)


# ------------------------------------------------------------ the records (pure)

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
_CRID_URL = re.compile(r"^https?://cir\.nii\.ac\.jp/crid/([0-9]{1,30})(?:[./?#]\S*)?$")


# --- helpers ----------------------------------------------------------------------------------


class _RecordError(Exception):
    """A record that cannot become an item; the message is the record's problem."""


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
            for prop in elements(description):
                self._by_tag.setdefault(prop.tag, []).append(prop)

    def all(self, tag: str) -> list[etree._Element]:
        return self._by_tag.get(tag, [])

    def texts(self, tag: str) -> list[str]:
        return _unique(text_of(el) for el in self.all(tag))

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
    description = next(elements(prop), None)
    if description is None:
        return text_of(prop), None
    return text_of(description.find(RDF_VALUE)), text_of(description.find(NDL_TRANSCRIPTION))


def _agents(props: list[etree._Element]) -> Iterator[tuple[str | None, str | None, etree._Element]]:
    """(name, reading, agent element) for each agent of the given creator/publisher properties."""
    for prop in props:
        agents = list(elements(prop))
        if not agents:
            name = text_of(prop)
            if name or prop.get(RDF_RESOURCE):
                yield name, None, prop
            continue
        for agent in agents:
            yield text_of(agent.find(FOAF_NAME)), text_of(agent.find(NDL_TRANSCRIPTION)), agent


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
        agent_name = text_of(agent.find(FOAF_NAME)) if agent is not None else text_of(holder)
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

    title, title_reading = _title(props)
    identifiers = _identifiers(props)
    subjects, classifications = _subjects(props)

    holdings = [_holding(item) for item in rdf.findall(NDL_ITEM)]
    is_part_of = props.links(DCT_IS_PART_OF)
    relations = props.links(DCT_RELATION)
    see_also = props.resources(RDFS_SEE_ALSO)
    every_link = [*is_part_of, *relations, *see_also, *(u for h in holdings for u in h.see_also)]

    issued = props.text(DCT_ISSUED)
    year_match = _YEAR.match(issued) if issued else None
    record_type = _record_type(admin)
    repository = admin.text(NDL_CATEGORY) if admin is not None else None
    extents = props.texts(DCT_EXTENT)

    cinii_links = _unique(u for u in every_link if _host(u) in _CINII_HOSTS)
    return NdlItem(
        record_position=position,
        ndl_search_id=token,
        ndl_url=NDL_SEARCH_BOOKS + token,
        repository=repository or token.split("-", 1)[0],
        record_type=record_type,
        material_type=_unique_models(
            MaterialType(uri=el.get(RDF_RESOURCE), label=el.get(RDFS_LABEL) or text_of(el))
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
            Publisher(name=name, reading=reading, location=text_of(agent.find(NDL_LOCATION)))
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
        cinii_links=cinii_links,
        is_part_of=is_part_of,
        relations=relations,
        see_also=see_also,
        related=_related(cinii_links),
        holdings=holdings,
        holding_records=props.resources(NDL_RECORD),
    )


def _title(props: _Props) -> tuple[str, str | None]:
    """The title (``dcterms:title``, else the first ``dc:title`` value) and its reading."""
    title = props.text(DCT_TITLE)
    title_reading = None
    for dc_title in props.all(DC_TITLE):
        value, reading = _value_of(dc_title)
        title = title or value
        title_reading = title_reading or reading
    if not title:
        raise _RecordError("record has no title")
    return title, title_reading


def _identifiers(props: _Props) -> dict[str, list[str]]:
    """The record's identifiers by kind (``ISBN``, ``JPNO`` …), each value once."""
    identifiers: dict[str, list[str]] = {}
    for ident in props.all(DCT_IDENTIFIER):
        value = text_of(ident)
        if value:
            kind = _datatype_kind(ident.get(RDF_DATATYPE))
            if value not in identifiers.setdefault(kind, []):
                identifiers[kind].append(value)
    return identifiers


def _subjects(props: _Props) -> tuple[list[Subject], list[Classification]]:
    """Subject headings and classifications, from ``dcterms:subject`` and ``dc:subject``."""
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
        descriptions = list(elements(subject))
        for description in descriptions:
            add_subject(text_of(description.find(RDF_VALUE)), description.get(RDF_ABOUT))
        if not resource and not descriptions:
            add_subject(text_of(subject), None)
    for subject in props.all(DC_SUBJECT):
        value = text_of(subject)
        datatype = subject.get(RDF_DATATYPE)
        if value and datatype:
            add_class(_datatype_kind(datatype).lower(), value)
        elif value:
            add_subject(value, None)
    return subjects, classifications


def _record_type(admin: _Props | None) -> str | None:
    """The record type NDL notes in the administrative description, if any."""
    if admin is not None:
        for note in admin.texts(DCT_DESCRIPTION):
            match = _RECORD_TYPE.match(note)
            if match:
                return match.group(1).strip()
    return None


def _related(cinii_links: Iterable[str]) -> list[Related]:
    """A CiNii Research link for each CRID URL (no other shape: a CiNii Books NCID is not one)."""
    crids = _unique(m.group(1) for u in cinii_links if (m := _CRID_URL.match(u.strip())))
    return [Related(rel="cinii", id_type="crid", id=crid, url=f"https://cir.nii.ac.jp/crid/{crid}",
                    server="cinii-mcp", tool="cinii_get_record", arguments={"crid": crid})
            for crid in crids]


def _first(values: list[str]) -> str | None:
    return values[0] if values else None


def _unique_models(models: Iterable[_M]) -> list[_M]:
    unique: list[_M] = []
    for model in models:
        if any(value is not None for value in model.model_dump().values()) and model not in unique:
            unique.append(model)
    return unique


def read_record(record: SruRecord) -> tuple[RecordResult, bool]:
    """Read one SRU record's DC-NDL payload into a :class:`RecordResult`.

    Args:
        record: the record as :func:`readingroom.core.sru.parse_search_retrieve` gives it.

    Returns:
        The result (an item, or a problem saying why not) and a flag that is True when the
        problem is the response's format (string packing, another schema), not this record.
    """
    position = record.position
    data = record.record_data
    if data is None:
        return RecordResult(position, None, "record has no recordData"), False
    payload = record.payload
    if payload is None:
        text = record.text
        if text or record.packing == "string":
            problem = PROBLEM_STRING_PACKED
            if text and SRW_DC_NS in text:
                problem = f"{problem}; {PROBLEM_DC_SCHEMA}"
            return RecordResult(position, None, problem), True
        return RecordResult(position, None, "record data is empty"), False
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
    for block in children_named(extra, "facets"):
        for lst in children_named(block, "lst"):
            name = lst.get("name")
            if not name:
                continue
            counts = facets.setdefault(name, {})
            for entry in children_named(lst, "int"):
                key, count = entry.get("name"), int_of(text_of(entry))
                if key is not None and count is not None:
                    counts[key] = count
    return facets


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
            ``searchRetrieveResponse`` (the last two as its subclass ``SruFormatError``).
    """
    envelope = parse_search_retrieve(data)
    results: list[RecordResult] = []
    format_problem: str | None = None
    packing: str | None = None
    for record in envelope.records:
        result, is_format = read_record(record)
        results.append(result)
        if is_format and format_problem is None:
            format_problem = result.problem
        if packing is None:
            packing = record.packing
    return SruResponse(
        total=envelope.number_of_records,
        next_record_position=envelope.next_record_position or None,
        records=results,
        diagnostics=[classify(d) for d in envelope.diagnostics],
        facets=_facets(envelope.extra_response_data),
        packing=packing,
        format_problem=format_problem,
        version=envelope.version,
    )
