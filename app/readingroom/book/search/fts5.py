"""The FTS5 backend: SQLite's full-text index over the book's own tokens.

The FTS5 table uses the ``ascii`` tokenizer. It splits only on ASCII spaces and punctuation
and keeps every non-ASCII character, so the tokens of :mod:`.tokenize` reach the index
unchanged. Query text is never FTS5 syntax: every token is quoted.
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Sequence

from .ranker import Ranked
from .tokenize import QueryTerm

__all__ = [
    "ENGINE_FTS5",
    "FTS_RANK",
    "FTS_SCHEMA",
    "HEAD_WEIGHT",
    "TERM_COLUMNS",
    "Fts5Ranker",
    "fts5_available",
    "fts_expression",
]

ENGINE_FTS5 = "fts5"
"""The name of this backend in results and index files."""
HEAD_WEIGHT = 3.0
"""BM25 weight of the ``head`` column (a record's heading path) against its text's 1.0."""
# Contentless: the tokens are derivable from records.norm, so only the index is kept.
FTS_SCHEMA = ("CREATE VIRTUAL TABLE fts USING fts5(body, chars, head, content='', "
              "tokenize='ascii')")
FTS_RANK = f"bm25(1.0, 1.0, {HEAD_WEIGHT})"
"""The ``rank`` function the index file configures: ``bm25()`` with the column weights."""
TERM_COLUMNS = {"body": ("body", "head"), "chars": ("chars",)}
"""The FTS5 columns a term of each :attr:`~.tokenize.QueryTerm.column` is looked up in."""


def fts_expression(terms: Sequence[QueryTerm], strict: bool) -> str:
    """An FTS5 MATCH expression built only from quoted tokens: query text is never syntax."""
    parts = []
    for term in terms:
        phrase = " + ".join('"' + tok.replace('"', '""') + '"' for tok in term.tokens)
        cols = " ".join(TERM_COLUMNS[term.column])
        parts.append(f"({{{cols}}} : {phrase})")
    return (" AND " if strict else " OR ").join(parts)


@functools.cache
def fts5_available() -> bool:
    """True when this Python's SQLite library has FTS5 (probed once per process)."""
    try:
        conn = sqlite3.connect(":memory:")
        try:
            conn.execute("CREATE VIRTUAL TABLE probe USING fts5(x, tokenize='ascii')")
        finally:
            conn.close()
    except sqlite3.Error:
        return False
    return True


class Fts5Ranker:
    name = ENGINE_FTS5

    def scores(self, conn: sqlite3.Connection, terms: Sequence[QueryTerm],
               strict: bool) -> dict[int, float]:
        """Score of every matching record."""
        sql = "SELECT rowid, rank FROM fts WHERE fts MATCH ?"
        return {rowid: -rank
                for rowid, rank in conn.execute(sql, (fts_expression(terms, strict),))}

    def first(self, conn: sqlite3.Connection, terms: Sequence[QueryTerm], strict: bool,
              k: int, hide: frozenset[int] = frozenset()) -> list[int]:
        """The first ``k`` matching rowids outside ``hide``, in reading order (no ranking)."""
        rows = conn.execute("SELECT rowid FROM fts WHERE fts MATCH ? ORDER BY rowid LIMIT ?",
                            (fts_expression(terms, strict), k + len(hide))).fetchall()
        return [r for (r,) in rows if r not in hide][:k]

    def top(self, conn: sqlite3.Connection, terms: Sequence[QueryTerm], strict: bool,
            k: int, hide: frozenset[int] = frozenset(), digits: int | None = None
            ) -> tuple[Ranked, int, int]:
        """The best ``k`` records outside ``hide``, how many match outside it and inside it
        (``digits``: see :meth:`.ranker.Ranker.top`); FTS5 ranks without a Python pass."""
        expr = fts_expression(terms, strict)
        limit = k + len(hide)
        order = "rank" if digits is None else f"round(rank, {int(digits)})"
        ranked = conn.execute(
            f"SELECT {order}, rowid FROM fts WHERE fts MATCH ? ORDER BY {order}, rowid LIMIT ?",
            (expr, limit)).fetchall()
        if len(ranked) < limit:  # every match is here: no second statement to count them
            total = len(ranked)
            kept = [r for r in ranked if r[1] not in hide] if hide else ranked
            return kept[:k], len(kept), total - len(kept)
        total = conn.execute("SELECT count(*) FROM fts WHERE fts MATCH ?", (expr,)).fetchone()[0]
        hidden = 0
        if hide:
            ranked = [r for r in ranked if r[1] not in hide]
            ids = sorted(hide)
            hidden = conn.execute(
                f"SELECT count(*) FROM fts WHERE fts MATCH ? AND rowid IN "
                f"({','.join('?' * len(ids))})", (expr, *ids)).fetchone()[0]
        return ranked[:k], total - hidden, hidden
