"""The models of ndl-mcp's records: :class:`NdlItem` and its parts, and NDL's reading of a response.

:class:`NdlItem` and its parts are pydantic models (their field descriptions become the tool's
output schema). :class:`SruResponse` here is NDL's reading of one ``searchRetrieve`` response,
built by :func:`readingroom.ndl.upstreams.ndl_search.parse` on top of the generic envelope of
:mod:`readingroom.core.sru`: one :class:`RecordResult` per ``<record>``, diagnostics classified,
facets counted.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from .diagnostics import DiagnosticKind, UpstreamDiagnostic

__all__ = [
    "Classification",
    "Creator",
    "Holding",
    "MaterialType",
    "NdlItem",
    "Publisher",
    "RecordResult",
    "Related",
    "SruResponse",
    "Subject",
]


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


class Related(_Model):
    """A link to the same work in another catalogue of the suite, ready to fetch there."""

    rel: str = Field(description="The catalogue: cinii (CiNii Research).")
    id_type: str = Field(description="The identifier's kind: crid.")
    id: str = Field(description="The identifier.")
    url: str = Field(description="Its public page.")
    server: str = Field(description="The server of the suite that fetches it.")
    tool: str = Field(description="The tool to call there.")
    arguments: dict[str, str] = Field(description="The arguments for that tool.")


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
    related: list[Related] = Field(
        default_factory=list,
        description=(
            "The same work in CiNii Research: each CRID of the record's or its Items' "
            "rdfs:seeAlso, ready for cinii-mcp's cinii_get_record."
        ),
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
