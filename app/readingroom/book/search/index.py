"""The book's search index: one SQLite file, built once, opened read-only by many threads.

:func:`build_index` writes the records (with their role), their normalised text (page
furniture masked first) and the tokens of :mod:`.tokenize` (text, CJK characters, heading
path) into the FTS5 backend (:mod:`.fts5`) when this SQLite has it, else into posting tables
for the Python BM25 backend (:mod:`.bm25`). :class:`BookIndex` parses a query, applies hints,
asks the backend (:class:`~.ranker.Ranker`) for a pool of the best records, reranks it
(:mod:`.proximity`: phrase, proximity and heading boosts; ties in reading order), leaves
contents pages out unless asked, and builds the hits with their snippets (:mod:`.snippet`)
and the folds that made them match. Every result names the backend that ran.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import json
import operator
import re
import sqlite3
import sys
import threading
import time
from array import array
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ...core.errors import Code, CoreError
from .. import text as _text
from ..furniture import mask_furniture
from ..model import Record, SourceUnit
from ..text import normalise, normalise_with_offsets
from .bm25 import (
    ENGINE_PYTHON,
    POSTINGS_SCHEMA,
    Bm25Ranker,
    Postings,
    build_postings,
    encode_postings,
    stored_lookup,
)
from .fts5 import ENGINE_FTS5, FTS_RANK, FTS_SCHEMA, Fts5Ranker, fts5_available
from .fusion import rrf
from .proximity import POOL, SCORE_DIGITS, TokenCodes, pool_size, rerank
from .ranker import Ranker, best
from .results import (
    HINT_BOOST,
    HintApplied,
    Hit,
    IndexStats,
    SearchModes,
    SearchResult,
    Term,
)
from .snippet import has_hidden, make_snippet
from .tokenize import (
    RUN_BREAK,
    QueryTerm,
    heading_tokens,
    index_columns,
    parse_query,
    plural_stem,
    split_runs,
    token_stream,
)

__all__ = [
    "HINT_KEYS",
    "INDEX_FORMAT",
    "MAX_QUERY_CHARS",
    "MAX_TOP_K",
    "SEMANTIC_POOL",
    "BookIndex",
    "EngineChoice",
    "QueryParts",
    "build_index",
    "index_locked",
    "query_fold_names",
    "record_page_labels",
    "unpack_runs",
]


def index_locked(exc: sqlite3.Error) -> bool:
    """True when ``exc`` says another connection holds the file's lock (SQLITE_BUSY/LOCKED).

    That is a passing state of a sound file, never damage: whoever opened it for writing
    still holds it.
    """
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        return code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
    return "locked" in str(exc) or "busy" in str(exc)


HINT_KEYS = ("heading", "chapter", "page", "pages", "label")
"""The hints :meth:`BookIndex.search` accepts."""
MAX_QUERY_CHARS = 1000
"""Longest query accepted."""
MAX_TOP_K = 100
"""Most hits one search returns."""
SEMANTIC_POOL = 100
"""Most semantic candidates fused into one hybrid search."""

EngineChoice = Literal["auto", "fts5", "python"]
"""Which lexical backend to build or open."""

INDEX_FORMAT = "3"
"""3: plain ASCII words indexed by their singular, book index role, ruby readings."""


_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE records (
    rowid INTEGER PRIMARY KEY,
    record_id TEXT NOT NULL,
    ord INTEGER NOT NULL,
    heading_path TEXT NOT NULL,
    heading_norm TEXT NOT NULL,
    unit_start INTEGER NOT NULL,
    unit_end INTEGER NOT NULL,
    unit_last INTEGER NOT NULL,
    page_labels TEXT NOT NULL,
    body_len INTEGER NOT NULL,
    chars_len INTEGER NOT NULL,  -- the chars and head columns: BM25 counts every column
    text TEXT NOT NULL,
    norm TEXT NOT NULL,
    offmap BLOB NOT NULL,
    role TEXT NOT NULL,
    readings TEXT NOT NULL  -- ruby readings, normalised, one a line: indexed after the text
);
"""


def _offset_runs(offsets: list[int]) -> bytes:
    """Run-length form of a normalised→raw offset map: ``(start, raw - norm)`` pairs, packed.

    The pairs mark where ``raw - norm`` changes; see :func:`unpack_runs`.
    """
    deltas = list(map(operator.sub, offsets, range(len(offsets))))
    starts = [0, *itertools.compress(range(1, len(deltas)),
                                      map(operator.ne, deltas[1:], deltas[:-1]))]
    arr = array("i")
    for i in starts:
        arr.append(i)
        arr.append(deltas[i])
    if sys.byteorder == "big":
        arr.byteswap()
    return arr.tobytes()


def unpack_runs(blob: bytes) -> tuple[array, array]:
    arr = array("i")
    arr.frombytes(blob)
    if sys.byteorder == "big":
        arr.byteswap()
    return arr[0::2], arr[1::2]


def record_page_labels(units: Sequence[SourceUnit],
                       records: Sequence[Record]) -> list[list[str]]:
    """The printed page labels of each record, as hits and the ``label=`` hint use them.

    PDF pages: the labels of the pages the record spans (page labels, or folios). EPUB
    chapters: the printed pages of the page list and page-break markers — the page in effect
    where the record starts (a mark at or before it, else the last mark of an earlier chapter)
    and every page that begins inside it; none when the book has no page marks. A spine idref
    or manifest id is never a page label.
    """
    out: list[list[str]] = []
    last_mark: list[str | None] = []  # the last page mark of units 0..u
    current: str | None = None
    for unit in units:
        if unit.page_marks:
            current = unit.page_marks[-1][1]
        last_mark.append(current)
    for rec in records:
        labels: list[str] = []
        for u in range(rec.unit_start, min(rec.unit_end, len(units) - 1) + 1):
            unit = units[u]
            lo = rec.char_start if u == rec.unit_start else 0
            hi = rec.char_end if u == rec.unit_end else len(unit.text)
            if unit.kind != "epub_chapter":
                if unit.label and not (u == rec.unit_end and hi == 0 and u > rec.unit_start):
                    labels.append(unit.label)
                continue
            marks = unit.page_marks
            if u == rec.unit_start:
                before = [label for off, label in marks if off <= lo]
                start = before[-1] if before else (last_mark[u - 1] if u > 0 else None)
                if start:
                    labels.append(start)
            labels += [label for off, label in marks if lo < off < hi or (
                off == lo and u != rec.unit_start)]
        out.append(list(dict.fromkeys(labels)))
    return out


def build_index(
    records: Sequence[Record],
    path: Path,
    *,
    unit_labels: Sequence[str | None] | None = None,
    record_labels: Sequence[Sequence[str]] | None = None,
    engine: EngineChoice = "auto",
) -> IndexStats:
    """Write the search index of ``records`` to the SQLite file ``path``.

    Args:
        records: the book's records in reading order.
        path: the file to write; an existing file is replaced. The caller publishes it
            atomically (build in a temporary folder, then move), so the build keeps its
            rollback journal in memory and does not sync.
        unit_labels: printed page label per unit index (PDF page labels), ``None`` where a
            unit has none; a record's labels are those of the units it spans.
        record_labels: printed page labels per record, in the order of ``records`` (see
            :func:`record_page_labels`); when given, ``unit_labels`` is not used.
        engine: ``auto`` (FTS5 when available, else Python BM25 posting tables), ``fts5``
            (CAPABILITY_UNAVAILABLE without FTS5) or ``python`` (posting tables only).

    Returns:
        What was written, including the engine the file serves.
    """
    began = time.perf_counter()
    use_fts = _choose_build_engine(engine)
    path = Path(path)
    for stale in (path, path.with_name(path.name + "-journal")):
        stale.unlink(missing_ok=True)
    labels = list(unit_labels or ())
    record_rows = []
    doc_rows = []
    streams: list[tuple[int, list[str], str, list[str]]] = []
    body_total = chars_total = head_total = 0
    fold = functools.lru_cache(maxsize=None)(normalise)  # headings repeat across records
    ordered = sorted(records, key=operator.attrgetter("order"))
    given = ({rec.record_id: list(labs) for rec, labs in zip(records, record_labels,
                                                             strict=True)}
             if record_labels is not None else None)
    for rowid, rec in enumerate(ordered, start=1):
        # Furniture is masked to the same length, so offsets still point into the raw text.
        norm, offsets = normalise_with_offsets(mask_furniture(rec.text, rec.furniture)
                                               if rec.furniture else rec.text)
        segments = split_runs(norm)
        body, chars = index_columns(segments, norm)
        readings = "\n".join(dict.fromkeys(fold(r) for _s, _e, r in rec.readings))
        if readings:
            body, chars = _with_readings(body, chars, readings)
        heading_norm = [fold(h) for h in rec.heading_path]
        head = heading_tokens(heading_norm)
        body_len, chars_len = len(body), len(chars)
        body_total += body_len
        chars_total += chars_len
        head_total += len(head)
        # A record ending at offset 0 of a unit has no text on it.
        ends_before = rec.char_end == 0 and rec.unit_end > rec.unit_start
        last = rec.unit_end - 1 if ends_before else rec.unit_end
        page_labels = (given[rec.record_id] if given is not None
                       else [lab for lab in labels[rec.unit_start:last + 1] if lab])
        record_rows.append((
            rowid, rec.record_id, rec.order,
            json.dumps(list(rec.heading_path), ensure_ascii=False),
            json.dumps(heading_norm, ensure_ascii=False),
            rec.unit_start, rec.unit_end, last,
            json.dumps(page_labels, ensure_ascii=False),
            body_len, chars_len + len(head), rec.text, norm,
            _offset_runs(offsets), rec.role, readings,
        ))
        if use_fts:
            doc_rows.append((rowid, " ".join(body), " ".join(chars), " ".join(head)))
        else:
            streams.append((rowid, body, chars, head))
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA journal_mode=MEMORY")
        conn.execute("PRAGMA synchronous=OFF")
        with conn:
            conn.executescript(_SCHEMA)
            conn.executemany(f"INSERT INTO records VALUES ({','.join('?' * 16)})", record_rows)
            name = ENGINE_FTS5 if use_fts else ENGINE_PYTHON
            meta = {"format": INDEX_FORMAT, "engine": name, "rows": str(len(record_rows)),
                    "tokens": str(body_total + chars_total + head_total)}
            conn.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())
        if use_fts:
            with conn:
                conn.execute(FTS_SCHEMA)
                conn.execute("INSERT INTO fts (fts, rank) VALUES ('rank', ?)", (FTS_RANK,))
                conn.executemany("INSERT INTO fts (rowid, body, chars, head) VALUES (?, ?, ?, ?)",
                                 doc_rows)
            with conn:
                conn.execute("INSERT INTO fts (fts) VALUES ('optimize')")
        else:
            conn.executescript(POSTINGS_SCHEMA)
            with conn:
                conn.executemany("INSERT INTO postings VALUES (?, ?, ?)", (
                    (col, token, encode_postings(plist))
                    for col, table in build_postings(streams).items()
                    for token, plist in table.items()
                ))
    finally:
        conn.close()
    return IndexStats(
        records=len(record_rows), engine=name, body_tokens=body_total, cjk_chars=chars_total,
        bytes=path.stat().st_size, seconds=round(time.perf_counter() - began, 4),
    )


def _choose_build_engine(engine: EngineChoice) -> bool:
    if engine == "python":
        return False
    if engine not in ("auto", "fts5"):
        raise CoreError(Code.INVALID_ARGUMENT, "Unknown index engine.",
                        details={"engine": engine, "allowed": ["auto", "fts5", "python"]})
    if fts5_available():
        return True
    if engine == "fts5":
        raise CoreError(Code.CAPABILITY_UNAVAILABLE, "This SQLite library has no FTS5.",
                        remediation="Build with engine='auto' to use the Python BM25 engine.")
    return False


@dataclass(frozen=True)
class _Meta:
    rowid: int
    record_id: str
    order: int
    heading_path: tuple[str, ...]
    heading_norm: tuple[str, ...]
    unit_start: int
    unit_end: int
    unit_last: int
    page_labels: tuple[str, ...]
    label_norm: frozenset[str]
    role: str = "body"
    head: frozenset[str] = frozenset()
    """Tokens (and CJK characters) of the record's own, deepest heading."""
    first: bool = False
    """The first record under its heading path."""


def _bad_hint(message: str, key: str, value: str | None = None) -> CoreError:
    details: dict[str, object] = {"hint": key, "allowed": list(HINT_KEYS)}
    if value is not None:
        details["value"] = value
    return CoreError(
        Code.INVALID_ARGUMENT, message, details=details,
        remediation="Hints: heading=TEXT, chapter=TEXT, page=N, pages=A-B (zero-based unit "
        "indexes), label=PRINTED_PAGE_LABEL.",
    )


_RANGE = re.compile(r"\s*(\d+)\s*(?:[-\u2013]\s*(\d+)\s*)?")


class BookIndex:
    """A read-only, thread-safe view of one index file; open with :meth:`open`."""

    def __init__(self, path: Path, engine: Ranker,
                 records: list[_Meta]) -> None:
        self.path = path
        self._engine = engine
        self._records = records
        self._by_rowid = {m.rowid: m for m in records}
        # A pool, not one connection per thread: worker threads come and go (anyio), and a
        # thread-local connection would outlive its thread until close().
        self._idle: list[sqlite3.Connection] = []
        self._closed = False
        self._lock = threading.Lock()
        # Snippet material of recently hit records (immutable, so safe to share): searches on
        # one book keep hitting the same sections, and decoding a record costs more than
        # scoring it.
        self._rows: OrderedDict[int, _Row] = OrderedDict()
        # Packed body token codes of recently reranked records (see proximity.TokenCodes).
        self._codes = TokenCodes()
        self._encoded: OrderedDict[int, bytes] = OrderedDict()
        self._contents: frozenset[int] = frozenset()
        self._index_rows: frozenset[int] = frozenset()
        # Own-heading token → rowids, for the heading boost.
        self._heads: dict[str, frozenset[int]] = {}

    @property
    def engine(self) -> str:
        """The lexical engine answering searches: ``fts5`` or ``python-bm25``."""
        return self._engine.name

    @property
    def record_count(self) -> int:
        """Number of records indexed."""
        return len(self._records)

    @classmethod
    def open(cls, path: Path | str, *, engine: EngineChoice = "auto") -> BookIndex:
        """Open an index file read-only.

        Args:
            path: a file written by :func:`build_index`.
            engine: ``auto`` uses FTS5 when the file has it and this SQLite supports it,
                otherwise the Python BM25 engine (from the file's posting tables, or built in
                memory from its stored normalised text); ``fts5`` or ``python`` force one.

        Raises:
            CoreError: NOT_FOUND when the file is missing; INTERNAL_ERROR when it is not an
                index of this format; CAPABILITY_UNAVAILABLE when ``fts5`` is forced but
                unavailable; BOOK_BUSY while another connection holds the file's lock
                (past SQLite's busy wait).
        """
        path = Path(path)
        if not path.is_file():
            raise CoreError(Code.NOT_FOUND, "The book's search index file does not exist.",
                            details={"path": str(path)},
                            remediation="Rebuild the book package (init --replace).")
        index = cls(path, Fts5Ranker(), [])
        try:
            with index._connection() as conn:
                meta = dict(conn.execute("SELECT key, value FROM meta"))
                if meta.get("format") != INDEX_FORMAT and meta.get("format", "").isdigit():
                    raise CoreError(
                        Code.INTERNAL_ERROR,
                        f"The book's search index was built by an older book-agent (index "
                        f"format {meta['format']}; this one reads format {INDEX_FORMAT}).",
                        details={"path": str(path), "index_format": meta["format"],
                                 "expected_format": INDEX_FORMAT},
                        remediation="Build the package again from its source file: book-agent "
                        "init SOURCE --id BOOK_ID --replace (the new version has the new "
                        "ranking, folding and contents handling).")
                if meta.get("format") != INDEX_FORMAT:
                    raise sqlite3.DatabaseError("format")
                rows = conn.execute(
                    "SELECT rowid, record_id, ord, heading_path, heading_norm, unit_start, "
                    "unit_end, unit_last, page_labels, body_len + chars_len, role FROM records "
                    "ORDER BY rowid").fetchall()
                index._records = _metas(rows)
                index._by_rowid = {m.rowid: m for m in index._records}
                index._contents = frozenset(m.rowid for m in index._records
                                            if m.role == "contents")
                index._index_rows = frozenset(m.rowid for m in index._records
                                              if m.role == "index")
                heads: dict[str, set[int]] = {}
                for m in index._records:
                    for tok in m.head:
                        heads.setdefault(tok, set()).add(m.rowid)
                index._heads = {tok: frozenset(rows) for tok, rows in heads.items()}
                index._engine = _choose_engine(conn, meta, engine, {r[0]: r[9] for r in rows})
        except sqlite3.DatabaseError as exc:
            index.close()
            if index_locked(exc):
                raise CoreError(Code.BOOK_BUSY, "The search index file is locked by another "
                                "program.", details={"path": str(path)},
                                remediation="Try again; book-agent never writes to a published "
                                "index, so close whatever opened it for writing.") from None
            raise CoreError(Code.INTERNAL_ERROR, "The search index file is unreadable.",
                            details={"path": str(path)},
                            remediation="Rebuild the book package (init --replace).") from None
        except CoreError:
            index.close()
            raise
        return index

    @contextlib.contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection]:
        """A read-only connection for this thread's use until the block ends."""
        with self._lock:
            if self._closed:
                raise CoreError(Code.INTERNAL_ERROR, "The search index was closed.")
            conn = self._idle.pop() if self._idle else None
        if conn is None:
            conn = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True,
                                   check_same_thread=False)
        try:
            yield conn
        finally:
            with self._lock:
                keep = not self._closed
                if keep:
                    self._idle.append(conn)
            if not keep:
                conn.close()

    def close(self) -> None:
        """Close the index's connections; searches after this fail."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()

    def __enter__(self) -> BookIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def search(
        self,
        query: str,
        *,
        top_k: int = 10,
        strict: bool = False,
        hints: Mapping[str, str] | None = None,
        semantic: Sequence[tuple[float, int]] | None = None,
        include_contents: bool = False,
        include_index: bool = False,
    ) -> SearchResult:
        """Rank the book's records for ``query``.

        With ``semantic`` (``(similarity, rowid)`` of a semantic backend, best first; see
        :mod:`.semantic`), the lexical ranking and the first :data:`SEMANTIC_POOL` semantic
        candidates are fused by reciprocal-rank fusion (:mod:`.fusion`): narrowing hints
        apply to both, boost hints to the lexical ranking, and with ``strict`` only lexical
        matches can be hits (semantic similarity still orders them). ``total_matches`` is
        then the size of the fused candidate set.

        Query: the tokens of the normalised query are its terms. A word matches the whole
        word; a CJK run is a phrase of its bigrams (有機交流 matches only that contiguous
        string); a one-character CJK term matches the character anywhere; a double-quoted
        part is a phrase whose words and runs must be adjacent and in order. Query text is
        never index or regex syntax: ``a OR b`` searches the three words a, or, b.

        Ranking: BM25 over the record's text and its heading path (weighted higher), then
        the best :data:`~.proximity.POOL` records are boosted where query terms stand adjacent
        and in order, or near each other, and where the record's own heading has them
        (:mod:`.proximity`); scores are rounded and ties rank in reading order. By default any
        term may match and records with more terms rank higher; with ``strict`` every term
        must.

        Contents: records whose role is ``contents`` (a printed contents page, an EPUB nav
        document in the spine) are left out unless ``include_contents``; the result says how
        many matching ones were left out (``contents_left_out``). Records of a back-of-book
        index (role ``index``) likewise unless ``include_index`` (``index_left_out``).

        Hints narrow or boost, and are reported in ``hints_applied``:

        - ``heading=TEXT``: boost records whose heading path contains TEXT (normalised):
          their score is multiplied by :data:`HINT_BOOST`, once however many boost hints
          select them; with ``strict`` it narrows instead.
        - ``chapter=TEXT``: the same, on the top-level heading only.
        - ``page=N`` / ``pages=A-B``: narrow to records overlapping those zero-based unit
          indexes (PDF page indexes, EPUB spine positions).
        - ``label=X``: narrow to records on a unit with printed page label X.

        Raises:
            CoreError: INVALID_ARGUMENT for an empty or too long query, a query with no
                searchable characters (only punctuation or symbols), a ``top_k`` outside
                1..MAX_TOP_K, or an unknown or malformed hint.
        """
        if not isinstance(query, str) or not query.strip():
            raise CoreError(Code.INVALID_ARGUMENT, "The query is empty.",
                            details={"field": "query"},
                            remediation="Pass one or more words to search for.")
        if len(query) > MAX_QUERY_CHARS:
            raise CoreError(Code.INVALID_ARGUMENT, "The query is too long.",
                            details={"field": "query", "max_chars": MAX_QUERY_CHARS,
                                     "chars": len(query)})
        if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= MAX_TOP_K:
            raise CoreError(Code.INVALID_ARGUMENT, "top_k is out of range.",
                            details={"field": "top_k", "min": 1, "max": MAX_TOP_K})
        narrow, boost, applied = self._hints(hints or {}, strict)
        norm = normalise(query)
        terms = parse_query(query)
        if not terms:
            raise CoreError(Code.INVALID_ARGUMENT,
                            "The query has no searchable words (only punctuation or symbols).",
                            details={"field": "query", "reason": "no_tokens"},
                            remediation="Search for words or CJK characters.")
        hide = frozenset() if include_contents else self._contents
        hide_index = frozenset() if include_index else self._index_rows
        if hide_index:
            hide = hide | hide_index
        pool_k = pool_size(terms, top_k)
        left_index = 0
        with self._connection() as conn:
            if semantic is not None:
                hits, total, left_out, left_index = self._fused(
                    conn, terms, strict, top_k, narrow, boost, semantic, hide,
                    QueryParts(query), hide_index)
            else:
                scores = None
                if narrow is None and not boost and not hide_index:
                    pool, total, left_out = self._engine.top(conn, terms, strict, pool_k, hide)
                else:
                    # (A hidden index needs every match's row to count it apart.)
                    scores, left_out, left_index = self._scores(conn, terms, strict, narrow,
                                                                boost, hide, hide_index)
                    pool, total = best(scores, pool_k), len(scores)
                top = self._rerank(conn, pool, terms)[:top_k]
                if _tie_at_edge(top, pool, total, top_k):
                    # A record beyond the pool may tie the last hit once scores are rounded:
                    # choose the pool by rounded score, so ties are in reading order.
                    pool = self._rounded_pool(conn, terms, strict, pool, pool_k, hide, scores)
                    top = self._rerank(conn, pool, terms)[:top_k]
                hits = self._hits(conn, top, terms, QueryParts(query)) if top else []
        return SearchResult(
            query=query, normalized_query=norm,
            terms=[Term(text=t.text, kind=t.kind) for t in terms],
            strict=strict, top_k=top_k, hints_applied=applied,
            modes=SearchModes(lexical_engine=self._engine.name),
            total_matches=total, contents_left_out=left_out - left_index,
            index_left_out=left_index,
            folds=sorted({name for hit in hits for name in hit.folds}),
            query_folds=query_fold_names(query), hits=hits,
        )

    def _rounded_pool(self, conn: sqlite3.Connection, terms: Sequence[QueryTerm],
                      strict: bool, pool: list[tuple[float, int]], pool_k: int,
                      hide: frozenset[int], scores: dict[int, float] | None
                      ) -> list[tuple[float, int]]:
        if scores is not None:
            return best(scores, pool_k, SCORE_DIGITS)
        if round(pool[-1][0], SCORE_DIGITS) == 0.0:
            # The usual case (a word in most records: BM25's IDF is almost zero): every
            # record beyond the pool scores 0 too, so the rest of the pool is simply the
            # first matching records in reading order; no second ranking pass.
            keep = [p for p in pool if round(p[0], SCORE_DIGITS) < 0.0]
            kept = {rowid for _, rowid in keep}
            rest = [r for r in self._engine.first(conn, terms, strict, pool_k, hide)
                    if r not in kept]
            return keep + [(0.0, r) for r in rest[:pool_k - len(keep)]]
        return self._engine.top(conn, terms, strict, pool_k, hide, SCORE_DIGITS)[0]

    def _scores(self, conn: sqlite3.Connection, terms: Sequence[QueryTerm], strict: bool,
                narrow: set[int] | None, boost: set[int], hide: frozenset[int],
                hide_index: frozenset[int] = frozenset()
                ) -> tuple[dict[int, float], int, int]:
        """Every match's BM25 score, narrowed and boosted, how many were hidden, and how many
        of those are back-of-book index records."""
        scores = self._engine.scores(conn, terms, strict)
        if narrow is not None:
            scores = {rowid: s for rowid, s in scores.items() if rowid in narrow}
        left_out = left_index = 0
        if hide:
            if hide_index:
                left_index = sum(1 for rowid in scores if rowid in hide_index)
            kept = {rowid: s for rowid, s in scores.items() if rowid not in hide}
            left_out, scores = len(scores) - len(kept), kept
        for rowid in boost & scores.keys():
            scores[rowid] *= HINT_BOOST
        return scores, left_out, left_index

    def _rerank(self, conn: sqlite3.Connection, pool: list[tuple[float, int]],
                terms: Sequence[QueryTerm]) -> list[tuple[float, int]]:
        heads = self._heads
        in_heading: dict[int, int] = {}
        for term in terms:
            rows = heads.get(term.tokens[0])
            for tok in term.tokens[1:]:
                if not rows:
                    break
                rows = rows & heads.get(tok, frozenset())
            for rowid in rows or ():
                in_heading[rowid] = in_heading.get(rowid, 0) + 1
        by_rowid = self._by_rowid
        return rerank(pool, terms, lambda ids: self._body_codes(conn, ids), self._codes,
                      in_heading, lambda rowid: by_rowid[rowid].first)

    def _body_codes(self, conn: sqlite3.Connection, ids: list[int]) -> dict[int, bytes]:
        """The packed body token codes of ``ids`` (no joined compounds), cached."""
        with self._lock:
            out = {i: self._encoded[i] for i in ids if i in self._encoded}
        missing = [i for i in ids if i not in out]
        if missing:
            # Straight from the table, not through the snippet cache: a pool is wider than
            # the hits, and its rows need not push the hits' snippet material out.
            fetched = conn.execute(
                f"SELECT rowid, norm FROM records WHERE rowid IN ({','.join('?' * len(missing))})",
                missing).fetchall()
            made = {rowid: self._codes.encode(token_stream(split_runs(norm), breaks=True))
                    for rowid, norm in fetched}
            out.update(made)
            with self._lock:
                self._encoded.update(made)
                while len(self._encoded) > _CODE_CACHE:
                    self._encoded.popitem(last=False)
        return out

    def _hints(self, hints: Mapping[str, str], strict: bool
               ) -> tuple[set[int] | None, set[int], list[HintApplied]]:
        narrow: set[int] | None = None
        boost: set[int] = set()
        applied: list[HintApplied] = []
        for key, raw_value in hints.items():
            if key not in HINT_KEYS:
                raise _bad_hint(f"Unknown search hint {key!r}.", str(key))
            value = str(raw_value).strip()
            if not value:
                raise _bad_hint(f"The {key} hint has no value.", key)
            selected = self._select(key, value)
            if key in ("heading", "chapter") and not strict:
                boost |= selected
                how: Literal["narrow", "boost"] = "boost"
            else:
                narrow = selected if narrow is None else narrow & selected
                how = "narrow"
            applied.append(HintApplied(key=key, value=value, applied_as=how,
                                       records=len(selected)))
        return narrow, boost, applied

    def _select(self, key: str, value: str) -> set[int]:
        records = self._records
        if key in ("heading", "chapter"):
            needle = normalise(value)
            if key == "heading":
                return {m.rowid for m in records if any(needle in h for h in m.heading_norm)}
            return {m.rowid for m in records if m.heading_norm and needle in m.heading_norm[0]}
        if key == "label":
            label = normalise(value)
            return {m.rowid for m in records if label in m.label_norm}
        found = _RANGE.fullmatch(value)
        if not found or (key == "page" and found.group(2) is not None):
            raise _bad_hint(f"The {key} hint needs "
                            + ("a number." if key == "page" else "a range like 3-7."),
                            key, value)
        lo = int(found.group(1))
        hi = int(found.group(2)) if found.group(2) is not None else lo
        if hi < lo:
            raise _bad_hint("The pages hint ends before it starts.", key, value)
        return {m.rowid for m in records if m.unit_start <= hi and m.unit_last >= lo}

    def _snippet_rows(self, conn: sqlite3.Connection,
                      ids: list[int]) -> dict[int, _Row]:
        return _cache_rows(self, conn, ids)

    def _hits(self, conn: sqlite3.Connection, top: list[tuple[float, int]],
              terms: Sequence[QueryTerm], parts: QueryParts) -> list[Hit]:
        rows = self._snippet_rows(conn, [rowid for _, rowid in top])
        hits = []
        for place, (neg_score, rowid) in enumerate(top, start=1):
            meta = self._by_rowid[rowid]
            text, norm, offmap, hidden = rows[rowid]
            raw_matches: list[tuple[QueryTerm, str]] = []
            snippet, matched = make_snippet(text, norm, offmap, terms, hidden=hidden,
                                            raw_matches=raw_matches)
            hits.append(Hit(
                record_id=meta.record_id, order=meta.order, rank=place, score=0.0 - neg_score,
                heading_path=list(meta.heading_path), unit_start=meta.unit_start,
                unit_end=meta.unit_end, page_labels=list(meta.page_labels),
                snippet=snippet, matched_terms=matched, folds=parts.folds(raw_matches),
                matched_by=["lexical"],
                ranks={"lexical": place}, scores={"lexical": 0.0 - neg_score},
            ))
        return hits

    def _fused(self, conn: sqlite3.Connection, terms: Sequence[QueryTerm], strict: bool,
               top_k: int, narrow: set[int] | None, boost: set[int],
               semantic: Sequence[tuple[float, int]], hide: frozenset[int],
               parts: QueryParts, hide_index: frozenset[int] = frozenset()
               ) -> tuple[list[Hit], int, int, int]:
        scores, left_out, left_index = self._scores(conn, terms, strict, narrow, boost, hide,
                                                    hide_index)
        ranked_lexical = best(scores, len(scores), SCORE_DIGITS)
        head = self._rerank(conn, ranked_lexical[:POOL], terms)
        lexical = head + ranked_lexical[POOL:]
        scores.update((rowid, -neg) for neg, rowid in head)
        similar = {rowid: sim for sim, rowid in semantic if rowid in self._by_rowid
                   and rowid not in hide
                   and (narrow is None or rowid in narrow) and (not strict or rowid in scores)}
        ranked = sorted(similar.items(), key=lambda kv: (-kv[1], kv[0]))[:SEMANTIC_POOL]
        fused = rrf({"lexical": [rowid for _, rowid in lexical],
                     "semantic": [rowid for rowid, _ in ranked]})
        top = fused[:top_k]
        rows = self._snippet_rows(conn, [f.rowid for f in top]) if top else {}
        hits = []
        for place, f in enumerate(top, start=1):
            meta = self._by_rowid[f.rowid]
            text, norm, offmap, hidden = rows[f.rowid]
            raw_matches: list[tuple[QueryTerm, str]] = []
            snippet, matched = make_snippet(text, norm, offmap, terms, hidden=hidden,
                                            raw_matches=raw_matches)
            stage = {"lexical": scores.get(f.rowid), "semantic": similar.get(f.rowid)}
            hits.append(Hit(
                record_id=meta.record_id, order=meta.order, rank=place, score=f.score,
                heading_path=list(meta.heading_path), unit_start=meta.unit_start,
                unit_end=meta.unit_end, page_labels=list(meta.page_labels),
                snippet=snippet, matched_terms=matched, folds=parts.folds(raw_matches),
                matched_by=f.matched_by,
                ranks={**f.ranks, "fused": place},
                scores={**{k: v for k, v in stage.items() if k in f.ranks and v is not None},
                        "rrf": f.score},
            ))
        return hits, len(fused), left_out, left_index


def _with_readings(body: list[str], chars: str, readings: str) -> tuple[list[str], str]:
    """Body tokens and CJK characters with the record's ruby readings after them (each after a
    run break, so no phrase of the text reaches into a reading): a search for くつろげ finds
    the record printing 寛容 with that reading."""
    if not readings:
        return body, chars
    body = list(body)
    extra: list[str] = []
    for reading in readings.split("\n"):
        segments = split_runs(reading)
        body.append(RUN_BREAK)
        body.extend(token_stream(segments, breaks=True))
        extra.extend(text for cjk, text in segments if cjk)
    return body, chars + "".join(extra)


def _tie_at_edge(top: list[tuple[float, int]], pool: list[tuple[float, int]], total: int,
                 top_k: int) -> bool:
    """True when records beyond ``pool`` could have the last hit's rounded score."""
    if len(pool) >= total or not top:
        return False
    return top[-1][0] >= round(pool[-1][0], SCORE_DIGITS) and len(top) == top_k


def _metas(rows: list[tuple]) -> list[_Meta]:
    """Record metadata from ``records`` rows, with each own heading's tokens and whether the
    record is the first under its heading path."""
    out = []
    previous: tuple[str, ...] | None = None
    for r in rows:
        labels = json.loads(r[8])
        heading_norm = tuple(json.loads(r[4]))
        own = heading_norm[-1:]
        head = frozenset(heading_tokens(own)) | frozenset(
            ch for h in own for cjk, run in split_runs(h) if cjk for ch in run)
        out.append(_Meta(r[0], r[1], r[2], tuple(json.loads(r[3])), heading_norm, r[5], r[6],
                         r[7], tuple(labels), frozenset(map(normalise, labels)), r[10], head,
                         heading_norm != previous))
        previous = heading_norm
    return out


def query_fold_names(query: str) -> list[str]:
    """The folds the query's normalisation applied (when :mod:`..text` describes them)."""
    describe = getattr(_text, "describe_folds", None)
    if describe is None or (query.isascii() and query.replace(" ", "").isalnum()):
        return []  # plain ASCII letters and digits: nothing but case to fold
    return list(describe(query))


class QueryParts:
    """The raw text of each query term inside the query, to name the folds of a match."""

    def __init__(self, query: str) -> None:
        self.query = query
        self.between = getattr(_text, "folds_between", None)
        self._typed: dict[str, tuple[str, str] | None] = {}

    @functools.cached_property
    def _plain(self) -> str:
        return self.query.casefold()

    @functools.cached_property
    def _folded(self) -> tuple[str, list[int]]:
        return normalise_with_offsets(self.query)

    def typed(self, term: QueryTerm) -> tuple[str, str] | None:
        """The raw text of ``term`` in the query and its casefold (None: not in it)."""
        if term.text in self._typed:
            return self._typed[term.text]
        norm, offsets = self._folded
        at = norm.find(term.text)
        found = None
        if at >= 0:
            start, end = _text.raw_span(offsets, at, at + len(term.text), len(self.query))
            raw = self.query[start:end]
            found = (raw, raw.casefold())
        self._typed[term.text] = found
        return found

    def folds(self, matches: list[tuple[QueryTerm, str]]) -> list[str]:
        """The folds that made the terms match ``matches`` (term, raw matched text)."""
        if self.between is None:
            return []
        names: set[str] = set()
        plain = self._plain
        for term, found in matches:
            if found == term.text and term.text in plain:
                continue  # typed as the text has it (the common case: no fold of the query)
            known = self.typed(term)
            if known is None or known[1] == found or known[1] == found.casefold():
                continue  # the text says it as typed (case aside): nothing to name
            typed = known[0]
            a, b = normalise(typed), normalise(found)
            if a != b and plural_stem(a) == plural_stem(b) != a + b:
                names.add("plural")  # metatopics typed, metatopic printed (or the reverse)
                continue
            names.update(self.between(typed, found))
        return sorted(names)


_Row = tuple[str, str, tuple[array, array], bool]
"""Snippet material of one record: raw text, normalised text, offset map, has hidden
characters."""


def _cache_rows(index: BookIndex, conn: sqlite3.Connection,
                ids: list[int]) -> dict[int, _Row]:
    with index._lock:
        cached = {i: index._rows[i] for i in ids if i in index._rows}
    missing = [i for i in ids if i not in cached]
    if missing:
        fetched = {r[0]: (r[1], r[2], unpack_runs(r[3]), has_hidden(r[1])) for r in conn.execute(
            f"SELECT rowid, text, norm, offmap FROM records WHERE rowid IN "
            f"({','.join('?' * len(missing))})", missing)}
        cached.update(fetched)
        with index._lock:
            index._rows.update(fetched)
            while len(index._rows) > _ROW_CACHE:
                index._rows.popitem(last=False)
    with index._lock:
        for i in ids:
            if i in index._rows:
                index._rows.move_to_end(i)
    return cached


_ROW_CACHE = 1024
_CODE_CACHE = 4096  # about 1.5 kB a record


def _choose_engine(conn: sqlite3.Connection, meta: dict[str, str], engine: EngineChoice,
                   lengths: dict[int, int]) -> Ranker:
    has_fts = meta.get("engine") == ENGINE_FTS5
    if engine == "fts5" or (engine == "auto" and has_fts and fts5_available()):
        if not (has_fts and fts5_available()):
            raise CoreError(Code.CAPABILITY_UNAVAILABLE,
                            "This index or this SQLite library has no FTS5.",
                            remediation="Open with engine='auto'.")
        return Fts5Ranker()
    if engine not in ("auto", "python"):
        raise CoreError(Code.INVALID_ARGUMENT, "Unknown index engine.",
                        details={"engine": engine, "allowed": ["auto", "fts5", "python"]})
    if meta.get("engine") == ENGINE_PYTHON:
        lookup = stored_lookup()
    else:
        # An FTS5 index read without FTS5: rebuild the postings in memory from the stored
        # normalised text (no second normalisation pass).
        streams = ((rowid, *_with_readings(*index_columns(split_runs(norm), norm), readings),
                    heading_tokens(json.loads(heading_norm)))
                   for rowid, norm, heading_norm, readings in conn.execute(
                       "SELECT rowid, norm, heading_norm, readings FROM records"))
        tables = build_postings(streams)
        empty: Postings = {}

        def lookup(_conn: sqlite3.Connection, col: str, token: str) -> Postings:
            return tables[col].get(token, empty)

    return Bm25Ranker(len(lengths), int(meta.get("tokens", "0")), lengths, lookup)
