"""What a search returns: the result models shared by the index and every backend."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .snippet import SNIPPET_CHARS
from .tokenize import TermKind

__all__ = [
    "HINT_BOOST",
    "HintApplied",
    "Hit",
    "IndexStats",
    "ModeDetails",
    "SearchModes",
    "SearchResult",
    "Term",
]

HINT_BOOST = 2.0
"""Factor applied to the score of a record a boost hint selects."""


class Term(BaseModel):
    """One query term as the index understood it."""

    model_config = ConfigDict(extra="forbid")

    text: str = Field(description="The term, normalised.")
    kind: TermKind = Field(
        description="word; cjk_phrase (a CJK run, matched as its contiguous string); phrase "
        "(a double-quoted group of words and runs, adjacent and in order); cjk_char (a "
        "one-character CJK term, matched wherever the character occurs)."
    )


class HintApplied(BaseModel):
    """How one hint shaped the result."""

    model_config = ConfigDict(extra="forbid")

    key: str
    value: str
    applied_as: Literal["narrow", "boost"] = Field(
        description="narrow: only records the hint selects can match; boost: their score is "
        f"multiplied by {HINT_BOOST}."
    )
    records: int = Field(description="How many records of the book the hint selects.")


class SearchModes(BaseModel):
    """Which retrieval modes ran for this search."""

    model_config = ConfigDict(extra="forbid")

    lexical: Literal["ok"] = "ok"
    lexical_engine: Literal["fts5", "python-bm25"]
    semantic: Literal["off", "unavailable", "warming", "ok"] = "off"
    rerank: Literal["off", "unavailable", "skipped", "ok"] = "off"


class ModeDetails(BaseModel):
    """Why each optional mode is in the state :class:`SearchModes` reports."""

    model_config = ConfigDict(extra="forbid")

    semantic_reason: str | None = Field(None, description="Why semantic is not ok, if not.")
    semantic_model: str | None = Field(None, description="The model the query was embedded "
                                       "with, or the package's embeddings were made with.")
    fusion: str | None = Field(None, description="How the rankings were fused, when they were.")
    rerank_reason: str | None = Field(None, description="Why rerank is not ok, if not.")
    rerank_model: str | None = None
    rerank_seconds: float | None = None


class Hit(BaseModel):
    """One ranked record."""

    model_config = ConfigDict(extra="forbid")

    record_id: str
    order: int
    rank: int = Field(0, description="1-based place of this hit in the result: what to go by. "
                      "(A score near 0 does not mean no match: in a book of one or two records "
                      "BM25 cannot tell records apart, and the words still matched.)")
    score: float = Field(description="The score the hits are ordered by, higher is better: "
                         "BM25 (times the phrase, proximity, heading and hint boosts, "
                         "rounded; equal scores in reading order) when only lexical search "
                         "ran; the RRF score when lexical and semantic rankings were fused; "
                         "the reranker's relevance when reranked. Compare it only within one "
                         "result.")
    heading_path: list[str]
    unit_start: int
    unit_end: int
    page_labels: list[str] = Field(description="Printed labels of the units the record spans.")
    snippet: str = Field(
        description=f"About {SNIPPET_CHARS} characters of raw text from the window with the "
        "most query terms (the typed phrase preferred), matches marked «like this», "
        "whitespace collapsed; … where cut."
    )
    matched_terms: list[str] = Field(description="Texts of the query terms this record has.")
    folds: list[str] = Field(
        default_factory=list,
        description="Folds that made the query match this record's text where the two differ "
        "(kanji_variant: 灯 typed, 燈 printed; punctuation: ' typed, ’ printed; plural: "
        "metatopics typed, metatopic printed; diacritics, width, ...): the text says it "
        "differently from what was typed. Empty when it matched as typed.")
    matched_by: list[str] = Field(
        default_factory=lambda: ["lexical"],
        description="What found the record: lexical, semantic, or both.")
    ranks: dict[str, int] = Field(
        default_factory=dict,
        description="1-based rank per stage: lexical, semantic, fused (RRF), rerank.")
    scores: dict[str, float] = Field(
        default_factory=dict,
        description="Score per stage: lexical (BM25), semantic (cosine), rrf, rerank.")
    text_source: Literal["ocr", "mixed"] | None = Field(
        None, description="Set when the record's text was read by OCR from page images "
        "(mixed: partly): machine-read, not the publisher's text; `ocr` says by what and "
        "with what mean word confidence.")
    ocr: dict[str, Any] | None = None


class SearchResult(BaseModel):
    """A ranked lexical search over one book's records."""

    model_config = ConfigDict(extra="forbid")

    query: str
    normalized_query: str
    terms: list[Term]
    strict: bool
    top_k: int
    hints_applied: list[HintApplied]
    modes: SearchModes
    mode_details: ModeDetails | None = Field(
        None, description="Reasons and models behind modes (set by the book search service).")
    total_matches: int = Field(description="Records matching (after narrowing hints), "
                               "contents pages left out not counted.")
    contents_left_out: int = Field(
        0, description="Records that match but were left out because they are contents "
        "pages or navigation (a printed table of contents, an EPUB nav document): they list "
        "chapter titles, not the chapters. Search again with include_contents to see them.")
    index_left_out: int = Field(
        0, description="Records that match but were left out because they are a back-of-book "
        "index (role index): it lists names and page numbers, not the passages. Search again "
        "with include_index to see them; read one with read_entry to follow its links.")
    folds: list[str] = Field(
        default_factory=list,
        description="Folds some hit needed: where the book's text says it differently from "
        "what was typed (the union of the hits' folds). Empty when every hit matched as "
        "typed, even if the query itself was folded (query_folds).")
    query_folds: list[str] = Field(
        default_factory=list,
        description="Folds that changed the query itself (e.g. full-width letters, curly "
        "quotes, kyūjitai, diacritics): it was searched in its folded form, shown in "
        "normalized_query. They say nothing about the book's text; folds and each hit's "
        "folds do.")
    hits: list[Hit]


class IndexStats(BaseModel):
    """What :func:`build_index` wrote."""

    model_config = ConfigDict(extra="forbid")

    records: int
    engine: Literal["fts5", "python-bm25"]
    body_tokens: int = Field(description="Words, bigrams and run breaks indexed.")
    cjk_chars: int = Field(description="CJK characters indexed alone.")
    bytes: int
    seconds: float
