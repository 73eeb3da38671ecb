"""The models of jstage-mcp's records, and the parsed WebAPI feeds.

:class:`JstageArticle` (``service=3``) and :class:`JstageIssue` (``service=2``) are pydantic
models; :class:`Feed` is one Atom answer as :func:`readingroom.jstage.upstreams.feed.read_feed`
read it: its status, its counts, and one :class:`EntryResult` per entry that is not empty.

J-STAGE gives titles, author names and journal names as separate ``en`` and ``ja`` blocks; they
are kept apart by that language, never paired or guessed: an article's English block may name
fewer authors than its Japanese one (a real answer does), so the n-th English name is not the
n-th Japanese name's romanisation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["EntryResult", "Feed", "JstageArticle", "JstageIssue"]

T = TypeVar("T")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class JstageArticle(_Model):
    """One J-STAGE article (an entry of ``service=3``)."""

    title: str | None = Field(
        default=None, description="The title shown: Japanese when given, else English."
    )
    title_ja: str | None = Field(default=None, description="article_title/ja.")
    title_en: str | None = Field(default=None, description="article_title/en.")
    title_missing: bool = Field(default=False, description="True when J-STAGE gave no title.")
    authors_ja: list[str] = Field(default_factory=list, description="author/ja/name, in order.")
    authors_en: list[str] = Field(
        default_factory=list,
        description="author/en/name, in order; not paired with authors_ja (the lists may differ "
        "in length).",
    )
    journal: str | None = Field(default=None, description="The journal name shown.")
    journal_ja: str | None = Field(default=None, description="material_title/ja.")
    journal_en: str | None = Field(default=None, description="material_title/en.")
    cdjournal: str | None = Field(default=None, description="J-STAGE's journal code.")
    issn: str | None = Field(default=None, description="prism:issn (print).")
    eissn: str | None = Field(default=None, description="prism:eIssn (online).")
    volume: str | None = None
    number: str | None = None
    starting_page: str | None = None
    ending_page: str | None = None
    pages: str | None = Field(default=None, description="starting-ending.")
    year: int | None = Field(default=None, description="pubyear.")
    doi: str | None = Field(default=None, description="prism:doi.")
    url: str | None = Field(default=None, description="The article's J-STAGE page.")
    url_ja: str | None = Field(default=None, description="article_link/ja.")
    url_en: str | None = Field(default=None, description="article_link/en.")
    updated: str | None = None
    matched_in: list[str] = Field(
        default_factory=list, description="The search fields used (filled by the service)."
    )


class JstageIssue(_Model):
    """One volume or issue of a journal (an entry of ``service=2``)."""

    label: str | None = Field(default=None, description="The issue's label shown.")
    label_ja: str | None = Field(default=None, description="vols_title/ja.")
    label_en: str | None = Field(default=None, description="vols_title/en.")
    journal: str | None = None
    journal_ja: str | None = None
    journal_en: str | None = None
    cdjournal: str | None = None
    issn: str | None = None
    eissn: str | None = None
    volume: str | None = None
    number: str | None = None
    starting_page: str | None = None
    year: int | None = None
    publisher: str | None = None
    url: str | None = Field(default=None, description="The issue's table of contents.")
    url_ja: str | None = None
    url_en: str | None = None
    articles: dict[str, str] = Field(
        default_factory=dict,
        description="The arguments of jstage_search_articles that list this issue's articles.",
    )


@dataclass(frozen=True, slots=True)
class EntryResult(Generic[T]):
    """One entry of a feed: the record, or why it could not be read."""

    position: int
    item: T | None
    problem: str | None


@dataclass(frozen=True, slots=True)
class Feed(Generic[T]):
    """One WebAPI answer.

    Attributes:
        status: ``result/status`` (``0``, ``ERR_001`` …), None when missing.
        message: ``result/message``.
        total: ``opensearch:totalResults``, None when missing or not a count.
        start: ``opensearch:startIndex``.
        entries: one result per entry that is not empty (an empty ``<entry/>`` is no record).
        empty_entries: how many entries were empty.
        problem: why the answer as a whole cannot be read (not a feed, a count that is not a
            number), or None.
    """

    status: str | None
    message: str | None
    total: int | None
    start: int | None
    entries: list[EntryResult[T]] = field(default_factory=list)
    empty_entries: int = 0
    problem: str | None = None
