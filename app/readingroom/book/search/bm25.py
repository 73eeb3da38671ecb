"""The pure-Python BM25 backend, for a SQLite library without FTS5.

It reads the same tokens as FTS5 from plain posting tables (or builds them in memory from an
FTS5 index file's stored text) and uses FTS5's ``bm25()`` formula, so both rank alike.
"""

from __future__ import annotations

import functools
import math
import sqlite3
import sys
import threading
from array import array
from collections.abc import Callable, Iterable, Mapping, Sequence

from .fts5 import HEAD_WEIGHT, TERM_COLUMNS
from .ranker import Ranked, best
from .tokenize import QueryTerm

__all__ = [
    "ENGINE_PYTHON",
    "FIELD_WEIGHTS",
    "K1",
    "POSTINGS_SCHEMA",
    "B",
    "Bm25Ranker",
    "Postings",
    "build_postings",
    "decode_postings",
    "encode_postings",
    "stored_lookup",
]

ENGINE_PYTHON = "python-bm25"
"""The name of this backend in results and index files."""
K1 = 1.2
B = 0.75
FIELD_WEIGHTS = {"body": 1.0, "chars": 1.0, "head": HEAD_WEIGHT}
POSTINGS_SCHEMA = """
CREATE TABLE postings (
    col TEXT NOT NULL, token TEXT NOT NULL, data BLOB NOT NULL, PRIMARY KEY (col, token)
) WITHOUT ROWID;
"""


Postings = dict[int, list[int]]
"""rowid → token positions in one column of that row."""


def build_postings(streams: Iterable[tuple[int, list[str], str, list[str]]]
                   ) -> dict[str, dict[str, Postings]]:
    """Inverted lists of the three columns from ``(rowid, body tokens, CJK characters, heading
    tokens)``."""
    tables: dict[str, dict[str, Postings]] = {"body": {}, "chars": {}, "head": {}}
    for rowid, body, chars, head in streams:
        for col, tokens in (("body", body), ("chars", chars), ("head", head)):
            local: dict[str, list[int]] = {}
            for pos, tok in enumerate(tokens):
                seen = local.get(tok)
                if seen is None:
                    local[tok] = [pos]
                else:
                    seen.append(pos)
            table = tables[col]
            for tok, positions in local.items():
                table.setdefault(tok, {})[rowid] = positions
    return tables


def encode_postings(plist: Postings) -> bytes:
    arr = array("I")
    for rowid, positions in plist.items():
        arr.append(rowid)
        arr.append(len(positions))
        arr.extend(positions)
    if sys.byteorder == "big":
        arr.byteswap()
    return arr.tobytes()


def decode_postings(blob: bytes) -> Postings:
    arr = array("I")
    arr.frombytes(blob)
    if sys.byteorder == "big":
        arr.byteswap()
    out: Postings = {}
    i, n = 0, len(arr)
    while i < n:
        count = arr[i + 1]
        out[arr[i]] = arr[i + 2:i + 2 + count].tolist()
        i += 2 + count
    return out


class Bm25Ranker:
    """BM25 exactly as FTS5's ``bm25()`` computes it, over the same token streams and with
    the same column weights (a term's frequency is the weighted sum over its columns)."""

    name = ENGINE_PYTHON

    def __init__(self, rows: int, total_tokens: int, lengths: dict[int, int],
                 lookup: Callable[[sqlite3.Connection, str, str], Postings]) -> None:
        self._rows = rows
        self._avgdl = total_tokens / rows if rows else 0.0
        self._lengths = lengths
        self._lookup = lookup
        # The last scores this thread computed: a search that completes its pool in reading
        # order (first()) right after top() does not score the book twice.
        self._last = threading.local()

    def _instances(self, conn: sqlite3.Connection, term: QueryTerm) -> Mapping[int, float]:
        found = [(FIELD_WEIGHTS[col], counts) for col in TERM_COLUMNS[term.column]
                 if (counts := self._column_instances(conn, col, term))]
        if not found:
            return {}
        if len(found) == 1 and found[0][0] == 1.0:
            return found[0][1]  # the usual case: only the text has the term
        out: dict[int, float] = {}
        for weight, counts in found:
            for rowid, count in counts.items():
                out[rowid] = out.get(rowid, 0.0) + weight * count
        return out

    def _column_instances(self, conn: sqlite3.Connection, col: str,
                          term: QueryTerm) -> dict[int, int]:
        lists = [self._lookup(conn, col, tok) for tok in term.tokens]
        if not all(lists):
            return {}
        if len(lists) == 1:
            return {rowid: len(pos) for rowid, pos in lists[0].items()}
        head, rest = lists[0], lists[1:]
        docs = set(head).intersection(*rest)
        out: dict[int, int] = {}
        for rowid in docs:
            follow = [(i, set(plist[rowid])) for i, plist in enumerate(rest, start=1)]
            count = sum(1 for p in head[rowid] if all(p + i in s for i, s in follow))
            if count:
                out[rowid] = count
        return out

    def first(self, conn: sqlite3.Connection, terms: Sequence[QueryTerm], strict: bool,
              k: int, hide: frozenset[int] = frozenset()) -> list[int]:
        """The first ``k`` matching rowids outside ``hide``, in reading order."""
        return sorted(r for r in self.scores(conn, terms, strict) if r not in hide)[:k]

    def top(self, conn: sqlite3.Connection, terms: Sequence[QueryTerm], strict: bool,
            k: int, hide: frozenset[int] = frozenset(), digits: int | None = None
            ) -> tuple[Ranked, int, int]:
        """The best ``k`` records outside ``hide``, how many match outside it and inside it
        (``digits``: see :meth:`.ranker.Ranker.top`)."""
        scores = self.scores(conn, terms, strict)
        hidden = 0
        if hide:
            kept = {rowid: s for rowid, s in scores.items() if rowid not in hide}
            hidden, scores = len(scores) - len(kept), kept
        return best(scores, k, digits), len(scores), hidden

    def scores(self, conn: sqlite3.Connection, terms: Sequence[QueryTerm],
               strict: bool) -> dict[int, float]:
        """Score of every matching record."""
        key = (tuple((t.column, t.tokens) for t in terms), strict, id(conn))
        last = getattr(self._last, "value", None)
        if last is not None and last[0] == key:
            return dict(last[1])
        scores = self._scores(conn, terms, strict)
        self._last.value = (key, scores)
        return dict(scores)

    def _scores(self, conn: sqlite3.Connection, terms: Sequence[QueryTerm],
                strict: bool) -> dict[int, float]:
        freqs = [self._instances(conn, term) for term in terms]
        keys = (set.intersection(*map(set, freqs)) if strict
                else set().union(*freqs))
        idfs = []
        for f in freqs:
            idf = math.log((self._rows - len(f) + 0.5) / (len(f) + 0.5))
            idfs.append(idf if idf > 0.0 else 1e-6)
        scores: dict[int, float] = {}
        for rowid in keys:
            norm_len = K1 * (1 - B + B * self._lengths[rowid] / self._avgdl)
            score = 0.0
            for idf, f in zip(idfs, freqs, strict=True):
                tf = f.get(rowid, 0)
                score += idf * ((tf * (K1 + 1.0)) / (tf + norm_len))
            scores[rowid] = score
        return scores


def stored_lookup() -> Callable[[sqlite3.Connection, str, str], Postings]:
    @functools.lru_cache(maxsize=4096)
    def decoded(blob: bytes) -> Postings:
        return decode_postings(blob)

    empty: Postings = {}

    def lookup(conn: sqlite3.Connection, col: str, token: str) -> Postings:
        row = conn.execute("SELECT data FROM postings WHERE col = ? AND token = ?",
                           (col, token)).fetchone()
        return decoded(row[0]) if row else empty

    return lookup
