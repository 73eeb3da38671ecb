"""The book's lexical search index: CJK-aware without dictionaries, in one SQLite file.

book-agent tokenises text itself before SQLite sees it (research §3.1, §3.3):

- all text is folded by :func:`~readingroom.book.text.normalise` first (NFKC, casefold,
  Kangxi radicals, full-width forms, ligatures, U+3000, soft hyphens, bidi controls);
- a run of letters, digits and combining marks outside CJK is one *word*;
- a run of CJK characters (:func:`~readingroom.book.text.is_cjk`) becomes overlapping
  character *bigrams* (a one-character run is its own token). So a two-character word such as
  電燈 inside 古い電燈の下で is found; SQLite's ``trigram`` tokenizer misses it;
- every CJK character is also indexed alone, in a second column, for one-character queries.

The FTS5 table uses the ``ascii`` tokenizer. It splits only on ASCII spaces and punctuation
and keeps every non-ASCII character, so the tokens above reach the index unchanged. Between
two CJK runs the index places :data:`RUN_BREAK`, so a bigram phrase never bridges
punctuation: 東京。京都 does not match 東京都.

When the SQLite library lacks FTS5, a pure-Python BM25 answers instead. It reads the same
tokens from plain posting tables (or builds them in memory) and uses FTS5's ``bm25()``
formula. Every result names the engine that ran.
"""

from __future__ import annotations

import bisect
import contextlib
import functools
import heapq
import itertools
import json
import math
import operator
import re
import sqlite3
import sys
import threading
import time
import unicodedata
from array import array
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..core.errors import Code, CoreError
from .model import Record
from .text import is_cjk, normalise, normalise_with_offsets

__all__ = [
    "ENGINE_FTS5",
    "ENGINE_PYTHON",
    "HINT_BOOST",
    "HINT_KEYS",
    "MAX_QUERY_CHARS",
    "MAX_TOP_K",
    "RUN_BREAK",
    "BookIndex",
    "HintApplied",
    "Hit",
    "IndexStats",
    "SearchModes",
    "SearchResult",
    "Term",
    "build_index",
    "fts5_available",
    "tokenize",
]

ENGINE_FTS5 = "fts5"
ENGINE_PYTHON = "python-bm25"
RUN_BREAK = "\ue000"
"""Token placed between two adjacent CJK runs in the index (a private-use character that no
text ever tokenises to)."""
HINT_KEYS = ("heading", "chapter", "page", "pages", "label")
HINT_BOOST = 2.0
"""Factor applied to the score of a record a boost hint selects."""
MAX_QUERY_CHARS = 1000
MAX_TOP_K = 100
SNIPPET_CHARS = 200

EngineChoice = Literal["auto", "fts5", "python"]
TermKind = Literal["word", "cjk_phrase", "phrase", "cjk_char"]

_FORMAT = "1"
_K1 = 1.2
_B = 0.75
_LEAD = 60
_MARK_OPEN, _MARK_CLOSE = "\ufdd0", "\ufdd1"  # noncharacters: never in real text
_MARKS = _MARK_OPEN + _MARK_CLOSE
_MAX_MARKS = 20


# --- tokenisation ---------------------------------------------------------------------


class _CharClasses(dict):
    """Code point → "c" (CJK), "w" (word character) or " " (separator), learnt on first sight.

    Used as a ``str.translate`` table: a whole text is classified at C speed.
    """

    def __missing__(self, cp: int) -> str:
        ch = chr(cp)
        if is_cjk(ch):
            kind = "c"
        elif ch.isalnum() or (
            unicodedata.category(ch)[0] == "M"
            # Variation selectors only pick a glyph; as word characters they would split a
            # CJK run into junk tokens.
            and not (0xFE00 <= cp <= 0xFE0F or 0xE0100 <= cp <= 0xE01EF)
        ):
            kind = "w"
        else:
            kind = " "
        self[cp] = kind
        return kind


_CLASSES = _CharClasses()


@functools.cache
def _hidden_chars() -> dict[int, None]:
    """Characters a snippet must not carry, as a ``str.translate`` table that deletes them:
    format characters (bidi controls, zero-width characters, soft hyphen, BOM, tags) and
    control characters other than whitespace.

    Built once from the Unicode database, over the planes where such characters exist. A
    translate table, not a regex: a character class this size makes the regex engine the
    slowest step of a search.
    """
    return {
        cp: None
        for cp in itertools.chain(range(0x20000), range(0xE0000, 0xE1000))
        if (cat := unicodedata.category(chr(cp))) == "Cf"
        or (cat == "Cc" and not chr(cp).isspace())
    }


@functools.cache
def _hidden_set() -> frozenset[str]:
    """The same characters as a set, for the fast check that a snippet has none."""
    return frozenset(map(chr, _hidden_chars()))


_RUNS = re.compile(r"c+|w+")

Segment = tuple[bool, str]
"""A maximal run of the normalised text: ``(is_cjk_run, text)``."""


def _segments(norm: str) -> list[Segment]:
    mask = norm.translate(_CLASSES)
    return [(mask[s] == "c", norm[s:e]) for s, e in map(re.Match.span, _RUNS.finditer(mask))]


def _stream(segments: Iterable[Segment], *, breaks: bool) -> list[str]:
    out: list[str] = []
    prev_cjk = False
    for cjk, text in segments:
        if cjk:
            if breaks and prev_cjk:
                out.append(RUN_BREAK)
            if len(text) == 1:
                out.append(text)
            else:
                out.extend(map(operator.add, text, text[1:]))
        else:
            out.append(text)
        prev_cjk = cjk
    return out


def tokenize(text: str) -> list[str]:
    """The search tokens of ``text``, in order, after :func:`normalise`.

    Words (runs of letters, digits and combining marks outside CJK) are tokens; a CJK run
    gives its overlapping bigrams, or its one character when it has only one. The index
    additionally stores every CJK character alone (for one-character queries) and a
    :data:`RUN_BREAK` between adjacent CJK runs; neither appears here.

    Example: ``tokenize("ＡＢＣの古い電燈")`` → ``["abc", "の古", "古い", "い電", "電燈"]``.
    """
    return _stream(_segments(normalise(text)), breaks=False)


def _columns(segments: Sequence[Segment]) -> tuple[list[str], str]:
    """A record's ``body`` tokens and its CJK characters (the ``chars`` column)."""
    return _stream(segments, breaks=True), "".join(text for cjk, text in segments if cjk)


# --- query terms ----------------------------------------------------------------------


@dataclass(frozen=True)
class _Term:
    kind: TermKind
    text: str
    segments: tuple[Segment, ...]
    column: Literal["body", "chars"]
    tokens: tuple[str, ...]


def _make_term(segments: tuple[Segment, ...], display: str) -> _Term:
    if len(segments) > 1:
        return _Term("phrase", display, segments, "body",
                     tuple(_stream(segments, breaks=True)))
    cjk, text = segments[0]
    if cjk and len(text) == 1:
        return _Term("cjk_char", text, segments, "chars", (text,))
    if cjk:
        return _Term("cjk_phrase", text, segments, "body",
                     tuple(_stream(segments, breaks=False)))
    return _Term("word", text, segments, "body", (text,))


_QUOTES = str.maketrans({"\uff02": '"', "\u201c": '"', "\u201d": '"'})


def _parse_query(query: str) -> list[_Term]:
    """Terms of a raw query: words, CJK runs, and double-quoted phrases.

    Outside quotes, whitespace separates terms even between two CJK characters (東京 交流 is
    two terms); inside quotes the text is folded like the book's text, where whitespace
    between CJK characters is a line wrap and is dropped.
    """
    parts = query.translate(_QUOTES).split('"')
    terms: list[_Term] = []
    seen: set[tuple[str, str, tuple[str, ...]]] = set()
    for i, part in enumerate(parts):
        # An odd part is quoted unless it follows the last, unbalanced quote.
        if i % 2 == 1 and i != len(parts) - 1:
            folded = normalise(part)
            segments = tuple(_segments(folded))
            # Shown from its first to its last token, inner punctuation kept (東京、京都).
            mask = folded.translate(_CLASSES)
            shown = folded[len(mask) - len(mask.lstrip()):len(mask.rstrip())]
            groups = [(segments, " ".join(shown.split()))] if segments else []
        else:
            groups = [((seg,), seg[1]) for chunk in part.split()
                      for seg in _segments(normalise(chunk))]
        for group, display in groups:
            term = _make_term(group, display)
            key = (term.kind, term.column, term.tokens)
            if key not in seen:
                seen.add(key)
                terms.append(term)
    return terms


def _find(norm: str, term: _Term, pos: int) -> tuple[int, int] | None:
    """The first occurrence of ``term`` at or after ``pos``, with the index's token semantics.

    A word matches a whole word; a CJK run matches anywhere inside CJK text; in a multi-part
    phrase the parts must follow each other with only separators between, and a CJK part must
    be a whole run, except that the phrase may begin or end inside a run.
    """
    segments = term.segments
    first = segments[0][1]
    while True:
        start = norm.find(first, pos)
        if start < 0:
            return None
        if term.kind in ("cjk_phrase", "cjk_char"):
            return start, start + len(first)
        end = _match_at(norm, segments, start)
        if end is not None:
            return start, end
        pos = start + 1


def _class_at(norm: str, i: int) -> str:
    return _CLASSES[ord(norm[i])] if 0 <= i < len(norm) else " "


def _match_at(norm: str, segments: tuple[Segment, ...], p: int) -> int | None:
    n = len(norm)
    last = len(segments) - 1
    multi = last > 0
    for j, (cjk, text) in enumerate(segments):
        if j:
            while p < n and _CLASSES[ord(norm[p])] == " ":
                p += 1
            if not norm.startswith(text, p):
                return None
        e = p + len(text)
        if cjk:
            whole_left = multi and (j > 0 or len(text) == 1)
            whole_right = multi and (j < last or len(text) == 1)
            if (whole_left and _class_at(norm, p - 1) == "c") or (
                whole_right and _class_at(norm, e) == "c"
            ):
                return None
        elif _class_at(norm, p - 1) == "w" or _class_at(norm, e) == "w":
            return None
        p = e
    return p


def _fts_expression(terms: Sequence[_Term], strict: bool) -> str:
    """An FTS5 MATCH expression built only from quoted tokens: query text is never syntax."""
    parts = []
    for term in terms:
        phrase = " + ".join('"' + tok.replace('"', '""') + '"' for tok in term.tokens)
        parts.append(f"({term.column} : {phrase})")
    return (" AND " if strict else " OR ").join(parts)


# --- result models --------------------------------------------------------------------


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
    semantic: str = "off"
    rerank: str = "off"


class Hit(BaseModel):
    """One ranked record."""

    model_config = ConfigDict(extra="forbid")

    record_id: str
    order: int
    score: float = Field(description="BM25 score (times any boost); higher is better.")
    heading_path: list[str]
    unit_start: int
    unit_end: int
    page_labels: list[str] = Field(description="Printed labels of the units the record spans.")
    snippet: str = Field(
        description=f"About {SNIPPET_CHARS} characters of raw text around the first match, "
        "matches marked «like this», whitespace collapsed; … where cut."
    )
    matched_terms: list[str] = Field(description="Texts of the query terms this record has.")
    matched_by: list[str] = Field(default_factory=lambda: ["lexical"])


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
    total_matches: int = Field(description="Records matching (after narrowing hints).")
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


# --- building -------------------------------------------------------------------------


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
    chars_len INTEGER NOT NULL,
    text TEXT NOT NULL,
    norm TEXT NOT NULL,
    offmap BLOB NOT NULL
);
"""
# Contentless: the tokens are derivable from records.norm, so only the index is kept.
_FTS_SCHEMA = "CREATE VIRTUAL TABLE fts USING fts5(body, chars, content='', tokenize='ascii')"
_POSTINGS_SCHEMA = """
CREATE TABLE postings (
    col TEXT NOT NULL, token TEXT NOT NULL, data BLOB NOT NULL, PRIMARY KEY (col, token)
) WITHOUT ROWID;
"""


def _offset_runs(offsets: list[int]) -> bytes:
    """Run-length form of a normalised→raw offset map: ``(start, raw - norm)`` pairs, packed.

    The pairs mark where ``raw - norm`` changes; see :func:`_unpack_runs`.
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


def _unpack_runs(blob: bytes) -> tuple[array, array]:
    arr = array("i")
    arr.frombytes(blob)
    if sys.byteorder == "big":
        arr.byteswap()
    return arr[0::2], arr[1::2]


def build_index(
    records: Sequence[Record],
    path: Path,
    *,
    unit_labels: Sequence[str | None] | None = None,
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
    streams: list[tuple[int, list[str], str]] = []
    body_total = chars_total = 0
    fold = functools.lru_cache(maxsize=None)(normalise)  # headings repeat across records
    ordered = sorted(records, key=operator.attrgetter("order"))
    for rowid, rec in enumerate(ordered, start=1):
        norm, offsets = normalise_with_offsets(rec.text)
        segments = _segments(norm)
        body, chars = _columns(segments)
        body_len, chars_len = len(body), len(chars)
        body_total += body_len
        chars_total += chars_len
        # A record ending at offset 0 of a unit has no text on it.
        ends_before = rec.char_end == 0 and rec.unit_end > rec.unit_start
        last = rec.unit_end - 1 if ends_before else rec.unit_end
        page_labels = [lab for lab in labels[rec.unit_start:last + 1] if lab]
        record_rows.append((
            rowid, rec.record_id, rec.order,
            json.dumps(list(rec.heading_path), ensure_ascii=False),
            json.dumps([fold(h) for h in rec.heading_path], ensure_ascii=False),
            rec.unit_start, rec.unit_end, last,
            json.dumps(page_labels, ensure_ascii=False),
            body_len, chars_len, rec.text, norm,
            _offset_runs(offsets),
        ))
        if use_fts:
            doc_rows.append((rowid, " ".join(body), " ".join(chars)))
        else:
            streams.append((rowid, body, chars))
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA journal_mode=MEMORY")
        conn.execute("PRAGMA synchronous=OFF")
        with conn:
            conn.executescript(_SCHEMA)
            conn.executemany(f"INSERT INTO records VALUES ({','.join('?' * 14)})", record_rows)
            name = ENGINE_FTS5 if use_fts else ENGINE_PYTHON
            meta = {"format": _FORMAT, "engine": name, "rows": str(len(record_rows)),
                    "tokens": str(body_total + chars_total)}
            conn.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())
        if use_fts:
            with conn:
                conn.execute(_FTS_SCHEMA)
                conn.executemany("INSERT INTO fts (rowid, body, chars) VALUES (?, ?, ?)",
                                 doc_rows)
            with conn:
                conn.execute("INSERT INTO fts (fts) VALUES ('optimize')")
        else:
            conn.executescript(_POSTINGS_SCHEMA)
            with conn:
                conn.executemany("INSERT INTO postings VALUES (?, ?, ?)", (
                    (col, token, _encode(plist))
                    for col, table in _postings(streams).items()
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


Postings = dict[int, list[int]]
"""rowid → token positions in one column of that row."""


def _postings(streams: Iterable[tuple[int, list[str], str]]) -> dict[str, dict[str, Postings]]:
    """Inverted lists of both columns from ``(rowid, body tokens, CJK characters)``."""
    tables: dict[str, dict[str, Postings]] = {"body": {}, "chars": {}}
    for rowid, body, chars in streams:
        for col, tokens in (("body", body), ("chars", chars)):
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


def _encode(plist: Postings) -> bytes:
    arr = array("I")
    for rowid, positions in plist.items():
        arr.append(rowid)
        arr.append(len(positions))
        arr.extend(positions)
    if sys.byteorder == "big":
        arr.byteswap()
    return arr.tobytes()


def _decode(blob: bytes) -> Postings:
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


# --- engines --------------------------------------------------------------------------


Ranked = list[tuple[float, int]]
"""``(-score, rowid)`` best first; rowids follow reading order, so ties rank in it."""


class _Fts5Engine:
    name = ENGINE_FTS5

    def scores(self, conn: sqlite3.Connection, terms: Sequence[_Term],
               strict: bool) -> dict[int, float]:
        """Score of every matching record."""
        sql = "SELECT rowid, rank FROM fts WHERE fts MATCH ?"
        return {rowid: -rank
                for rowid, rank in conn.execute(sql, (_fts_expression(terms, strict),))}

    def top(self, conn: sqlite3.Connection, terms: Sequence[_Term], strict: bool,
            k: int) -> tuple[Ranked, int]:
        """The best ``k`` records and how many match; FTS5 ranks without a Python pass."""
        expr = _fts_expression(terms, strict)
        total = conn.execute("SELECT count(*) FROM fts WHERE fts MATCH ?", (expr,)).fetchone()
        ranked = conn.execute(
            "SELECT rank, rowid FROM fts WHERE fts MATCH ? ORDER BY rank, rowid LIMIT ?",
            (expr, k)).fetchall()
        return ranked, total[0]


class _PythonEngine:
    """BM25 exactly as FTS5's ``bm25()`` computes it, over the same token streams."""

    name = ENGINE_PYTHON

    def __init__(self, rows: int, total_tokens: int, lengths: dict[int, int],
                 lookup: Callable[[sqlite3.Connection, str, str], Postings]) -> None:
        self._rows = rows
        self._avgdl = total_tokens / rows if rows else 0.0
        self._lengths = lengths
        self._lookup = lookup

    def _instances(self, conn: sqlite3.Connection, term: _Term) -> dict[int, int]:
        lists = [self._lookup(conn, term.column, tok) for tok in term.tokens]
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

    def top(self, conn: sqlite3.Connection, terms: Sequence[_Term], strict: bool,
            k: int) -> tuple[Ranked, int]:
        """The best ``k`` records and how many match."""
        scores = self.scores(conn, terms, strict)
        return _best(scores, k), len(scores)

    def scores(self, conn: sqlite3.Connection, terms: Sequence[_Term],
               strict: bool) -> dict[int, float]:
        """Score of every matching record."""
        freqs = [self._instances(conn, term) for term in terms]
        keys = (set.intersection(*map(set, freqs)) if strict
                else set().union(*freqs))
        idfs = []
        for f in freqs:
            idf = math.log((self._rows - len(f) + 0.5) / (len(f) + 0.5))
            idfs.append(idf if idf > 0.0 else 1e-6)
        scores: dict[int, float] = {}
        for rowid in keys:
            norm_len = _K1 * (1 - _B + _B * self._lengths[rowid] / self._avgdl)
            score = 0.0
            for idf, f in zip(idfs, freqs, strict=True):
                tf = float(f.get(rowid, 0))
                score += idf * ((tf * (_K1 + 1.0)) / (tf + norm_len))
            scores[rowid] = score
        return scores


# --- searching ------------------------------------------------------------------------


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

    def __init__(self, path: Path, engine: _Fts5Engine | _PythonEngine,
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
        self._rows: OrderedDict[int, tuple[str, str, tuple[array, array]]] = OrderedDict()

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
                unavailable.
        """
        path = Path(path)
        if not path.is_file():
            raise CoreError(Code.NOT_FOUND, "The book's search index file does not exist.",
                            details={"path": str(path)},
                            remediation="Rebuild the book package (init --replace).")
        index = cls(path, _Fts5Engine(), [])
        try:
            with index._connection() as conn:
                meta = dict(conn.execute("SELECT key, value FROM meta"))
                if meta.get("format") != _FORMAT:
                    raise sqlite3.DatabaseError("format")
                rows = conn.execute(
                    "SELECT rowid, record_id, ord, heading_path, heading_norm, unit_start, "
                    "unit_end, unit_last, page_labels, body_len + chars_len FROM records "
                    "ORDER BY rowid").fetchall()
                index._records = [
                    _Meta(r[0], r[1], r[2], tuple(json.loads(r[3])), tuple(json.loads(r[4])),
                          r[5], r[6], r[7], tuple(labels), frozenset(map(normalise, labels)))
                    for r in rows
                    for labels in (json.loads(r[8]),)
                ]
                index._by_rowid = {m.rowid: m for m in index._records}
                index._engine = _choose_engine(conn, meta, engine, {r[0]: r[9] for r in rows})
        except sqlite3.DatabaseError:
            index.close()
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
    ) -> SearchResult:
        """Rank the book's records for ``query``.

        Query: the tokens of the normalised query are its terms. A word matches the whole
        word; a CJK run is a phrase of its bigrams (有機交流 matches only that contiguous
        string); a one-character CJK term matches the character anywhere; a double-quoted
        part is a phrase whose words and runs must be adjacent and in order. Query text is
        never index or regex syntax: ``a OR b`` searches the three words a, or, b.

        Ranking: BM25 (higher is better), ties in reading order. By default any term may
        match and records with more terms rank higher; with ``strict`` every term must.

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
        terms = _parse_query(query)
        if not terms:
            raise CoreError(Code.INVALID_ARGUMENT,
                            "The query has no searchable words (only punctuation or symbols).",
                            details={"field": "query", "reason": "no_tokens"},
                            remediation="Search for words or CJK characters.")
        with self._connection() as conn:
            if narrow is None and not boost:
                top, total = self._engine.top(conn, terms, strict, top_k)
            else:
                scores = self._engine.scores(conn, terms, strict)
                if narrow is not None:
                    scores = {rowid: s for rowid, s in scores.items() if rowid in narrow}
                for rowid in boost & scores.keys():
                    scores[rowid] *= HINT_BOOST
                top, total = _best(scores, top_k), len(scores)
            hits = self._hits(conn, top, terms) if top else []
        return SearchResult(
            query=query, normalized_query=norm,
            terms=[Term(text=t.text, kind=t.kind) for t in terms],
            strict=strict, top_k=top_k, hints_applied=applied,
            modes=SearchModes(lexical_engine=self._engine.name),
            total_matches=total, hits=hits,
        )

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
                      ids: list[int]) -> dict[int, tuple[str, str, tuple[array, array]]]:
        return _cache_rows(self, conn, ids)

    def _hits(self, conn: sqlite3.Connection, top: list[tuple[float, int]],
              terms: Sequence[_Term]) -> list[Hit]:
        rows = self._snippet_rows(conn, [rowid for _, rowid in top])
        hits = []
        for neg_score, rowid in top:
            meta = self._by_rowid[rowid]
            text, norm, offmap = rows[rowid]
            snippet, matched = _snippet(text, norm, offmap, terms)
            hits.append(Hit(
                record_id=meta.record_id, order=meta.order, score=-neg_score,
                heading_path=list(meta.heading_path), unit_start=meta.unit_start,
                unit_end=meta.unit_end, page_labels=list(meta.page_labels),
                snippet=snippet, matched_terms=matched, matched_by=["lexical"],
            ))
        return hits


def _cache_rows(index: BookIndex, conn: sqlite3.Connection,
                ids: list[int]) -> dict[int, tuple[str, str, tuple[array, array]]]:
    with index._lock:
        cached = {i: index._rows[i] for i in ids if i in index._rows}
    missing = [i for i in ids if i not in cached]
    if missing:
        fetched = {r[0]: (r[1], r[2], _unpack_runs(r[3])) for r in conn.execute(
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


def _choose_engine(conn: sqlite3.Connection, meta: dict[str, str], engine: EngineChoice,
                   lengths: dict[int, int]) -> _Fts5Engine | _PythonEngine:
    has_fts = meta.get("engine") == ENGINE_FTS5
    if engine == "fts5" or (engine == "auto" and has_fts and fts5_available()):
        if not (has_fts and fts5_available()):
            raise CoreError(Code.CAPABILITY_UNAVAILABLE,
                            "This index or this SQLite library has no FTS5.",
                            remediation="Open with engine='auto'.")
        return _Fts5Engine()
    if engine not in ("auto", "python"):
        raise CoreError(Code.INVALID_ARGUMENT, "Unknown index engine.",
                        details={"engine": engine, "allowed": ["auto", "fts5", "python"]})
    if meta.get("engine") == ENGINE_PYTHON:
        lookup = _stored_lookup()
    else:
        # An FTS5 index read without FTS5: rebuild the postings in memory from the stored
        # normalised text (no second normalisation pass).
        streams = ((rowid, *_columns(_segments(norm)))
                   for rowid, norm in conn.execute("SELECT rowid, norm FROM records"))
        tables = _postings(streams)
        empty: Postings = {}

        def lookup(_conn: sqlite3.Connection, col: str, token: str) -> Postings:
            return tables[col].get(token, empty)

    return _PythonEngine(len(lengths), int(meta.get("tokens", "0")), lengths, lookup)


def _best(scores: dict[int, float], k: int) -> Ranked:
    return heapq.nsmallest(k, zip(map(operator.neg, scores.values()), scores.keys(),
                                  strict=True))


def _stored_lookup() -> Callable[[sqlite3.Connection, str, str], Postings]:
    @functools.lru_cache(maxsize=4096)
    def decoded(blob: bytes) -> Postings:
        return _decode(blob)

    empty: Postings = {}

    def lookup(conn: sqlite3.Connection, col: str, token: str) -> Postings:
        row = conn.execute("SELECT data FROM postings WHERE col = ? AND token = ?",
                           (col, token)).fetchone()
        return decoded(row[0]) if row else empty

    return lookup


# --- snippets -------------------------------------------------------------------------


def _snippet(text: str, norm: str, offmap: tuple[array, array],
             terms: Sequence[_Term]) -> tuple[str, list[str]]:
    """A tidy window of raw text around the first match, matches marked, and the terms found."""
    found = [(term, span) for term in terms
             if (span := _find(norm, term, 0)) is not None]
    n = len(norm)
    if found:
        s0, e0 = min(span for _, span in found)
        ws = max(0, s0 - _LEAD)
        we = min(n, max(ws + SNIPPET_CHARS, e0 + 20))
    else:
        ws, we = 0, min(n, SNIPPET_CHARS)
    spans: list[tuple[int, int]] = []
    for term, first in found:
        span: tuple[int, int] | None = first
        while span is not None and span[0] < we and len(spans) < _MAX_MARKS:
            if span[1] <= we:
                spans.append(span)
            span = _find(norm, term, span[0] + 1)
    starts, deltas = offmap

    def raw(i: int) -> int:
        return i + deltas[bisect.bisect_right(starts, i) - 1]

    pieces = []
    cur = raw(ws)
    stop = raw(we)
    for s, e in _merge(spans):
        rs = raw(s)
        if rs < cur:
            continue
        # End after the last matched character's raw cluster (its combining marks included).
        re_, nxt = raw(e - 1) + 1, raw(e)
        while re_ < nxt and unicodedata.combining(text[re_]):
            re_ += 1
        pieces += [text[cur:rs], _MARK_OPEN, text[rs:re_], _MARK_CLOSE]
        cur = re_
    pieces.append(text[cur:max(cur, stop)])
    joined = "".join(pieces)
    table, hidden = _hidden_chars(), _hidden_set()
    body = _tidy(joined if hidden.isdisjoint(joined) else joined.translate(table))
    if ws > 0:
        body = "…" + body
    if stop < len(text) and not text[stop:].isspace():
        body += "…"
    return body, [term.text for term, _ in found]


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for s, e in sorted(spans):
        if out and s <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def _tidy(s: str) -> str:
    """Whitespace collapsed, none left between two CJK characters; marks become « »."""
    s = " ".join(s.split())
    if " " in s and not s.isascii():
        s = _WIDE_SPACE.sub(_space_between, s)
    return s.replace(_MARK_OPEN, "«").replace(_MARK_CLOSE, "»")


# A space between two characters at or above U+1100, where CJK starts: a candidate to drop.
_WIDE_SPACE = re.compile("(?<=[\u1100-\U0010ffff]) (?=[\u1100-\U0010ffff])")


def _space_between(m: re.Match[str]) -> str:
    text, i = m.string, m.start()
    before = text[:i].rstrip(_MARKS)[-1:]
    after = text[i + 1:].lstrip(_MARKS)[:1]
    return "" if before and after and is_cjk(before) and is_cjk(after) else " "
