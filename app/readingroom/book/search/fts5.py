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
    "FTS_SCHEMA",
    "Fts5Ranker",
    "fts5_available",
    "fts_expression",
]

ENGINE_FTS5 = "fts5"
"""The name of this backend in results and index files."""
# Contentless: the tokens are derivable from records.norm, so only the index is kept.
FTS_SCHEMA = "CREATE VIRTUAL TABLE fts USING fts5(body, chars, content='', tokenize='ascii')"


def fts_expression(terms: Sequence[QueryTerm], strict: bool) -> str:
    """An FTS5 MATCH expression built only from quoted tokens: query text is never syntax."""
    parts = []
    for term in terms:
        phrase = " + ".join('"' + tok.replace('"', '""') + '"' for tok in term.tokens)
        parts.append(f"({term.column} : {phrase})")
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

    def top(self, conn: sqlite3.Connection, terms: Sequence[QueryTerm], strict: bool,
            k: int) -> tuple[Ranked, int]:
        """The best ``k`` records and how many match; FTS5 ranks without a Python pass."""
        expr = fts_expression(terms, strict)
        total = conn.execute("SELECT count(*) FROM fts WHERE fts MATCH ?", (expr,)).fetchone()
        ranked = conn.execute(
            "SELECT rank, rowid FROM fts WHERE fts MATCH ? ORDER BY rank, rowid LIMIT ?",
            (expr, k)).fetchall()
        return ranked, total[0]
