"""The models of cinii-mcp's records: :class:`CiniiItem` and its parts, and the parsed answers.

:class:`CiniiItem` and its parts are pydantic models (their field descriptions document the
items a tool returns). :class:`SearchPage` is one OpenSearch answer as
:func:`readingroom.cinii.upstreams.opensearch.parse` read it, :class:`RecordPage` one CRID
record as :func:`readingroom.cinii.upstreams.crid.parse` read it: every item delivered gives one
:class:`ItemResult`, an item or the reason it could not be read, never dropped silently.

Languages come from the JSON-LD itself: a value's own ``@language``, else the document's
default ``@language`` (its ``@context``), else none. They are never guessed from the script of
the text: an English title written by a Japanese society is English only if CiNii says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "CiniiItem",
    "Creator",
    "ItemResult",
    "LangText",
    "RecordPage",
    "Related",
    "SearchPage",
]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LangText(_Model):
    """A text and the language CiNii tags it with."""

    value: str
    language: str | None = Field(
        default=None,
        description="The JSON-LD language tag (ja, en, ja-Kana for a reading …): the value's "
        "own @language, else the document's default; null when CiNii gives none.",
    )


class Creator(_Model):
    """A creator: a name as given, or a researcher with language-tagged names."""

    name: str = Field(description="The name as shown (the Japanese form when tagged, else the "
                      "first given).")
    name_ja: str | None = Field(default=None, description="The name tagged ja, if any.")
    name_en: str | None = Field(default=None, description="The name tagged en, if any.")
    names: list[LangText] = Field(default_factory=list, description="Every form given.")
    researcher_crid: str | None = Field(
        default=None, description="The researcher's CRID in CiNii Research, when linked."
    )


class Related(_Model):
    """A link to the same work in another catalogue of the suite, ready to fetch there."""

    rel: str = Field(description="The catalogue: ndl (NDL Search), cinii (CiNii Research).")
    id_type: str = Field(description="The identifier's kind: ndl_bib_id, ndl_search_id, crid.")
    id: str = Field(description="The identifier.")
    url: str = Field(description="Its public page.")
    server: str = Field(description="The server of the suite that fetches it.")
    tool: str = Field(description="The tool to call there.")
    arguments: dict[str, str] = Field(description="The arguments for that tool.")


class CiniiItem(_Model):
    """One CiNii Research record (an OpenSearch item or a CRID record)."""

    crid: str = Field(description="The CiNii Research id (CRID).")
    url: str = Field(description="The record's page: https://cir.nii.ac.jp/crid/<crid>.")
    record_type: str = Field(
        description="article, book, dissertation, project, data, researcher … from the "
        "record's own type (dc:type or @type); the endpoint's type when the record gives "
        "none; 'unknown' in a cross-type search without one."
    )
    type_label: str | None = Field(default=None, description="The type as CiNii gives it.")
    title: str | None = Field(
        default=None,
        description="The title shown: the one tagged ja, else en, else the first; null when "
        "the record has none (title_missing).",
    )
    title_ja: str | None = Field(default=None, description="The title tagged ja.")
    title_en: str | None = Field(default=None, description="The title tagged en.")
    title_reading: str | None = Field(
        default=None, description="The reading tagged ja-Kana (katakana, not a romanisation)."
    )
    titles: list[LangText] = Field(default_factory=list, description="Every title given.")
    title_missing: bool = Field(
        default=False,
        description="True when CiNii gave no title: the record is kept, not dropped.",
    )
    creators: list[Creator] = Field(default_factory=list)
    publication_name: str | None = Field(
        default=None, description="Journal or series (prism:publicationName), as shown."
    )
    publication_names: list[LangText] = Field(default_factory=list)
    publishers: list[LangText] = Field(default_factory=list, description="Publishers.")
    publication_place: str | None = None
    date: str | None = Field(default=None, description="The date as given (publicationDate, "
                             "dc:date).")
    year: int | None = Field(default=None, description="The year of the date.")
    volume: str | None = None
    number: str | None = None
    starting_page: str | None = None
    ending_page: str | None = None
    pages: str | None = Field(default=None, description="starting-ending, as given.")
    doi: str | None = None
    naid: str | None = None
    ncid: str | None = None
    isbn: list[str] = Field(default_factory=list)
    issn: list[str] = Field(default_factory=list)
    identifiers: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Every typed identifier by CiNii's type name (NAID, NCID, DOI, "
        "NDL_BIB_ID …).",
    )
    languages: list[str] = Field(default_factory=list, description="dc:language.")
    subjects: list[LangText] = Field(default_factory=list)
    descriptions: list[LangText] = Field(
        default_factory=list, description="Abstracts and notes (CRID records), cut to 2,000 "
        "characters each."
    )
    data_sources: list[str] = Field(
        default_factory=list, description="Where CiNii took the record from (JALC, NDL, CIB …)."
    )
    related: list[Related] = Field(
        default_factory=list,
        description="The same work in NDL Search (from its NDL identifiers): fetch it with "
        "ndl-mcp's ndl_get_record and the arguments given.",
    )
    matched_in: list[str] = Field(
        default_factory=list,
        description="The search fields this record was found through (filled by the service).",
    )


@dataclass(frozen=True, slots=True)
class ItemResult:
    """One item of an answer: the item, or why it could not be read.

    Attributes:
        position: its 1-based place in the answer.
        item: the item, or None.
        problem: why it could not be read, or None.
    """

    position: int
    item: CiniiItem | None
    problem: str | None


@dataclass(frozen=True, slots=True)
class SearchPage:
    """One OpenSearch answer.

    Attributes:
        total: ``opensearch:totalResults``; None when absent or not a count.
        start: ``opensearch:startIndex`` when readable.
        items: one result per element of ``items``.
        problem: why the answer as a whole cannot be read as a result (a wrong-type
            container, no count), or None.
    """

    total: int | None
    start: int | None
    items: list[ItemResult] = field(default_factory=list)
    problem: str | None = None


@dataclass(frozen=True, slots=True)
class RecordPage:
    """One CRID record answer: the item, or why it cannot be read."""

    item: CiniiItem | None
    problem: str | None = None
