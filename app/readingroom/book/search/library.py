"""Searching the whole library at once: one ranked list over every allowed book.

The ranking is each book's own (:mod:`.index`), over the library index of
:mod:`.library_index` instead of one book's: BM25 over the records' text and heading path
(heading weighted 3, as in FTS5's ``bm25()`` that the books use), with the *library's*
statistics — the number of records, their average length and each term's document frequency
over every book searched — so a word common in one book and rare in the library weighs what
it weighs in the library, and the scores of two books compare. Then the same second pass as
in a book (:func:`.proximity.rerank`: phrase, proximity and heading boosts on the best
:data:`~.proximity.POOL`), scores rounded to :data:`~.proximity.SCORE_DIGITS` decimals, ties
in book-id order and then reading order, contents pages left out unless asked.

Scoring runs in numpy over the postings of the query's tokens (a few rows per token, one per
index segment), so a query costs the same whatever the number of books; a phrase (quoted
words, a CJK run, "match-box") is matched on the tokens' positions, segment by segment.

Books are searched only at the version the registry publishes now: a book being built, one
whose current version the library index does not hold yet (``stale``), one whose index could
not be read (``unreadable``) and a damaged one are *skipped*, each named with the reason in
every answer, never silently missing. A hit's book is checked (its files' sizes) before it is
shown; a book found damaged then is skipped from then on.
"""

from __future__ import annotations

import contextlib
import json
import math
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from ...core.errors import Code, CoreError
from ..package import BookPackage
from ..text import normalise
from .bm25 import FIELD_WEIGHTS, K1, B  # the BM25 both book engines use
from .fts5 import TERM_COLUMNS
from .index import MAX_QUERY_CHARS, QueryParts, query_fold_names, unpack_runs
from .library_index import (
    COLUMNS,
    FLAG_CONTENTS,
    FLAG_FIRST,
    FORMAT,
    LOCAL_BITS,
    SEP,
    BookState,
    IndexedBook,
    LibraryIndex,
)
from .proximity import SCORE_DIGITS, TokenCodes, pool_size, rerank
from .reference import book_reference, matches_label
from .results import Term
from .snippet import SNIPPET_CHARS, has_hidden, make_snippet
from .tokenize import QueryTerm, parse_query

__all__ = [
    "ENGINE_LIBRARY",
    "MAX_LIBRARY_TOP_K",
    "BookRef",
    "LibraryHit",
    "LibraryResult",
    "LibrarySearcher",
    "Selection",
    "SkipReason",
    "SkippedBook",
]

ENGINE_LIBRARY = "library-bm25"
"""The name of this ranking in results."""
MAX_LIBRARY_TOP_K = 50
SkipReason = Literal["building", "stale", "unreadable", "damaged", "not_registered"]
_MASK = (1 << LOCAL_BITS) - 1
_POS_BITS = 21
_CODE_RECORDS = 20_000  # records encoded before the token codes start afresh (bounded memory)
_MAX_TITLE = 200
_MAX_AUTHORS = 20
_MAX_AUTHOR = 200


@dataclass(frozen=True)
class Selection:
    """Which books a library search covers: all allowed ones, narrowed by any of these."""

    book_ids: tuple[str, ...] | None = None
    collection: str | None = None
    tag: str | None = None

    def describe(self) -> dict[str, Any]:
        """The selection as an answer shows it."""
        out: dict[str, Any] = {}
        if self.book_ids is not None:
            out["book_ids"] = list(self.book_ids)
        if self.collection is not None:
            out["collection"] = self.collection
        if self.tag is not None:
            out["tag"] = self.tag
        return out or {"books": "every allowed book"}


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SkippedBook(_Model):
    """A book of the selection that was not searched, and why."""

    book_id: str
    reason: SkipReason = Field(description="building: a version is being built (search again "
                               "when it is done); stale: its current version is not in the "
                               "library index yet (it is being indexed); unreadable: its "
                               "search index cannot be read (rebuild it); damaged: a file of "
                               "its package is missing or changed; not_registered: no such "
                               "book.")
    message: str
    version: int | None = Field(None, description="Its published version, when it has one.")


class BookRef(_Model):
    """The book a hit belongs to."""

    title: str
    authors: list[str]
    year: int | None = None


class LibraryHit(_Model):
    """One ranked record of some book."""

    book_id: str = Field(description="Pass it with record_id to book_read_entry or "
                         "book_locate_source.")
    version: int = Field(description="The package version searched.")
    book: BookRef
    record_id: str
    order: int
    score: float = Field(description="BM25 with the library's statistics, times the phrase, "
                         "proximity and heading boosts, rounded: comparable across the books "
                         "of this answer; equal scores rank by book id, then reading order.")
    heading_path: list[str]
    unit_start: int
    unit_end: int
    page_labels: list[str]
    snippet: str = Field(description=f"About {SNIPPET_CHARS} characters of raw text, matches "
                         "marked «like this».")
    matched_terms: list[str]
    folds: list[str] = Field(default_factory=list)
    matched_by: list[str] = Field(default_factory=lambda: ["lexical"])
    ranks: dict[str, int] = Field(default_factory=dict)
    scores: dict[str, float] = Field(default_factory=dict)


class LibraryResult(_Model):
    """A ranked lexical search over the records of several books."""

    query: str
    normalized_query: str
    terms: list[Term]
    strict: bool
    top_k: int
    selection: dict[str, Any]
    ranking: str
    books_selected: int = Field(description="Books the selection names (searched + skipped).")
    books_searched: int
    books_skipped: list[SkippedBook]
    records_searched: int
    units_without_text: int = Field(0, description="Pages (units) of the searched books "
                                    "without a text layer: their text cannot be searched.")
    total_matches: int
    contents_left_out: int = 0
    folds: list[str] = Field(default_factory=list)
    hits: list[LibraryHit]


# --------------------------------------------------------------------------- snapshot


@dataclass(frozen=True)
class _BookArrays:
    key: int
    version: int
    lengths: np.ndarray
    flags: np.ndarray


@dataclass(frozen=True)
class _Snapshot:
    generation: str
    next_key: int
    books: dict[str, IndexedBook]
    segments: tuple[int, ...]


class _Layout:
    """The searched books' records as one dense array space, in book-id then reading order."""

    def __init__(self, books: Sequence[tuple[str, _BookArrays]], next_key: int) -> None:
        self.book_ids = [b for b, _ in books]
        self.arrays = [a for _, a in books]
        counts = np.array([len(a.lengths) for a in self.arrays], dtype=np.int64)
        self.counts = counts
        self.starts = np.concatenate(([0], np.cumsum(counts)[:-1])) if len(counts) else counts
        self.n = int(counts.sum())
        self.base = np.full(next_key + 1, -1, dtype=np.int64)
        for start, a in zip(self.starts, self.arrays, strict=True):
            self.base[a.key] = start
        self.keys = np.array([a.key for a in self.arrays], dtype=np.int64)
        lengths = (np.concatenate([a.lengths for a in self.arrays]).astype(np.float64)
                   if self.n else np.zeros(0))
        self.flags = (np.concatenate([a.flags for a in self.arrays]) if self.n
                      else np.zeros(0, dtype=np.uint8))
        self.book_of = np.repeat(np.arange(len(self.arrays)), counts)
        avgdl = float(lengths.mean()) if self.n else 0.0
        self.k = K1 * (1.0 - B + B * lengths / avgdl) if avgdl else lengths

    def dense(self, ids: np.ndarray) -> np.ndarray:
        """Dense places of record ids (``key << 20 | place``); -1 for books not searched."""
        base = self.base[ids >> LOCAL_BITS]
        return np.where(base >= 0, base + (ids & _MASK), -1)

    def record_id(self, dense: int) -> int:
        """The library record id of a dense place."""
        book = int(self.book_of[dense])
        return (int(self.keys[book]) << LOCAL_BITS) + dense - int(self.starts[book])


# --------------------------------------------------------------------------- the searcher


class LibrarySearcher:
    """Library-wide search over one :class:`~.library_index.LibraryIndex`; thread-safe."""

    recheck_s = 2.0
    """A book whose files were found intact is checked again after this long."""

    def __init__(self, index: LibraryIndex) -> None:
        self.index = index
        self._idle: list[sqlite3.Connection] = []
        self._file_id: int | None = None
        self._lock = threading.Lock()
        self._snapshot: _Snapshot | None = None
        self._arrays: dict[int, _BookArrays] = {}
        self._layout: tuple[tuple[int, ...], _Layout] | None = None
        self._refs: dict[tuple[str, int], tuple[dict[str, Any], dict[str, Any] | None]] = {}
        self._damaged: dict[tuple[str, int], str] = {}
        self._checked: dict[tuple[str, int], float] = {}
        self._codes = TokenCodes()
        self._encoded: OrderedDict[int, bytes] = OrderedDict()
        self._encodings = 0
        self._closed = False

    # ------------------------------------------------------------------ connections
    @contextlib.contextmanager
    def _snapshot_conn(self) -> Iterator[sqlite3.Connection | None]:
        """A connection inside a read transaction (one snapshot), or None with no index."""
        try:
            file_id = self.index.path.stat().st_ino
        except OSError:
            yield None
            return
        with self._lock:
            if self._closed:
                raise CoreError(Code.INTERNAL_ERROR, "The library search was closed.")
            if file_id != self._file_id:
                # The file was rebuilt (it was unreadable or of another format): connections
                # to the old one would go on reading it, and its generations start again.
                stale, self._idle = self._idle, []
                self._file_id, self._snapshot, self._layout = file_id, None, None
                self._arrays = {}  # keys start again in a new file
            else:
                stale = []
            conn = self._idle.pop() if self._idle else None
        for old in stale:
            old.close()
        if conn is None:
            conn = self.index.connect()
        conn.execute("BEGIN")
        try:
            yield conn
        finally:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("COMMIT")
            with self._lock:
                keep = not self._closed and len(self._idle) < 8 and file_id == self._file_id
                if keep:
                    self._idle.append(conn)
            if not keep:
                conn.close()

    def close(self) -> None:
        """Close the connections."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()

    def _current(self, conn: sqlite3.Connection | None) -> _Snapshot | None:
        """What the index holds in this transaction's snapshot (read again when it changed)."""
        if conn is None:
            return None
        try:
            meta = dict(conn.execute("SELECT key, value FROM meta"))
        except sqlite3.DatabaseError:
            return None
        if meta.get("format") != FORMAT:
            return None
        with self._lock:
            if self._snapshot is not None and self._snapshot.generation == meta["generation"]:
                return self._snapshot
        books = LibraryIndex.indexed(conn)
        segments = tuple(s for (s,) in conn.execute("SELECT seg FROM segments ORDER BY seg"))
        live = {b.key for b in books.values() if b.key is not None}
        missing = [k for k in live if k not in self._arrays]
        fresh: dict[int, _BookArrays] = {}
        for at in range(0, len(missing), 500):
            part = missing[at:at + 500]
            for key, version, lengths, flags in conn.execute(
                    f"SELECT key, version, lengths, flags FROM books WHERE key IN "
                    f"({','.join('?' * len(part))})", part):
                fresh[key] = _BookArrays(key, version, np.frombuffer(lengths, "<f4"),
                                         np.frombuffer(flags, np.uint8))
        snap = _Snapshot(meta["generation"], int(meta["next_key"]), books, segments)
        with self._lock:
            self._arrays = {k: a for k, a in {**self._arrays, **fresh}.items() if k in live}
            self._snapshot = snap
        return snap

    def _layout_for(self, books: Sequence[tuple[str, int]], next_key: int) -> _Layout:
        keys = (next_key, *(k for _b, k in books))
        with self._lock:
            if self._layout is not None and self._layout[0] == keys:
                return self._layout[1]
            arrays = [(b, self._arrays[k]) for b, k in books]
        layout = _Layout(arrays, next_key)
        with self._lock:
            self._layout = (keys, layout)
        return layout

    # ------------------------------------------------------------------ references
    def reference(self, book_id: str, version: int) -> dict[str, Any]:
        """:func:`.reference.book_reference` of a book's version (read once)."""
        return self._manifest(book_id, version)[0]

    def manifest(self, book_id: str, version: int) -> dict[str, Any] | None:
        """The manifest of a book's version (read once; None when it cannot be read)."""
        return self._manifest(book_id, version)[1]

    def _manifest(self, book_id: str, version: int
                  ) -> tuple[dict[str, Any], dict[str, Any] | None]:
        key = (book_id, version)
        with self._lock:
            found = self._refs.get(key)
        if found is not None:
            return found
        pkg = self._package(book_id, version)
        try:
            manifest: dict[str, Any] | None = pkg.manifest
        except CoreError:
            manifest = None
        ref = book_reference(manifest or {"title": ""})
        with self._lock:
            for old in [k for k in self._refs if k[0] == book_id]:
                del self._refs[old]
            self._refs[key] = (ref, manifest)
        return ref, manifest

    def _package(self, book_id: str, version: int) -> BookPackage:
        reg = self.index.registry
        return BookPackage(book_id, version, reg.books_dir / book_id / f"v{version}")

    # ------------------------------------------------------------------ search
    def search(self, query: str, *, top_k: int = 10, strict: bool = False,
               include_contents: bool = False, selection: Selection | None = None,
               allowed: frozenset[str] | None = None,
               states: Mapping[str, BookState] | None = None) -> LibraryResult:
        """Rank the records of every selected book for ``query``.

        Args:
            query: as for a book's search (words, CJK runs, quoted phrases).
            top_k: hits to return (1..50).
            strict: every term must occur in the record.
            include_contents: rank contents pages and navigation too.
            selection: the books to search (default all).
            allowed: the books this caller may see (default all registered).
            states: the registry's books (default: scanned now).

        Raises:
            CoreError: INVALID_ARGUMENT for an empty, too long or unsearchable query, or a
                ``top_k`` out of range.
        """
        terms = _check_query(query, top_k)
        selection = selection or Selection()
        for _attempt in range(4):
            result = self._search(query, terms, top_k, strict, include_contents, selection,
                                  allowed, states)
            if result is not None:
                return result
        raise CoreError(Code.BOOK_DAMAGED, "Books of the library kept turning out damaged "
                        "during this search.", remediation="Run book-agent status.")

    def _search(self, query: str, terms: list[QueryTerm], top_k: int, strict: bool,
                include_contents: bool, selection: Selection, allowed: frozenset[str] | None,
                states: Mapping[str, BookState] | None) -> LibraryResult | None:
        if states is None:
            states = self.index.scanner.scan()
        with self._snapshot_conn() as conn:
            snap = self._current(conn)
            searched, skipped, selected = self._plan(states, snap, selection, allowed)
            hits: list[LibraryHit] = []
            total = left_out = records = blind = 0
            if searched and snap is not None and conn is not None:
                layout = self._layout_for(searched, snap.next_key)
                records = layout.n
                blind = sum(snap.books[b].blind for b, _k in searched)
                top, total, left_out = self._rank(conn, snap, layout, terms, top_k, strict,
                                                  include_contents)
                hits = self._hits(conn, layout, top, terms, QueryParts(query))
                # A hit is never shown from a damaged book: check its files as a load does.
                damaged = self._check_books({(h.book_id, h.version) for h in hits})
                if damaged:
                    return None
        return LibraryResult(
            query=query, normalized_query=normalise(query),
            terms=[Term(text=t.text, kind=t.kind) for t in terms], strict=strict, top_k=top_k,
            selection=selection.describe(),
            ranking=(f"one library-wide BM25 over the {records:,} records of the "
                     f"{len(searched)} books searched (their statistics, not each book's), "
                     "then the phrase, proximity and heading rerank a book's search uses; "
                     "scores compare across books within this answer"),
            books_selected=selected, books_searched=len(searched), books_skipped=skipped,
            records_searched=records, units_without_text=blind, total_matches=total,
            contents_left_out=left_out,
            folds=query_fold_names(query), hits=hits)

    def _plan(self, states: Mapping[str, BookState], snap: _Snapshot | None,
              selection: Selection, allowed: frozenset[str] | None
              ) -> tuple[list[tuple[str, int]], list[SkippedBook], int]:
        """The books to search (id, key), those skipped with the reason, and how many the
        selection names."""
        wanted = set(selection.book_ids) if selection.book_ids is not None else None
        searched: list[tuple[str, int]] = []
        skipped: list[SkippedBook] = []
        for book_id in sorted(wanted or ()):
            if book_id not in states or (allowed is not None and book_id not in allowed):
                skipped.append(SkippedBook(book_id=book_id, reason="not_registered",
                                           message="No registered book has this id."))
        for book_id, state in sorted(states.items()):
            if allowed is not None and book_id not in allowed:
                continue
            if wanted is not None and book_id not in wanted:
                continue
            if (selection.collection or selection.tag) and state.version is not None and \
                    not self._in_selection(book_id, state.version, selection):
                continue
            why = self._skip(state, snap)
            if why is not None:
                skipped.append(why)
                continue
            assert snap is not None and state.version is not None
            key = snap.books[book_id].key
            assert key is not None
            searched.append((book_id, key))
        return searched, skipped, len(searched) + len(skipped)

    def _in_selection(self, book_id: str, version: int, selection: Selection) -> bool:
        ref = self.reference(book_id, version)
        if selection.collection and not matches_label(ref, "collections", selection.collection):
            return False
        return not (selection.tag and not matches_label(ref, "tags", selection.tag))

    def _skip(self, state: BookState, snap: _Snapshot | None) -> SkippedBook | None:
        book_id, version = state.book_id, state.version
        if state.building:
            return SkippedBook(
                book_id=book_id, reason="building", version=version,
                message=("A new version is being built (init --replace or add); the book is "
                         f"not searched until it is published (version {version} is about to "
                         "be replaced, so its locators would go stale)." if version is not None
                         else "Its first version is being built; search again when it is "
                         "done."))
        if version is None:
            problem = state.damage.file + " " + state.damage.problem if state.damage else ""
            return SkippedBook(book_id=book_id, reason="damaged", version=None,
                               message=f"It has no usable version: {problem}. Rebuild it "
                               "with book-agent init SOURCE --id ID --replace.")
        gone = self._damaged.get((book_id, version))
        if gone is not None:
            return SkippedBook(book_id=book_id, reason="damaged", version=version,
                               message=gone)
        have = snap.books.get(book_id) if snap is not None else None
        if have is None or have.version != version:
            return SkippedBook(
                book_id=book_id, reason="stale", version=version,
                message=(f"Version {version} is not in the library index yet (it holds "
                         f"version {have.version}); it is being indexed." if have is not None
                         else f"Version {version} is not in the library index yet; it is "
                         "being indexed."))
        if have.state != "ok":
            return SkippedBook(
                book_id=book_id, reason="damaged" if have.state == "damaged" else "unreadable",
                version=version,
                message=f"It could not be indexed: {have.problem}. Rebuild it with book-agent "
                "init SOURCE --id ID --replace.")
        if have.key is None:
            return SkippedBook(book_id=book_id, reason="stale", version=version,
                               message="It is being indexed.")
        return None

    def _check_books(self, books: set[tuple[str, int]]) -> bool:
        """Check the files of these books' versions (sizes, as loading a book does; again
        after :attr:`recheck_s`); True when one was found damaged."""
        found = False
        now = time.monotonic()
        for book_id, version in sorted(books):
            with self._lock:
                if now - self._checked.get((book_id, version), -math.inf) < self.recheck_s:
                    continue
            _ref, manifest = self._manifest(book_id, version)
            pkg = self._package(book_id, version)
            damage: str | None = None
            if manifest is None:
                damage = "manifest.json cannot be read"
            else:
                problems = pkg.check(manifest=manifest)
                damage = f"{problems[0].file} {problems[0].problem}" if problems else None
            with self._lock:
                if damage:
                    self._damaged[(book_id, version)] = (
                        f"Its package is damaged: {damage}. Rebuild it with book-agent init "
                        "SOURCE --id ID --replace.")
                    found = True
                else:
                    self._checked[(book_id, version)] = now
        return found

    # ------------------------------------------------------------------ ranking
    def _rank(self, conn: sqlite3.Connection, snap: _Snapshot, layout: _Layout,
              terms: Sequence[QueryTerm], top_k: int, strict: bool, include_contents: bool
              ) -> tuple[list[tuple[float, int]], int, int]:
        """The best ``top_k`` (``(-score, dense place)``), how many match, how many contents
        records matching were left out."""
        n = layout.n
        scores = np.zeros(n)
        count = np.zeros(n, dtype=np.int32)
        for term in terms:
            weights = self._weights(conn, snap.segments, layout, term)
            if weights is None:
                continue
            matched = np.flatnonzero(weights)
            df = len(matched)
            idf = math.log((n - df + 0.5) / (df + 0.5))
            idf = idf if idf > 0.0 else 1e-6
            w = weights[matched]
            scores[matched] += idf * (w * (K1 + 1.0)) / (w + layout.k[matched])
            count[matched] += 1
        ok = count == len(terms) if strict else count > 0
        contents = (layout.flags & FLAG_CONTENTS) != 0
        left_out = 0
        if not include_contents:
            left_out = int(np.count_nonzero(ok & contents))
            ok &= ~contents
        cand = np.flatnonzero(ok)
        total = len(cand)
        pool_k = pool_size(terms, top_k)
        rounded = np.round(scores[cand], SCORE_DIGITS)
        if total > pool_k:
            kth = np.partition(rounded, total - pool_k)[total - pool_k]
            better = np.flatnonzero(rounded > kth)
            tied = np.flatnonzero(rounded == kth)[:pool_k - len(better)]
            chosen = np.concatenate((better, tied))
        else:
            chosen = np.arange(total)
        order = np.lexsort((cand[chosen], -rounded[chosen]))
        pool = [(-float(scores[i]), int(i)) for i in cand[chosen][order]]
        if not pool:
            return [], total, left_out
        heads = self._heads(conn, layout, [i for _s, i in pool])
        in_heading: dict[int, int] = {}
        for dense, own in heads.items():
            have = sum(1 for t in terms if all(tok in own for tok in t.tokens))
            if have:
                in_heading[dense] = have
        flags = layout.flags
        with self._lock:
            if self._encodings > _CODE_RECORDS:  # bounded memory: start the codes afresh
                self._codes, self._encoded, self._encodings = TokenCodes(), OrderedDict(), 0
            codes = self._codes
        ranked = rerank(pool, terms, lambda ids: self._body_codes(conn, layout, ids, codes),
                        codes, in_heading, lambda i: bool(flags[i] & FLAG_FIRST))
        return ranked[:top_k], total, left_out

    def _weights(self, conn: sqlite3.Connection, segments: tuple[int, ...], layout: _Layout,
                 term: QueryTerm) -> np.ndarray | None:
        """Per dense record, the term's frequency weighted over its columns (FTS5's
        ``bm25()`` sums the column weights of every hit); None when nowhere."""
        out: np.ndarray | None = None
        for column in TERM_COLUMNS[term.column]:
            col, weight = COLUMNS[column], FIELD_WEIGHTS[column]
            if len(term.tokens) == 1:
                dense, tf = self._postings(conn, segments, layout, col, term.tokens[0])
            else:
                dense, tf = self._phrase(conn, segments, layout, col, term.tokens)
            if len(dense):
                if out is None:
                    out = np.zeros(layout.n)
                out[dense] += weight * tf
        return out

    @staticmethod
    def _postings(conn: sqlite3.Connection, segments: tuple[int, ...], layout: _Layout,
                  col: int, token: str) -> tuple[np.ndarray, np.ndarray]:
        rows = conn.execute(
            f"SELECT docs, tfs FROM postings WHERE seg IN ({','.join('?' * len(segments))}) "
            "AND col = ? AND token = ?", (*segments, col, token)).fetchall()
        if not rows:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        ids = np.frombuffer(b"".join(r[0] for r in rows), "<i8")
        tfs = np.frombuffer(b"".join(r[1] for r in rows), "<u2")
        dense = layout.dense(ids)
        keep = dense >= 0
        return dense[keep], tfs[keep].astype(np.float64)

    @staticmethod
    def _phrase(conn: sqlite3.Connection, segments: tuple[int, ...], layout: _Layout,
                col: int, tokens: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Records where ``tokens`` stand adjacent and in order, and how often."""
        marks = ",".join("?" * len(segments))
        by_seg: dict[int, list[np.ndarray | None]] = {}
        for i, token in enumerate(tokens):
            for seg, docs, tfs, pos in conn.execute(
                    f"SELECT seg, docs, tfs, pos FROM postings WHERE seg IN ({marks}) AND "
                    "col = ? AND token = ?", (*segments, col, token)):
                keys = by_seg.setdefault(seg, [None] * len(tokens))
                ids = np.repeat(np.frombuffer(docs, "<i8"), np.frombuffer(tfs, "<u2"))
                keys[i] = (ids << _POS_BITS) | np.frombuffer(pos, "<u4").astype(np.int64)
        found = []
        for keys in by_seg.values():
            if any(k is None for k in keys):
                continue
            starts = keys[0]
            assert starts is not None
            for i, following in enumerate(keys[1:], start=1):
                assert following is not None
                want = starts + i
                at = np.searchsorted(following, want)
                at[at >= len(following)] = 0
                starts = starts[following[at] == want] if len(following) else starts[:0]
                if not len(starts):
                    break
            if len(starts):
                found.append(starts >> _POS_BITS)
        if not found:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        ids, tf = np.unique(np.concatenate(found), return_counts=True)
        dense = layout.dense(ids)
        keep = dense >= 0
        return dense[keep], tf[keep].astype(np.float64)

    @staticmethod
    def _heads(conn: sqlite3.Connection, layout: _Layout,
               dense: Sequence[int]) -> dict[int, frozenset[str]]:
        """Tokens (and CJK characters) of each record's own, deepest heading."""
        ids = {layout.record_id(d): d for d in dense}
        return {ids[rid]: frozenset(own.split(SEP)) if own else frozenset()
                for rid, own in _rows(conn, "own_head", list(ids))}

    def _body_codes(self, conn: sqlite3.Connection, layout: _Layout, dense: list[int],
                    codes: TokenCodes) -> dict[int, bytes]:
        """The packed body token codes of these records (cached with their codes)."""
        ids = {layout.record_id(d): d for d in dense}
        with self._lock:
            cache = self._encoded if codes is self._codes else {}
            out = {ids[r]: cache[r] for r in ids if r in cache}
        missing = [r for r in ids if ids[r] not in out]
        made = {rid: codes.encode(stream.split(SEP) if stream else [])
                for rid, stream in _rows(conn, "stream", missing)} if missing else {}
        with self._lock:
            if codes is self._codes:
                self._encoded.update(made)
                self._encodings += len(made)
                while len(self._encoded) > 4096:
                    self._encoded.popitem(last=False)
        out.update((ids[r], b) for r, b in made.items())
        return out

    def _hits(self, conn: sqlite3.Connection, layout: _Layout, top: list[tuple[float, int]],
              terms: Sequence[QueryTerm], parts: QueryParts) -> list[LibraryHit]:
        if not top:
            return []
        rid_of = {d: layout.record_id(d) for _s, d in top}
        marks = ",".join("?" * len(rid_of))
        rows = {r[0]: r for r in conn.execute(
            "SELECT id, record_id, ord, heading_path, unit_start, unit_end, page_labels, text, "
            f"norm, offmap FROM records WHERE id IN ({marks})", list(rid_of.values()))}
        hits = []
        for place, (neg, dense) in enumerate(top, start=1):
            (_id, record_id, order, heading_path, unit_start, unit_end, labels, text, norm,
             offmap) = rows[rid_of[dense]]
            book = int(layout.book_of[dense])
            book_id, version = layout.book_ids[book], layout.arrays[book].version
            raw: list[tuple[QueryTerm, str]] = []
            snippet, matched = make_snippet(text, norm, unpack_runs(offmap), terms,
                                            hidden=has_hidden(text), raw_matches=raw)
            ref = self.reference(book_id, version)
            score = 0.0 - neg
            hits.append(LibraryHit(
                book_id=book_id, version=version, book=_shown(ref), record_id=record_id,
                order=order, score=score, heading_path=json.loads(heading_path),
                unit_start=unit_start, unit_end=unit_end, page_labels=json.loads(labels),
                snippet=snippet, matched_terms=matched, folds=parts.folds(raw),
                ranks={"lexical": place}, scores={"lexical": score}))
        return hits


def _rows(conn: sqlite3.Connection, column: str, ids: list[int]) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    for at in range(0, len(ids), 500):
        part = ids[at:at + 500]
        out += conn.execute(f"SELECT id, {column} FROM records WHERE id IN "
                            f"({','.join('?' * len(part))})", part).fetchall()
    return out


def _shown(ref: Mapping[str, Any]) -> BookRef:
    title = str(ref.get("title") or "")
    authors = [str(a) for a in ref.get("authors") or []]
    cut = [a if len(a) <= _MAX_AUTHOR else a[:_MAX_AUTHOR - 1] + "…"
           for a in authors[:_MAX_AUTHORS]]
    if len(authors) > _MAX_AUTHORS:
        cut.append(f"… and {len(authors) - _MAX_AUTHORS} more")
    return BookRef(title=title if len(title) <= _MAX_TITLE else title[:_MAX_TITLE - 1] + "…",
                   authors=cut, year=ref.get("year"))


def _check_query(query: str, top_k: int) -> list[QueryTerm]:
    if not isinstance(query, str) or not query.strip():
        raise CoreError(Code.INVALID_ARGUMENT, "The query is empty.", details={"field": "query"},
                        remediation="Pass one or more words to search for.")
    if len(query) > MAX_QUERY_CHARS:
        raise CoreError(Code.INVALID_ARGUMENT, "The query is too long.",
                        details={"field": "query", "max_chars": MAX_QUERY_CHARS,
                                 "chars": len(query)})
    if isinstance(top_k, bool) or not isinstance(top_k, int) or not (
            1 <= top_k <= MAX_LIBRARY_TOP_K):
        raise CoreError(Code.INVALID_ARGUMENT, f"top_k must be between 1 and "
                        f"{MAX_LIBRARY_TOP_K}.", details={"field": "top_k"},
                        remediation="Omit it for 10.")
    terms = parse_query(query)
    if not terms:
        raise CoreError(Code.INVALID_ARGUMENT,
                        "The query has no searchable words (only punctuation or symbols).",
                        details={"field": "query", "reason": "no_tokens"},
                        remediation="Search for words or CJK characters.")
    return terms

