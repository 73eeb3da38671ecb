"""The boundary between the index and its ranking backends.

A backend (FTS5, the Python BM25; later semantic search and a reranker) scores records by
their rowid, which follows reading order. The index narrows, boosts and turns rowids into
hits; a backend only ranks.
"""

from __future__ import annotations

import heapq
import operator
import sqlite3
from collections.abc import Iterable, Sequence
from typing import Protocol

from .tokenize import QueryTerm

__all__ = [
    "Ranked",
    "Ranker",
    "best",
]

Ranked = list[tuple[float, int]]
"""``(-score, rowid)`` best first; rowids follow reading order, so ties rank in it."""


class Ranker(Protocol):
    """What the index asks of a ranking backend."""

    name: str
    """The backend's name, reported in every result (``fts5``, ``python-bm25``)."""

    def scores(self, conn: sqlite3.Connection, terms: Sequence[QueryTerm],
               strict: bool) -> dict[int, float]:
        """Score of every matching record, by rowid (higher is better)."""
        ...

    def top(self, conn: sqlite3.Connection, terms: Sequence[QueryTerm], strict: bool,
            k: int, hide: frozenset[int] = frozenset(), digits: int | None = None
            ) -> tuple[Ranked, int, int]:
        """The best ``k`` records not in ``hide``, how many of those match, and how many
        records of ``hide`` match; with ``digits``, scores equal when rounded to that many
        decimals are ties (in reading order)."""
        ...


    def first(self, conn: sqlite3.Connection, terms: Sequence[QueryTerm], strict: bool,
              k: int, hide: frozenset[int] = frozenset()) -> list[int]:
        """The first ``k`` matching rowids outside ``hide``, in reading order."""
        ...


def best(scores: dict[int, float], k: int, digits: int | None = None) -> Ranked:
    """The ``k`` best of ``scores``, best first, ties in reading order; with ``digits``,
    scores equal when rounded to that many decimals are ties."""
    negs: Iterable[float] = map(operator.neg, scores.values())
    if digits is not None:
        negs = (round(n, digits) for n in negs)
    return heapq.nsmallest(k, zip(negs, scores.keys(), strict=True))
