"""A small hand-made book for the search tests: Latin, Japanese, full-width, radicals, controls."""

from __future__ import annotations

from readingroom.book.model import Record
from readingroom.book.search.results import SearchResult


def rec(n: int, text: str, heading: tuple[str, ...], unit: int, unit_end: int | None = None
        ) -> Record:
    """A record numbered ``n`` spanning units ``unit``..``unit_end``."""
    end = unit if unit_end is None else unit_end
    return Record(record_id=f"r{n:04d}", order=n, heading_path=heading, text=text,
                  unit_start=unit, char_start=0, unit_end=end, char_end=len(text))


RECORDS = [
    rec(0, "The deﬁnition of an electric current, and the theorem that follows.",
        ("Part I", "Electricity"), 0),
    rec(1, "古い電燈の下で、東京の人々は\n交流について語った。", ("第一章　東京", "電燈"), 1),
    rec(2, "ＡＢＣ full-width letters and 全角　スペース here.", ("Part I", "Forms"), 2),
    rec(3, "⼀つの⽊がある。", ("Part I", "Radicals"), 3),
    rec(4, "猫が好きです。有機交流の話。", ("Part II", "Animals"), 4, 5),
    rec(5, "東京。京都、大阪。有機的な交流もある。", ("Part II", "Cities"), 5),
    rec(6, "A current electric fence; electric and electric again. Electric!",
        ("Part II", "Electricity again"), 6, 7),
    rec(7, "Hidden\u202e bidi\u200b text about the theorem of everything.",
        ("Part III", "Controls"), 8),
    rec(8, "Banana bread and electric current meet here, in a long current story.",
        ("Part III", "Kitchen"), 9),
]
LABELS = ["i", "ii", "1", "2", "3", "4", "5", "6", "7", "8"]


def ids(result: SearchResult) -> list[str]:
    """The record ids of the hits, in rank order."""
    return [h.record_id for h in result.hits]


def signature(result: SearchResult) -> list[tuple[str, float, list[str], str]]:
    """What two engines must agree on: per hit, its id, score, matched terms and snippet."""
    return [(h.record_id, round(h.score, 9), h.matched_terms, h.snippet) for h in result.hits]

