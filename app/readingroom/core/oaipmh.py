"""Reader of OAI-PMH 2.0 responses, for every OAI-PMH data provider (Helveticat, e-rara …).

Pure: bytes in, :class:`OaiResponse` out, no I/O. It reads the protocol envelope of all six
verbs and keeps each record's ``<metadata>`` element for the caller's format parser (MARC21 at
Helveticat, ``oai_dc`` at e-rara and e-manuscripta). What it knows of the format:

* Everything is in ``http://www.openarchives.org/OAI/2.0/``; the root is ``OAI-PMH``, then
  ``responseDate``, ``request``, then either one element named after the verb or ``<error>``s.
* An error response carries no verb element, and may come with HTTP 4xx (Zenodo sends 422) and
  a ``request`` without attributes. Errors are never an empty list: :attr:`OaiResponse.errors`
  holds them, and :data:`ERROR_OUTCOMES` says what each means for the caller.
  ``noRecordsMatch`` is a genuine empty result.
* A ``resumptionToken`` with text means the list goes on; an empty one ends the list.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from lxml import etree

from .xmlsafe import XmlParseError, parse_xml
from .xmltree import elements, int_of, text_of

__all__ = [
    "ERROR_OUTCOMES",
    "OAI_NS",
    "VERBS",
    "Identify",
    "MetadataFormat",
    "OaiError",
    "OaiErrorCode",
    "OaiFormatError",
    "OaiHeader",
    "OaiOutcome",
    "OaiRecord",
    "OaiRequest",
    "OaiResponse",
    "OaiSet",
    "ResumptionToken",
    "parse_oai",
]

OAI_NS = "http://www.openarchives.org/OAI/2.0/"
VERBS = frozenset(
    {"Identify", "ListSets", "ListMetadataFormats", "ListIdentifiers", "ListRecords", "GetRecord"}
)


class OaiErrorCode(StrEnum):
    """The error codes of OAI-PMH 2.0 (specification §3.6).

    Each member's docstring (``OaiErrorCode.X.__doc__``, also :attr:`meaning`) is the
    specification's definition of the code.
    """

    def __new__(cls, value: str, meaning: str) -> OaiErrorCode:
        member = str.__new__(cls, value)
        member._value_ = value
        member.__doc__ = meaning
        return member

    BAD_ARGUMENT = (
        "badArgument",
        "The request includes illegal arguments, is missing required arguments, includes a "
        "repeated argument, or values for arguments have an illegal syntax.",
    )
    BAD_RESUMPTION_TOKEN = (
        "badResumptionToken",
        "The value of the resumptionToken argument is invalid or expired.",
    )
    BAD_VERB = (
        "badVerb",
        "Value of the verb argument is not a legal OAI-PMH verb, the verb argument is missing, "
        "or the verb argument is repeated.",
    )
    CANNOT_DISSEMINATE_FORMAT = (
        "cannotDisseminateFormat",
        "The metadata format identified by the value given for the metadataPrefix argument is "
        "not supported by the item or by the repository.",
    )
    ID_DOES_NOT_EXIST = (
        "idDoesNotExist",
        "The value of the identifier argument is unknown or illegal in this repository.",
    )
    NO_RECORDS_MATCH = (
        "noRecordsMatch",
        "The combination of the values of the from, until, set and metadataPrefix arguments "
        "results in an empty list.",
    )
    NO_METADATA_FORMATS = (
        "noMetadataFormats",
        "There are no metadata formats available for the specified item.",
    )
    NO_SET_HIERARCHY = ("noSetHierarchy", "The repository does not support sets.")

    @property
    def meaning(self) -> str:
        """The specification's definition of this code."""
        return self.__doc__ or ""


class OaiOutcome(StrEnum):
    """What an OAI-PMH error means for the server that asked."""

    EMPTY_RESULT = "empty_result"
    """Not a failure: the repository looked and the list is empty (``noRecordsMatch``)."""
    CALLER_MISTAKE = "caller_mistake"
    """The request named something the repository does not have or accept (an argument, a
    token, a format, an identifier): the caller can change the request."""
    UPSTREAM_CANNOT_ANSWER = "upstream_cannot_answer"
    """The repository cannot answer this kind of request (no sets, no formats for the item, the
    verb refused) or sent an error code outside the specification: the result is unknown."""


ERROR_OUTCOMES: dict[OaiErrorCode, OaiOutcome] = {
    OaiErrorCode.NO_RECORDS_MATCH: OaiOutcome.EMPTY_RESULT,
    OaiErrorCode.BAD_ARGUMENT: OaiOutcome.CALLER_MISTAKE,
    OaiErrorCode.BAD_RESUMPTION_TOKEN: OaiOutcome.CALLER_MISTAKE,
    OaiErrorCode.CANNOT_DISSEMINATE_FORMAT: OaiOutcome.CALLER_MISTAKE,
    OaiErrorCode.ID_DOES_NOT_EXIST: OaiOutcome.CALLER_MISTAKE,
    OaiErrorCode.BAD_VERB: OaiOutcome.UPSTREAM_CANNOT_ANSWER,
    OaiErrorCode.NO_METADATA_FORMATS: OaiOutcome.UPSTREAM_CANNOT_ANSWER,
    OaiErrorCode.NO_SET_HIERARCHY: OaiOutcome.UPSTREAM_CANNOT_ANSWER,
}
"""What each OAI-PMH error code means for the caller; a code outside the specification is
``UPSTREAM_CANNOT_ANSWER``."""


_CODES = {code.value: code for code in OaiErrorCode}


class OaiFormatError(XmlParseError):
    """Well-formed XML that is not an OAI-PMH 2.0 response, or one with neither verb nor error.

    A :class:`~readingroom.core.xmlsafe.XmlParseError`, so it carries ``Code.API_ERROR``;
    ``details["reason"]`` is ``"html"``, ``"not_oai"`` or ``"no_payload"``.
    """


@dataclass(frozen=True, slots=True)
class OaiError:
    """One ``<error>`` of the response.

    Attributes:
        code: the ``code`` attribute as sent.
        message: the element's text, or None when empty (Zenodo's ``noRecordsMatch``).
    """

    code: str
    message: str | None

    @property
    def known(self) -> OaiErrorCode | None:
        """The specification's code, or None for a code outside it."""
        return _CODES.get(self.code)

    @property
    def outcome(self) -> OaiOutcome:
        """What this error means for the caller (:data:`ERROR_OUTCOMES`)."""
        known = self.known
        return ERROR_OUTCOMES[known] if known else OaiOutcome.UPSTREAM_CANNOT_ANSWER


@dataclass(frozen=True, slots=True)
class OaiRequest:
    """The ``<request>`` element: the base URL and the request's arguments as echoed.

    Attributes:
        base_url: the element's text.
        verb: the ``verb`` attribute (absent in error responses of some repositories).
        arguments: every other attribute (``metadataPrefix``, ``set``, ``identifier`` …).
    """

    base_url: str | None
    verb: str | None
    arguments: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ResumptionToken:
    """A ``<resumptionToken>`` and its attributes.

    Attributes:
        value: the token to send back, or None for an empty token (the list is complete).
        complete_list_size: ``completeListSize``, when sent.
        cursor: ``cursor``, when sent.
        expiration_date: ``expirationDate`` as sent (UTC datetime), when sent.
    """

    value: str | None
    complete_list_size: int | None = None
    cursor: int | None = None
    expiration_date: str | None = None

    @property
    def list_complete(self) -> bool:
        """True for an empty token: the incomplete list has been returned in full."""
        return self.value is None


@dataclass(frozen=True, slots=True)
class OaiHeader:
    """A record header.

    Attributes:
        identifier: the item's unique identifier (``oai:…``).
        datestamp: the datestamp as sent (day or seconds granularity).
        set_specs: the sets the item belongs to, in order.
        deleted: True for ``status="deleted"`` (such a record has no metadata).
    """

    identifier: str | None
    datestamp: str | None
    set_specs: tuple[str, ...] = ()
    deleted: bool = False


@dataclass(frozen=True, slots=True)
class OaiRecord:
    """A record of ``ListRecords`` or ``GetRecord``.

    Attributes:
        header: the header.
        metadata: the one element inside ``<metadata>`` (``oai_dc:dc``, ``marc:record`` …) for
            the caller's format parser, or None (a deleted record has none).
        about: the elements inside each ``<about>``, in order.
    """

    header: OaiHeader
    metadata: etree._Element | None
    about: tuple[etree._Element, ...] = ()


@dataclass(frozen=True, slots=True)
class OaiSet:
    """A set of ``ListSets``.

    Attributes:
        spec: ``setSpec``, the value the ``set`` argument takes.
        name: ``setName``, for people.
        descriptions: the elements inside each ``setDescription``.
    """

    spec: str | None
    name: str | None
    descriptions: tuple[etree._Element, ...] = ()


@dataclass(frozen=True, slots=True)
class MetadataFormat:
    """A format of ``ListMetadataFormats``.

    Attributes:
        prefix: ``metadataPrefix``, the value the ``metadataPrefix`` argument takes.
        schema: the XML Schema URL.
        namespace: the format's namespace URI.
    """

    prefix: str | None
    schema: str | None
    namespace: str | None


@dataclass(frozen=True, slots=True)
class Identify:
    """The answer to ``Identify``.

    Attributes:
        repository_name: ``repositoryName``.
        base_url: ``baseURL``.
        protocol_version: ``protocolVersion``.
        earliest_datestamp: ``earliestDatestamp``.
        deleted_record: ``deletedRecord`` (``no``, ``transient`` or ``persistent``).
        granularity: ``granularity`` (``YYYY-MM-DD`` or ``YYYY-MM-DDThh:mm:ssZ``).
        admin_emails: every ``adminEmail``.
        compressions: every ``compression``.
        descriptions: the elements inside each ``description``.
    """

    repository_name: str | None
    base_url: str | None
    protocol_version: str | None
    earliest_datestamp: str | None
    deleted_record: str | None
    granularity: str | None
    admin_emails: tuple[str, ...] = ()
    compressions: tuple[str, ...] = ()
    descriptions: tuple[etree._Element, ...] = ()


@dataclass(frozen=True, slots=True)
class OaiResponse:
    """One OAI-PMH 2.0 response.

    Attributes:
        response_date: ``responseDate`` as sent.
        request: the echoed ``<request>``.
        verb: the verb whose element the response holds, or None for an error response.
        errors: every ``<error>``; empty for a successful response.
        identify: the ``Identify`` answer.
        sets: ``ListSets``.
        metadata_formats: ``ListMetadataFormats``.
        headers: ``ListIdentifiers`` (the headers of records stay on :attr:`records`).
        records: ``ListRecords`` and ``GetRecord``.
        resumption_token: the list's ``resumptionToken``, or None when there is none.
    """

    response_date: str | None
    request: OaiRequest
    verb: str | None
    errors: tuple[OaiError, ...] = ()
    identify: Identify | None = None
    sets: tuple[OaiSet, ...] = ()
    metadata_formats: tuple[MetadataFormat, ...] = ()
    headers: tuple[OaiHeader, ...] = ()
    records: tuple[OaiRecord, ...] = ()
    resumption_token: ResumptionToken | None = None

    @property
    def is_empty_result(self) -> bool:
        """True when the only errors are ``noRecordsMatch``: a genuine, checked empty list."""
        return bool(self.errors) and all(
            e.outcome is OaiOutcome.EMPTY_RESULT for e in self.errors
        )

    @property
    def failures(self) -> tuple[OaiError, ...]:
        """The errors that are failures (everything but ``noRecordsMatch``)."""
        return tuple(e for e in self.errors if e.outcome is not OaiOutcome.EMPTY_RESULT)

    @property
    def has_more(self) -> bool:
        """True when a resumption token with a value asks for the next page."""
        return self.resumption_token is not None and self.resumption_token.value is not None


def _q(local: str) -> str:
    return f"{{{OAI_NS}}}{local}"


_VERB_TAGS = frozenset(_q(verb) for verb in VERBS)


def _child_text(parent: etree._Element, local: str) -> str | None:
    return text_of(parent.find(_q(local)))


def _texts(parent: etree._Element, local: str) -> tuple[str, ...]:
    return tuple(t for t in (text_of(el) for el in parent.findall(_q(local))) if t)


def _contents(parent: etree._Element, local: str) -> tuple[etree._Element, ...]:
    """The first element inside each ``local`` child (the wrapper elements of the spec)."""
    found = (next(elements(el), None) for el in parent.findall(_q(local)))
    return tuple(el for el in found if el is not None)


def _header(el: etree._Element) -> OaiHeader:
    return OaiHeader(
        identifier=_child_text(el, "identifier"),
        datestamp=_child_text(el, "datestamp"),
        set_specs=_texts(el, "setSpec"),
        deleted=el.get("status") == "deleted",
    )


def _record(el: etree._Element) -> OaiRecord:
    header = el.find(_q("header"))
    return OaiRecord(
        header=_header(header) if header is not None else OaiHeader(None, None),
        metadata=next(elements(el.find(_q("metadata"))), None),
        about=_contents(el, "about"),
    )


def _token(el: etree._Element | None) -> ResumptionToken | None:
    if el is None:
        return None
    return ResumptionToken(
        value=text_of(el),
        complete_list_size=int_of(el.get("completeListSize")),
        cursor=int_of(el.get("cursor")),
        expiration_date=el.get("expirationDate"),
    )


def _identify(el: etree._Element) -> Identify:
    return Identify(
        repository_name=_child_text(el, "repositoryName"),
        base_url=_child_text(el, "baseURL"),
        protocol_version=_child_text(el, "protocolVersion"),
        earliest_datestamp=_child_text(el, "earliestDatestamp"),
        deleted_record=_child_text(el, "deletedRecord"),
        granularity=_child_text(el, "granularity"),
        admin_emails=_texts(el, "adminEmail"),
        compressions=_texts(el, "compression"),
        descriptions=_contents(el, "description"),
    )


def parse_oai(body: bytes) -> OaiResponse:
    """Read an OAI-PMH 2.0 response through the hardened XML parser.

    Args:
        body: the response body (whatever the HTTP status: error responses may come with 4xx).

    Returns:
        The response: the request, the verb's payload with its resumption token, or the errors.

    Raises:
        UnsafeXmlError: the body was refused unread (DOCTYPE, size).
        XmlParseError: the body is empty or not well-formed XML.
        OaiFormatError: the body is an HTML page, not an ``OAI-PMH`` document, or has neither a
            verb element nor an error.
    """
    root = parse_xml(body)
    tag = root.tag if isinstance(root.tag, str) else ""
    if tag != _q("OAI-PMH"):
        if tag.rpartition("}")[2].lower() == "html":
            raise OaiFormatError(
                "The upstream answered with an HTML page instead of an OAI-PMH response.",
                details={"reason": "html"},
            )
        raise OaiFormatError(
            "The upstream answer is not an OAI-PMH 2.0 response.", details={"reason": "not_oai"}
        )
    request_el = root.find(_q("request"))
    attributes = dict(request_el.attrib) if request_el is not None else {}
    verb_attr = attributes.pop("verb", None)
    request = OaiRequest(
        base_url=text_of(request_el),
        verb=verb_attr,
        arguments={str(k): str(v) for k, v in attributes.items()},
    )
    errors = tuple(
        OaiError(code=el.get("code") or "", message=text_of(el)) for el in root.findall(_q("error"))
    )
    payload = next((el for el in elements(root) if el.tag in _VERB_TAGS), None)
    if payload is None and not errors:
        raise OaiFormatError(
            "The upstream's OAI-PMH response holds neither a result nor an error.",
            details={"reason": "no_payload"},
        )
    response_date = _child_text(root, "responseDate")
    if payload is None:
        return OaiResponse(response_date=response_date, request=request, verb=None, errors=errors)
    verb = payload.tag.rpartition("}")[2]
    return OaiResponse(
        response_date=response_date,
        request=request,
        verb=verb,
        errors=errors,
        identify=_identify(payload) if verb == "Identify" else None,
        sets=tuple(
            OaiSet(
                spec=_child_text(el, "setSpec"),
                name=_child_text(el, "setName"),
                descriptions=_contents(el, "setDescription"),
            )
            for el in payload.findall(_q("set"))
        ),
        metadata_formats=tuple(
            MetadataFormat(
                prefix=_child_text(el, "metadataPrefix"),
                schema=_child_text(el, "schema"),
                namespace=_child_text(el, "metadataNamespace"),
            )
            for el in payload.findall(_q("metadataFormat"))
        ),
        headers=tuple(_header(el) for el in payload.findall(_q("header"))),
        records=tuple(_record(el) for el in payload.findall(_q("record"))),
        resumption_token=_token(payload.find(_q("resumptionToken"))),
    )
