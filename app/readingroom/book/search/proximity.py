"""The second ranking pass both engines share: phrase, proximity and heading boosts on a pool.

BM25 (:mod:`.fts5`, :mod:`.bm25`) scores terms independently. This pass takes its best
:data:`POOL` records and multiplies each score by ``1 + boost``, where the boost adds

- :data:`PHRASE_BOOST` × the share of consecutive query terms that stand adjacent and in
  order somewhere in the record's text (an unquoted opening line typed whole gets all of it);
- :data:`NEAR_BOOST` × the share of the other consecutive pairs found within
  :data:`NEAR_WINDOW` tokens of each other, in either order;
- :data:`HEADING_BOOST` × the share of the query's terms in the record's own heading, and
  :data:`FIRST_BOOST` more for the first record under that heading when it has them all (a
  chapter title finds where the chapter starts).

Each boost also adds :data:`FLOOR` × itself, so where BM25 cannot tell records apart (in a
small book most words are in half its records, and FTS5's ``bm25()`` then gives them an IDF of
almost zero) the phrase and the heading still can. Scores are then rounded to
:data:`SCORE_DIGITS` decimals and equal scores ranked in reading
order, so two engines or two runs never order ties differently. The boost only raises scores,
so a record outside the pool never outranks one inside it (up to the rounding).
"""

from __future__ import annotations

import bisect
import threading
from array import array
from collections.abc import Callable, Sequence

from .ranker import Ranked
from .tokenize import QueryTerm

__all__ = [
    "FIRST_BOOST",
    "FLOOR",
    "HEADING_BOOST",
    "NEAR_BOOST",
    "NEAR_WINDOW",
    "PHRASE_BOOST",
    "POOL",
    "SCORE_DIGITS",
    "SMALL_POOL",
    "TokenCodes",
    "pool_size",
    "rerank",
    "term_starts",
]

POOL = 50
"""How many of the best BM25 records the pass reorders for a query of several words."""
SMALL_POOL = 15
"""How many it reorders for a query of one word or phrase (see :func:`pool_size`)."""
PHRASE_BOOST = 1.0
NEAR_BOOST = 0.3
NEAR_WINDOW = 4
HEADING_BOOST = 1.0
FIRST_BOOST = 0.5
FLOOR = 0.01
"""Score each unit of boost is worth on its own, whatever the BM25 score."""
SCORE_DIGITS = 4
"""Scores are rounded to this many decimals; equal ones rank in reading order."""


class TokenCodes:
    """Token → small integer, shared by the records of one index, so a record's tokens become
    one ``bytes`` of 4-byte codes and a term or a pair of terms is found in it by
    ``bytes.find`` (C speed, no Python step per token). Thread-safe; grows as records are
    encoded."""

    def __init__(self) -> None:
        self._ids: dict[str, int] = {}
        self._lock = threading.Lock()

    def encode(self, tokens: list[str]) -> bytes:
        """The codes of ``tokens``, packed."""
        ids = self._ids
        with self._lock:
            for tok in set(tokens).difference(ids):
                ids[tok] = len(ids)
        return array("I", map(ids.__getitem__, tokens)).tobytes()

    def pack(self, tokens: Sequence[str]) -> bytes | None:
        """The packed codes of a term's tokens; None when a token is in no encoded record."""
        ids = self._ids
        try:
            return array("I", [ids[t] for t in tokens]).tobytes()
        except KeyError:
            return None


def _find(blob: bytes, pattern: bytes, start: int = 0) -> int:
    """Byte offset of ``pattern`` at a token boundary of ``blob`` at or after ``start``."""
    i = blob.find(pattern, start)
    while i & 3 and i >= 0:
        i = blob.find(pattern, i + 1)
    return i


def term_starts(blob: bytes, pattern: bytes, cap: int = 64) -> list[int]:
    """Token positions (at most ``cap``) where the packed term ``pattern`` starts."""
    out: list[int] = []
    i = _find(blob, pattern)
    while i >= 0 and len(out) < cap:
        out.append(i >> 2)
        i = _find(blob, pattern, i + 4)
    return out


def _near(a: list[int], b: list[int], window: int) -> bool:
    for p in a:
        j = bisect.bisect_left(b, p - window)
        if j < len(b) and b[j] <= p + window:
            return True
    return False


def _adjacency(blob: bytes, packs: list[bytes | None]) -> float:
    pairs = len(packs) - 1
    adjacent = near = 0
    # One scan per term first: in an OR query most pool records lack most pairs.
    has = [p is not None and _find(blob, p) >= 0 for p in packs]
    for i in range(pairs):
        if not (has[i] and has[i + 1]):
            continue
        a, b = packs[i], packs[i + 1]
        assert a is not None and b is not None
        if _find(blob, a + b) >= 0:
            adjacent += 1
            continue
        starts_a = term_starts(blob, a)
        if starts_a:
            starts_b = term_starts(blob, b)
            if starts_b and _near(starts_a, starts_b, NEAR_WINDOW):
                near += 1
    return (PHRASE_BOOST * adjacent + NEAR_BOOST * near) / pairs


def pool_size(terms: Sequence[QueryTerm], top_k: int) -> int:
    """How many BM25 records to rerank: :data:`POOL` when the query has terms that can stand
    adjacent; else (only heading boosts can apply, and a heading is already weighted in BM25)
    :data:`SMALL_POOL`."""
    positional = sum(1 for t in terms if t.column == "body")
    return max(POOL if positional > 1 else SMALL_POOL, top_k)


def rerank(pool: Ranked, terms: Sequence[QueryTerm],
           encoded: Callable[[list[int]], dict[int, bytes]], codes: TokenCodes,
           in_heading: dict[int, int], first: Callable[[int], bool]) -> Ranked:
    """``pool`` (``(-score, rowid)``, best first) boosted and reordered, ties in reading order.

    Args:
        pool: the best BM25 records.
        terms: the query's terms.
        encoded: the body tokens of some rowids, packed by ``codes`` (called once, only for
            a query of several terms that can be adjacent).
        codes: the index's token codes.
        in_heading: rowid → how many of the query's terms its own heading has (rowids
            without any may be missing).
        first: whether a rowid is the first record under its heading path.
    """
    positional = [t for t in terms if t.column == "body"]
    texts = encoded([rowid for _, rowid in pool]) if len(positional) > 1 else {}
    packs = [codes.pack(t.tokens) for t in positional] if texts else []
    if not texts and not in_heading:
        out = [(round(neg, SCORE_DIGITS) + 0.0, rowid) for neg, rowid in pool]
        out.sort()
        return out
    n = len(terms)
    out = []
    for neg, rowid in pool:
        boost = _adjacency(texts[rowid], packs) if texts else 0.0
        have = in_heading.get(rowid)
        if have:
            boost += HEADING_BOOST * have / n
            if have == n and first(rowid):
                boost += FIRST_BOOST
        out.append((round(neg * (1.0 + boost) - FLOOR * boost, SCORE_DIGITS) + 0.0, rowid))
    out.sort()
    return out
