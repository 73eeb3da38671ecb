"""Reader of SRU ``searchRetrieve`` responses, versions 1.1/1.2 and 2.0, for every SRU server.

Pure: bytes in, :class:`SruResponse` out, no I/O. It reads the envelope only and keeps each
record's ``recordData`` element for the caller's schema-specific parser (DC-NDL at NDL Search,
Dublin Core or MARCXML at Alma/Helveticat). What it knows of the format:

* SRU 1.1 and 1.2 answer in ``http://www.loc.gov/zing/srw/`` with diagnostics in
  ``http://www.loc.gov/zing/srw/diagnostic/``; every real sample (NDL Search, Helveticat,
  swisscovery) is SRU 1.x. SRU 2.0 answers in
  ``http://docs.oasis-open.org/ns/search-ws/sruResponse`` and says how a record is escaped in
  ``recordXMLEscaping`` (its ``recordPacking`` means packed/unpacked instead).
* Envelope elements are found by local name, as servers differ in prefixes and some put the
  diagnostic elements in the SRW namespace rather than the diagnostic one.
* A record whose schema is the diagnostic schema is a surrogate diagnostic: the server could
  not give that one record.
* What does not fit the format is never silently turned into "nothing": a ``numberOfRecords``
  or ``nextRecordPosition`` that is not a count, or a ``<records>`` block holding something
  other than ``<record>`` elements, is named in :attr:`SruResponse.problems` (the count is then
  None, as when absent), so a caller can tell a damaged answer from an empty one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lxml import etree

from .xmlsafe import XmlParseError, parse_xml
from .xmltree import children_named, elements, first_child, int_of, local_name, text_of

__all__ = [
    "DIAGNOSTIC_1_NS",
    "DIAGNOSTIC_2_NS",
    "SRU_1_NS",
    "SRU_2_NS",
    "SURROGATE_DIAGNOSTIC_SCHEMA",
    "SruDiagnostic",
    "SruFormatError",
    "SruRecord",
    "SruResponse",
    "parse_search_retrieve",
]

SRU_1_NS = "http://www.loc.gov/zing/srw/"
"""The response namespace of SRU 1.1 and 1.2 (SRW)."""
SRU_2_NS = "http://docs.oasis-open.org/ns/search-ws/sruResponse"
"""The response namespace of SRU 2.0 (OASIS searchRetrieve)."""
DIAGNOSTIC_1_NS = "http://www.loc.gov/zing/srw/diagnostic/"
DIAGNOSTIC_2_NS = "http://docs.oasis-open.org/ns/search-ws/diagnostic"
SURROGATE_DIAGNOSTIC_SCHEMA = "info:srw/schema/1/diagnostics-v1.1"


class SruFormatError(XmlParseError):
    """Well-formed XML that is not an SRU ``searchRetrieveResponse`` (an HTML page, an Atom feed).

    A :class:`~readingroom.core.xmlsafe.XmlParseError`, so it carries ``Code.API_ERROR``;
    ``details["reason"]`` is ``"html"`` or ``"not_sru"``.
    """


@dataclass(frozen=True, slots=True)
class SruDiagnostic:
    """One SRU diagnostic as the server sent it.

    Attributes:
        uri: the ``<uri>``, e.g. ``info:srw/diagnostic/1/10`` (NDL sends ``…/1/1`` for all).
        message: the ``<message>`` text.
        details: the ``<details>`` text.
    """

    uri: str | None
    message: str | None
    details: str | None


@dataclass(frozen=True, slots=True)
class SruRecord:
    """One ``<record>`` of the response, its payload left unread.

    Attributes:
        position: ``recordPosition``.
        schema: ``recordSchema`` as sent (a short name like ``dc`` or a URI); servers differ,
            and NDL labels dcndl records ``info:srw/schema/1/dc-v1.1``.
        packing: how ``recordData`` is escaped, ``xml`` or ``string``: SRU 1.x
            ``recordPacking``, SRU 2.0 ``recordXMLEscaping``.
        identifier: ``recordIdentifier``, when sent.
        record_data: the ``<recordData>`` element, or None when the record has none.
        surrogate_diagnostic: the diagnostic standing in for the record, when its schema is
            the diagnostic schema.
    """

    position: int | None
    schema: str | None
    packing: str | None
    identifier: str | None
    record_data: etree._Element | None
    surrogate_diagnostic: SruDiagnostic | None = None

    @property
    def payload(self) -> etree._Element | None:
        """The first element inside ``recordData`` (xml packing), for the schema's parser."""
        return next(elements(self.record_data), None)

    @property
    def text(self) -> str | None:
        """The text of ``recordData`` when it holds no element (string packing), stripped."""
        if self.record_data is None or self.payload is not None:
            return None
        return "".join(self.record_data.itertext()).strip() or None


@dataclass(frozen=True, slots=True)
class SruResponse:
    """The envelope of one SRU ``searchRetrieve`` response.

    Attributes:
        namespace: the root element's namespace (:data:`SRU_1_NS`, :data:`SRU_2_NS`, or what
            the server used).
        version: the ``<version>`` text, or None when absent (NDL's diagnostics omit it).
        number_of_records: ``numberOfRecords``; None when absent (NDL's zero-result
            diagnostic has none).
        next_record_position: ``nextRecordPosition`` as sent (0 kept); None when absent.
        records: one entry per ``<record>``, in order.
        diagnostics: the response's ``<diagnostics>``, in order (surrogate diagnostics stay
            on their records).
        echoed_request: ``echoedSearchRetrieveRequest`` fields with text, by local name
            (``query``, ``startRecord``, ``maximumRecords``, ``recordSchema`` …).
        extra_response_data: the ``<extraResponseData>`` element (NDL's facets, Alma's
            ``exact`` and ``responseDate``), or None.
        result_set_id: ``resultSetId``, when sent.
        problems: what in the envelope does not fit the format, one sentence each (empty for
            a well-formed answer): a count that is not a non-negative integer, a
            ``<records>`` block with text or foreign elements in it.
    """

    namespace: str | None
    version: str | None
    number_of_records: int | None
    next_record_position: int | None
    records: tuple[SruRecord, ...]
    diagnostics: tuple[SruDiagnostic, ...]
    echoed_request: dict[str, str] = field(default_factory=dict)
    extra_response_data: etree._Element | None = None
    result_set_id: str | None = None
    problems: tuple[str, ...] = ()

    @property
    def is_sru2(self) -> bool:
        """True for an SRU 2.0 response (by namespace)."""
        return self.namespace == SRU_2_NS


def _namespace(tag: str) -> str | None:
    return tag[1:].partition("}")[0] if tag.startswith("{") else None


def _count(root: etree._Element, local: str, problems: list[str]) -> int | None:
    """A non-negative count element's value; None when absent, a problem when not a count."""
    found = children_named(root, local)
    if not found:
        return None
    if len(found) > 1:
        problems.append(f"<{local}> appears {len(found)} times")
        return None
    el = found[0]
    text = text_of(el)
    if len(el) and any(isinstance(c.tag, str) for c in el):
        problems.append(f"<{local}> holds elements, not a number")
        return None
    if text is None:
        return None
    value = int_of(text)
    if value is None or value < 0:
        problems.append(f"<{local}> is {text[:40]!r}, not a count")
        return None
    return value


def _records_block(root: etree._Element, problems: list[str]) -> list[etree._Element]:
    """The ``<record>`` elements of ``<records>``; anything else inside it is a problem."""
    blocks = children_named(root, "records")
    if not blocks:
        return []
    if len(blocks) > 1:
        problems.append(f"<records> appears {len(blocks)} times")
    block = blocks[0]
    if (block.text or "").strip():
        problems.append("<records> holds text instead of <record> elements")
    foreign = {(local_name(c.tag) or "") for c in elements(block)} - {"record"}
    if foreign:
        problems.append(f"<records> holds <{sorted(foreign)[0]}> where <record> belongs")
    return children_named(block, "record")


def _diagnostic(el: etree._Element) -> SruDiagnostic:
    return SruDiagnostic(
        uri=text_of(first_child(el, "uri")),
        message=text_of(first_child(el, "message")),
        details=text_of(first_child(el, "details")),
    )


def _record(el: etree._Element, sru2: bool) -> SruRecord:
    schema = text_of(first_child(el, "recordSchema"))
    packing = text_of(first_child(el, "recordXMLEscaping" if sru2 else "recordPacking"))
    data = first_child(el, "recordData")
    surrogate = None
    if schema == SURROGATE_DIAGNOSTIC_SCHEMA:
        payload = next(elements(data), None)
        if payload is not None and local_name(payload.tag) == "diagnostic":
            surrogate = _diagnostic(payload)
    return SruRecord(
        position=int_of(text_of(first_child(el, "recordPosition"))),
        schema=schema,
        packing=packing,
        identifier=text_of(first_child(el, "recordIdentifier")),
        record_data=data,
        surrogate_diagnostic=surrogate,
    )


def _echoed(el: etree._Element | None) -> dict[str, str]:
    echoed: dict[str, str] = {}
    for child in elements(el):
        name, value = local_name(child.tag), text_of(child)
        if name and value is not None:
            echoed[name] = value
    return echoed


def parse_search_retrieve(body: bytes) -> SruResponse:
    """Read an SRU ``searchRetrieve`` response through the hardened XML parser.

    Args:
        body: the response body.

    Returns:
        The envelope: counts, records with their ``recordData`` unread, diagnostics, the echoed
        request and ``extraResponseData``.

    Raises:
        UnsafeXmlError: the body was refused unread (DOCTYPE, size).
        XmlParseError: the body is empty or not well-formed XML.
        SruFormatError: the body is an HTML page or not a ``searchRetrieveResponse``.
    """
    root = parse_xml(body)
    local = local_name(root.tag) or ""
    if local != "searchRetrieveResponse":
        if local.lower() == "html":
            raise SruFormatError(
                "The upstream answered with an HTML page instead of an SRU response.",
                details={"reason": "html"},
            )
        raise SruFormatError(
            "The upstream answer is not an SRU searchRetrieve response.",
            details={"reason": "not_sru"},
        )
    namespace = _namespace(root.tag)
    sru2 = namespace == SRU_2_NS
    problems: list[str] = []
    number = _count(root, "numberOfRecords", problems)
    next_position = _count(root, "nextRecordPosition", problems)
    records = _records_block(root, problems)
    return SruResponse(
        namespace=namespace,
        version=text_of(first_child(root, "version")),
        number_of_records=number,
        next_record_position=next_position,
        records=tuple(_record(r, sru2) for r in records),
        diagnostics=tuple(
            _diagnostic(d)
            for block in children_named(root, "diagnostics")
            for d in children_named(block, "diagnostic")
        ),
        echoed_request=_echoed(first_child(root, "echoedSearchRetrieveRequest")),
        extra_response_data=first_child(root, "extraResponseData"),
        result_set_id=text_of(first_child(root, "resultSetId")),
        problems=tuple(problems),
    )
