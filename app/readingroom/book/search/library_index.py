"""The library index: one SQLite file over every registered book, kept current book by book.

Searching a whole library through each book's own index cannot rank it: each book's BM25
weighs a word by how rare it is *in that book*, so the scores of two books do not compare,
and 300 index files per query cost far more than the 50 ms a query may take (measured:
``bench/book_library_search.py``). This file holds one inverted index over the records of
every book, with the statistics of the whole library, built from the books' own index files
(their records and normalised text: nothing is read from the source files again) and the
tokens of :mod:`.tokenize`, exactly as each book's index has them.

Layout (``DATA/library/search.sqlite``, WAL, written under ``DATA/library/search.lock``):

- ``books``: per book, the version indexed and its state (``ok``; ``damaged`` or
  ``unreadable`` when it could not be indexed, with the problem), its *key*, and per record
  the length in tokens and flags (contents, first record under its heading);
- ``records``: the records of every live key (id ``key << 20 | n``, n its place in reading
  order): record id, headings, units, page labels, raw and normalised text, offset map, and
  for the second ranking pass its body tokens and its own heading's tokens (joined by
  :data:`SEP`: splitting them is far cheaper than tokenising the text at every query);
- ``postings``: per *segment*, column and token, the record ids (int64), frequencies (uint16)
  and positions (uint32) of the token, little-endian.

Every (re)indexed book gets a new key, and every batch of books a new segment; a key replaced
or removed is dead at once (searches leave it out) and its postings go when its segment is
merged. Segments are merged as in the logarithmic method: a new segment has level 0, and
:data:`MERGE_FACTOR` segments of one level become one segment of the next, so a library of
*n* books has at most ``(MERGE_FACTOR - 1) * log(n)`` segments and a token is a handful of rows.
A segment whose records are half dead is rewritten on its own.

Writers (the CLI after ``init``/``remove``, a one-shot ``search --all``, the MCP server's
catch-up thread) hold the lock; readers never wait for it. Each batch and each merge is one
transaction, so a reader sees a book either wholly at its old version or wholly at its new.
"""

from __future__ import annotations

import bisect
import contextlib
import heapq
import itertools
import json
import logging
import os
import sqlite3
import sys
import threading
import time
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from filelock import FileLock, Timeout

from ...core.envelope import utc_now_iso
from ...core.errors import Code, CoreError
from ..package import Damage, Registry, check_book_id
from .index import INDEX_FORMAT as _BOOK_INDEX_FORMAT  # the per-book format this reads
from .tokenize import heading_tokens, index_columns, split_runs, token_stream

__all__ = [
    "BATCH_BOOKS",
    "COLUMNS",
    "FLAG_CONTENTS",
    "FLAG_FIRST",
    "FORMAT",
    "LOCAL_BITS",
    "MERGE_FACTOR",
    "SEP",
    "BookScanner",
    "BookState",
    "CatchUp",
    "IndexedBook",
    "LibraryIndex",
    "UpdateReport",
    "library_paths",
]

log = logging.getLogger("readingroom.book.search.library_index")

FORMAT = "1"
"""Format of the library index file; another format is rebuilt from the books."""
COLUMNS = {"body": 0, "chars": 1, "head": 2}
"""Column ids in ``postings`` (the columns of each book's index)."""
LOCAL_BITS = 20
"""A record id is ``key << LOCAL_BITS | place``: at most 2**20 records per book."""
MAX_KEY = 1 << 22
MAX_POSITION = (1 << 21) - 1
MERGE_FACTOR = 8
"""Segments of one level merged into one of the next."""
BATCH_BOOKS = 16
"""Most books one segment is written with."""
BATCH_SECONDS = 2.0
"""A batch is written once its books took this long to read (so progress shows)."""
PURGE_SHARE = 0.5
"""A segment with this share of dead records is rewritten."""
FLAG_CONTENTS = 1
FLAG_FIRST = 2
SEP = "\x1f"
"""Joins a record's stored tokens (a control character: never inside a token)."""

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE books (
    book_id TEXT PRIMARY KEY,
    version INTEGER NOT NULL,
    state TEXT NOT NULL,
    problem TEXT,
    key INTEGER,
    records INTEGER NOT NULL,
    blind INTEGER NOT NULL,
    lengths BLOB,
    flags BLOB,
    indexed TEXT NOT NULL
);
CREATE TABLE keys (
    key INTEGER PRIMARY KEY, seg INTEGER NOT NULL, book_id TEXT NOT NULL,
    docs INTEGER NOT NULL, live INTEGER NOT NULL
);
CREATE INDEX keys_seg ON keys (seg);
CREATE TABLE segments (
    seg INTEGER PRIMARY KEY, level INTEGER NOT NULL, lo_key INTEGER NOT NULL,
    docs INTEGER NOT NULL, dead INTEGER NOT NULL
);
CREATE TABLE postings (
    seg INTEGER NOT NULL, col INTEGER NOT NULL, token TEXT NOT NULL,
    docs BLOB NOT NULL, tfs BLOB NOT NULL, pos BLOB NOT NULL,
    PRIMARY KEY (seg, col, token)
) WITHOUT ROWID;
CREATE TABLE records (
    id INTEGER PRIMARY KEY, record_id TEXT NOT NULL, ord INTEGER NOT NULL,
    heading_path TEXT NOT NULL, heading_norm TEXT NOT NULL, unit_start INTEGER NOT NULL,
    unit_end INTEGER NOT NULL, page_labels TEXT NOT NULL, text TEXT NOT NULL,
    norm TEXT NOT NULL, offmap BLOB NOT NULL, stream TEXT NOT NULL, own_head TEXT NOT NULL
);
"""

IndexState = Literal["ok", "damaged", "unreadable"]


def library_paths(data_dir: Path) -> tuple[Path, Path]:
    """The library index file and its writers' lock under a data folder."""
    folder = Path(data_dir) / "library"
    return folder / "search.sqlite", folder / "search.lock"


def _le(arr: array) -> bytes:
    if sys.byteorder == "big":
        arr = array(arr.typecode, arr)
        arr.byteswap()
    return arr.tobytes()


def _from_le(typecode: str, blob: bytes) -> array:
    arr = array(typecode)
    arr.frombytes(blob)
    if sys.byteorder == "big":
        arr.byteswap()
    return arr


# --------------------------------------------------------------------------- the registry


@dataclass(frozen=True)
class BookState:
    """What the registry says of one book right now."""

    book_id: str
    version: int | None
    """The published version; None when none is usable (first build, or CURRENT damaged)."""
    building: int = 0
    """Builds of it in progress (a live process owns them)."""
    damage: Damage | None = None
    """Why ``CURRENT`` names no usable version, when it does not."""


class BookScanner:
    """The registry's books and their states, read cheaply enough for every query.

    A book's folder changes (its modification time) whenever ``CURRENT`` is replaced, a
    version is published or a build starts or ends; a folder unchanged since the last look is
    not read again, unless it changed less than :data:`RECHECK_S` before that look (file
    systems with coarse times) or a build was in progress (a killed build's process is
    checked each time).
    """

    RECHECK_S = 2.0

    def __init__(self, registry: Registry, *, clock: Callable[[], float] = time.time) -> None:
        self.registry = registry
        self._clock = clock
        self._cache: dict[str, tuple[int, BookState]] = {}
        self._lock = threading.Lock()

    def scan(self, *, fresh: bool = False) -> dict[str, BookState]:
        """Every book folder with a published version, a build in progress or a damaged
        ``CURRENT``, by id."""
        books_dir = self.registry.books_dir
        out: dict[str, BookState] = {}
        now_ns = int(self._clock() * 1e9)
        seen: dict[str, tuple[int, BookState]] = {}
        try:
            entries = list(os.scandir(books_dir))
        except OSError:
            entries = []
        with self._lock:
            cache = dict(self._cache)
        for entry in entries:
            name = entry.name
            if name.startswith("."):
                continue
            try:
                check_book_id(name)
                if not entry.is_dir():
                    continue
                mtime = entry.stat().st_mtime_ns
            except (CoreError, OSError):
                continue
            cached = cache.get(name)
            if not fresh and cached is not None and cached[0] == mtime:
                state = cached[1]
                if state.building:
                    state = self._read(name)
            else:
                state = self._read(name)
            # Trusted next time only if the folder had not changed just before this look.
            if now_ns - mtime > self.RECHECK_S * 1e9:
                seen[name] = (mtime, state)
            if state.version is not None or state.building or state.damage is not None:
                out[name] = state
        with self._lock:
            self._cache = seen
        return out

    def _read(self, book_id: str) -> BookState:
        reg = self.registry
        version = reg.current_version(book_id)
        building = reg.builds_in_progress(book_id)
        damage = None
        if version is None and reg.is_registered(book_id):
            broken = reg.pointer_damage(book_id)
            damage = broken[1] if broken else Damage("CURRENT", "names no usable version")
        return BookState(book_id, version, building, damage)


# --------------------------------------------------------------------------- the index


@dataclass(frozen=True)
class IndexedBook:
    """One book as the library index holds it."""

    book_id: str
    version: int
    state: IndexState
    problem: str | None
    key: int | None
    records: int
    blind: int = 0
    """Units (pages) of the book without a text layer: their text cannot be searched."""


@dataclass
class UpdateReport:
    """What one :meth:`LibraryIndex.update` did."""

    indexed: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    removed: list[str] = field(default_factory=list)
    merges: int = 0
    busy: bool = False
    """Another process held the lock: nothing was done."""
    left: int = 0
    """Books still to index when it stopped early."""
    seconds: float = 0.0


@dataclass
class _BookRows:
    book_id: str
    version: int
    records: list[tuple[Any, ...]]
    blind: int
    lengths: array
    flags: array
    postings: list[dict[str, tuple[list[int], list[int], list[int]]]]


@dataclass
class _Failed:
    book_id: str
    version: int
    state: IndexState
    problem: str


class LibraryIndex:
    """The library index of one data folder: what it holds, and bringing it up to date."""

    def __init__(self, registry: Registry, *, scanner: BookScanner | None = None) -> None:
        self.registry = registry
        self.path, self.lock_path = library_paths(registry.data_dir)
        self.scanner = scanner or BookScanner(registry)

    def exists(self) -> bool:
        """Whether the index file has been made (library search was used here)."""
        return self.path.is_file()

    # ------------------------------------------------------------------ reading
    def connect(self) -> sqlite3.Connection:
        """A connection for reading (autocommit; open a transaction to read a snapshot)."""
        conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None,
                               timeout=10.0)
        conn.execute("PRAGMA cache_size=-16000")
        return conn

    @staticmethod
    def format_of(conn: sqlite3.Connection) -> str | None:
        """The file's format, or None when it is not a library index."""
        try:
            row = conn.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
        except sqlite3.DatabaseError:
            return None
        return row[0] if row else None

    @staticmethod
    def indexed(conn: sqlite3.Connection) -> dict[str, IndexedBook]:
        """Every book the index holds, by id."""
        return {r[0]: IndexedBook(*r) for r in conn.execute(
            "SELECT book_id, version, state, problem, key, records, blind FROM books")}

    @staticmethod
    def pending(states: Mapping[str, BookState], indexed: Mapping[str, IndexedBook], *,
                retry_failed: bool = False) -> tuple[list[str], list[str]]:
        """The books to (re)index and the books to drop, given the registry and the index."""
        todo = []
        for book_id, state in sorted(states.items()):
            if state.version is None or state.building:
                continue  # a build in progress is indexed once it is published
            have = indexed.get(book_id)
            if have is None or have.version != state.version or (
                    retry_failed and have.state != "ok"):
                todo.append(book_id)
        drop = sorted(b for b in indexed if states.get(b) is None
                      or states[b].version is None)
        return todo, drop

    # ------------------------------------------------------------------ writing
    def update(self, *, only: Iterable[str] | None = None, retry_failed: bool = False,
               progress: Callable[[str, int, int], None] | None = None,
               lock_timeout: float = 0.0, stop: threading.Event | None = None) -> UpdateReport:
        """Bring the index up to date with the registry (or only the books ``only``).

        Creates the file when missing, and rebuilds it when it is of another format or
        unreadable (it is derived from the books). ``progress(what, done, total)`` is told
        each book; ``stop`` ends the work after the current batch. Returns ``busy`` without
        waiting longer than ``lock_timeout`` when another process holds the lock.
        """
        began = time.monotonic()
        report = UpdateReport()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(self.lock_path), timeout=lock_timeout)
        try:
            lock.acquire()
        except Timeout:
            report.busy = True
            return report
        try:
            conn = self._open_for_writing()
            try:
                self._update(conn, only, retry_failed, progress, stop, report)
            finally:
                conn.close()
        finally:
            lock.release()
        report.seconds = round(time.monotonic() - began, 3)
        return report

    def _open_for_writing(self) -> sqlite3.Connection:
        for attempt in (1, 2):
            fresh = not self.path.exists()
            conn = sqlite3.connect(self.path, isolation_level=None, timeout=30.0)
            try:
                if fresh:
                    conn.execute("PRAGMA journal_mode=WAL")
                    conn.executescript(_SCHEMA)
                    conn.executemany("INSERT INTO meta VALUES (?, ?)", [
                        ("format", FORMAT), ("generation", "1"), ("next_key", "1")])
                elif self.format_of(conn) != FORMAT:
                    raise sqlite3.DatabaseError("another format")
                conn.execute("PRAGMA synchronous=NORMAL")
                conn.execute("PRAGMA cache_size=-32000")
                return conn
            except sqlite3.DatabaseError:
                conn.close()
                if attempt == 2:
                    raise
                log.warning("library index %s is unreadable or of another format; "
                            "rebuilding it from the books", self.path)
                for suffix in ("", "-wal", "-shm", "-journal"):
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(f"{self.path}{suffix}")
        raise AssertionError("unreachable")

    def _update(self, conn: sqlite3.Connection, only: Iterable[str] | None, retry_failed: bool,
                progress: Callable[[str, int, int], None] | None,
                stop: threading.Event | None, report: UpdateReport) -> None:
        states = self.scanner.scan(fresh=True)
        todo, drop = self.pending(states, self.indexed(conn), retry_failed=retry_failed)
        if only is not None:
            wanted = set(only)
            todo = [b for b in todo if b in wanted]
            drop = [b for b in drop if b in wanted]
        if drop:
            with _transaction(conn):
                for book_id in drop:
                    self._kill(conn, book_id)
                    conn.execute("DELETE FROM books WHERE book_id = ?", (book_id,))
                _bump(conn)
            report.removed = drop
        batch: list[_BookRows | _Failed] = []
        batch_began = time.monotonic()
        for n, book_id in enumerate(todo, start=1):
            state = states[book_id]
            assert state.version is not None
            batch.append(self._read_book(book_id, state.version))
            if progress is not None:
                progress("books indexed", n, len(todo))
            if len(batch) >= BATCH_BOOKS or time.monotonic() - batch_began > BATCH_SECONDS:
                self._write_batch(conn, batch, report)
                batch, batch_began = [], time.monotonic()
                if stop is not None and stop.is_set():
                    report.left = len(todo) - n
                    break
        if batch:
            self._write_batch(conn, batch, report)
        report.merges += self._merge_all(conn, stop)

    # ------------------------------------------------------------------ one book
    def _read_book(self, book_id: str, version: int) -> _BookRows | _Failed:
        """The rows of one book's current version, read from its own index file."""
        try:
            pkg = self.registry.get(book_id)
            version = pkg.version
            manifest = pkg.manifest
            damage = pkg.check(manifest=manifest)
            if damage:
                return _Failed(book_id, version, "damaged",
                               f"{damage[0].file} {damage[0].problem}")
        except CoreError as err:
            if err.code == Code.BOOK_DAMAGED:
                return _Failed(book_id, version, "damaged",
                               f"{err.details.get('file', '')} "
                               f"{err.details.get('problem', err.message)}".strip())
            return _Failed(book_id, version, "unreadable", err.message)
        path = pkg.file("index.sqlite")
        try:
            src = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
            try:
                fmt = dict(src.execute("SELECT key, value FROM meta")).get("format")
                if fmt != _BOOK_INDEX_FORMAT:
                    return _Failed(book_id, version, "unreadable",
                                   f"its search index has format {fmt}, this book-agent reads "
                                   f"format {_BOOK_INDEX_FORMAT} (built by an older "
                                   "book-agent)")
                rows = src.execute(
                    "SELECT record_id, ord, heading_path, heading_norm, unit_start, unit_end, "
                    "page_labels, text, norm, offmap, role FROM records ORDER BY rowid"
                ).fetchall()
            finally:
                src.close()
        except sqlite3.DatabaseError as exc:
            return _Failed(book_id, version, "unreadable",
                           f"its search index cannot be read ({exc})")
        if len(rows) >= 1 << LOCAL_BITS:
            return _Failed(book_id, version, "unreadable",
                           f"it has {len(rows):,} records; the library index holds at most "
                           f"{(1 << LOCAL_BITS) - 1:,} per book")
        blind = len((manifest.get("capabilities") or {}).get("no_text_layer_units") or ())
        try:
            return _tokenised(book_id, version, rows, blind)
        except (ValueError, TypeError) as exc:
            return _Failed(book_id, version, "unreadable",
                           f"its search index holds a record book-agent did not write ({exc})")

    def _kill(self, conn: sqlite3.Connection, book_id: str) -> None:
        """Make the book's live key dead (its records go now, its postings at a merge)."""
        row = conn.execute("SELECT key FROM books WHERE book_id = ?", (book_id,)).fetchone()
        if row is None or row[0] is None:
            return
        key = row[0]
        found = conn.execute("SELECT seg, docs FROM keys WHERE key = ? AND live = 1",
                             (key,)).fetchone()
        if found:
            conn.execute("UPDATE keys SET live = 0 WHERE key = ?", (key,))
            conn.execute("UPDATE segments SET dead = dead + ? WHERE seg = ?",
                         (found[1], found[0]))
        conn.execute("DELETE FROM records WHERE id BETWEEN ? AND ?",
                     (key << LOCAL_BITS, ((key + 1) << LOCAL_BITS) - 1))

    def _write_batch(self, conn: sqlite3.Connection, batch: Sequence[_BookRows | _Failed],
                     report: UpdateReport) -> None:
        """One transaction: the batch's books as one new segment, failures recorded."""
        now = utc_now_iso()
        with _transaction(conn):
            next_key = int(_meta(conn, "next_key"))
            seg = (conn.execute("SELECT max(seg) FROM segments").fetchone()[0] or 0) + 1
            merged: list[dict[str, tuple[array, array, array]]] = [{}, {}, {}]
            docs = 0
            lo_key = next_key
            for item in batch:
                self._kill(conn, item.book_id)
                if isinstance(item, _Failed):
                    conn.execute("INSERT OR REPLACE INTO books VALUES (?, ?, ?, ?, NULL, 0, 0, "
                                 "NULL, NULL, ?)",
                                 (item.book_id, item.version, item.state, item.problem, now))
                    report.failed[item.book_id] = f"{item.state}: {item.problem}"
                    continue
                key = next_key
                if key >= MAX_KEY:
                    raise CoreError(Code.INTERNAL_ERROR, "The library index has run out of "
                                    "keys.", remediation="Delete DATA/library; the next "
                                    "library search rebuilds it.")
                next_key += 1
                base = key << LOCAL_BITS
                conn.executemany(
                    f"INSERT INTO records VALUES ({','.join('?' * 13)})",
                    ((base + n, *row) for n, row in enumerate(item.records)))
                conn.execute("INSERT OR REPLACE INTO books VALUES (?, ?, 'ok', NULL, ?, ?, ?, "
                             "?, ?, ?)", (item.book_id, item.version, key, len(item.records),
                                          item.blind, _le(item.lengths), item.flags.tobytes(),
                                          now))
                conn.execute("INSERT INTO keys VALUES (?, ?, ?, ?, 1)",
                             (key, seg, item.book_id, len(item.records)))
                docs += len(item.records)
                for col, table in enumerate(item.postings):
                    into = merged[col]
                    for token, (locals_, tfs, positions) in table.items():
                        have = into.get(token)
                        if have is None:
                            into[token] = have = (array("q"), array("H"), array("I"))
                        have[0].extend([base + n for n in locals_])
                        have[1].extend(tfs)
                        have[2].extend(positions)
                report.indexed.append(item.book_id)
            if docs:
                conn.execute("INSERT INTO segments VALUES (?, 0, ?, ?, 0)", (seg, lo_key, docs))
                conn.executemany("INSERT INTO postings VALUES (?, ?, ?, ?, ?, ?)", (
                    (seg, col, token, _le(d), _le(t), _le(p))
                    for col, table in enumerate(merged)
                    for token, (d, t, p) in sorted(table.items())))
            conn.execute("UPDATE meta SET value = ? WHERE key = 'next_key'", (str(next_key),))
            _bump(conn)

    # ------------------------------------------------------------------ merging
    def _merge_all(self, conn: sqlite3.Connection, stop: threading.Event | None) -> int:
        merges = 0
        while not (stop is not None and stop.is_set()):
            plan = _merge_plan(conn.execute(
                "SELECT seg, level, docs, dead FROM segments ORDER BY lo_key").fetchall())
            if plan is None:
                return merges
            segs, level = plan
            self._merge(conn, segs, level)
            merges += 1
        return merges

    def _merge(self, conn: sqlite3.Connection, segs: list[int], level: int) -> None:
        """Segments ``segs`` (consecutive, oldest first) as one of ``level``, dead keys out."""
        marks = ",".join("?" * len(segs))
        with _transaction(conn):
            dead = sorted(k for (k,) in conn.execute(
                f"SELECT key FROM keys WHERE seg IN ({marks}) AND live = 0", segs))
            live = conn.execute(f"SELECT key, docs FROM keys WHERE seg IN ({marks}) AND live = 1 "
                                "ORDER BY key", segs).fetchall()
            new = (conn.execute("SELECT max(seg) FROM segments").fetchone()[0] or 0) + 1
            if live:
                # A second connection streams the old rows: this one is writing the table.
                reader = sqlite3.connect(self.path, isolation_level=None, timeout=30.0)
                try:
                    reader.execute("PRAGMA cache_size=-16000")
                    streams = [reader.execute("SELECT col, token, docs, tfs, pos FROM postings "
                                              "WHERE seg = ? ORDER BY col, token", (s,))
                               for s in segs]
                    merged = heapq.merge(*streams, key=lambda r: (r[0], r[1]))
                    rows = ((new, col, token, *_joined(list(group), dead))
                            for (col, token), group in itertools.groupby(
                                merged, key=lambda r: (r[0], r[1])))
                    conn.executemany("INSERT INTO postings VALUES (?, ?, ?, ?, ?, ?)",
                                     (r for r in rows if r[3]))
                finally:
                    reader.close()
                conn.execute("INSERT INTO segments VALUES (?, ?, ?, ?, 0)",
                             (new, level, live[0][0], sum(d for _k, d in live)))
                conn.execute(f"UPDATE keys SET seg = ? WHERE seg IN ({marks}) AND live = 1",
                             (new, *segs))
            conn.execute(f"DELETE FROM keys WHERE seg IN ({marks}) AND live = 0", segs)
            for s in segs:
                conn.execute("DELETE FROM postings WHERE seg = ?", (s,))
            conn.execute(f"DELETE FROM segments WHERE seg IN ({marks})", segs)
            _bump(conn)

    def drop_file(self) -> None:
        """Delete the index (it is rebuilt by the next library search)."""
        with FileLock(str(self.lock_path), timeout=30.0):
            for suffix in ("", "-wal", "-shm", "-journal"):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(f"{self.path}{suffix}")


class CatchUp:
    """At most one background :meth:`LibraryIndex.update` at a time in this process.

    :meth:`start` begins a pass unless one runs, and returns the event set when the running
    pass ends; a pass waits up to :data:`LOCK_WAIT_S` for another process's writer.
    """

    LOCK_WAIT_S = 30.0

    def __init__(self, index: LibraryIndex) -> None:
        self.index = index
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._done = threading.Event()
        self._stop = threading.Event()
        self.last: UpdateReport | None = None
        self.error: str | None = None

    def start(self) -> threading.Event:
        """Start a pass (unless one is running); the event is set when it ends."""
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._done = threading.Event()
                self._thread = threading.Thread(target=self._run, args=(self._done,),
                                                name="library-index", daemon=True)
                self._thread.start()
            return self._done

    def running(self) -> bool:
        """Whether a pass is running now."""
        with self._lock:
            return self._thread is not None and self._thread.is_alive()

    def stop(self) -> None:
        """Ask a running pass to end after its current batch."""
        self._stop.set()

    def _run(self, done: threading.Event) -> None:
        try:
            self.last = self.index.update(lock_timeout=self.LOCK_WAIT_S, stop=self._stop)
            self.error = None
        except Exception as exc:  # a background pass must never die silently
            self.error = f"{type(exc).__name__}: {exc}"
            log.warning("updating the library index failed: %s", self.error)
        finally:
            done.set()


def _merge_plan(segments: Sequence[tuple[int, int, int, int]]
                ) -> tuple[list[int], int] | None:
    """The next merge: ``(segment ids, level of the result)``, or None.

    ``segments``: ``(seg, level, docs, dead)`` oldest first. A wholly dead segment goes; one
    at least :data:`PURGE_SHARE` dead is rewritten alone; then the oldest run of
    :data:`MERGE_FACTOR` consecutive segments of one level becomes one of the next level.
    """
    for seg, level, docs, dead in segments:
        if docs and dead >= docs:
            return [seg], level
        if docs and dead >= PURGE_SHARE * docs:
            return [seg], level
    for level, run in itertools.groupby(segments, key=lambda s: s[1]):
        found = list(run)
        if len(found) >= MERGE_FACTOR:
            return [s[0] for s in found[:MERGE_FACTOR]], level + 1
    return None


def _joined(group: list[tuple[Any, ...]], dead: Sequence[int]) -> tuple[bytes, bytes, bytes]:
    """One token's rows of several segments (oldest first) as one, dead keys' records out."""
    if not dead:
        return (b"".join(r[2] for r in group), b"".join(r[3] for r in group),
                b"".join(r[4] for r in group))
    docs_out, tfs_out, pos_out = array("q"), array("H"), array("I")
    for _col, _token, d, t, p in group:
        docs, tfs, pos = _from_le("q", d), _from_le("H", t), _from_le("I", p)
        lo_key, hi_key = docs[0] >> LOCAL_BITS, docs[-1] >> LOCAL_BITS
        gone = [k for k in dead[bisect.bisect_left(dead, lo_key):] if k <= hi_key]
        if not gone:
            docs_out.extend(docs)
            tfs_out.extend(tfs)
            pos_out.extend(pos)
            continue
        start = at = 0
        for k in gone:
            cut = bisect.bisect_left(docs, k << LOCAL_BITS)
            end = bisect.bisect_left(docs, (k + 1) << LOCAL_BITS)
            if cut == end:
                continue
            keep = sum(tfs[start:cut])
            docs_out.extend(docs[start:cut])
            tfs_out.extend(tfs[start:cut])
            pos_out.extend(pos[at:at + keep])
            at += keep + sum(tfs[cut:end])
            start = end
        docs_out.extend(docs[start:])
        tfs_out.extend(tfs[start:])
        pos_out.extend(pos[at:])
    return _le(docs_out), _le(tfs_out), _le(pos_out)


def _tokenised(book_id: str, version: int, rows: list[tuple[Any, ...]], blind: int
               ) -> _BookRows:
    """A book's records with their tokens: the postings of each column, by record place."""
    postings: list[dict[str, tuple[list[int], list[int], list[int]]]] = [{}, {}, {}]
    lengths = array("f")
    flags = array("B")
    records = []
    previous: list[str] | None = None
    for n, (record_id, order, heading_path, heading_norm, unit_start, unit_end, labels,
            text, norm, offmap, role) in enumerate(rows):
        if not isinstance(norm, str) or not isinstance(text, str):
            raise ValueError("a record without text")
        segments = split_runs(norm)
        body, chars = index_columns(segments, norm)
        headings = json.loads(heading_norm)
        head = heading_tokens(headings)
        for col, tokens in ((0, body), (1, chars), (2, head)):
            _add_postings(postings[col], n, tokens, positions=col != 1)
        lengths.append(float(len(body) + len(chars) + len(head)))
        flags.append((FLAG_CONTENTS if role == "contents" else 0)
                     | (FLAG_FIRST if headings != previous else 0))
        previous = headings
        # What the rerank reads of a pool record (as a book's index derives it at open).
        own = headings[-1:]
        own_head = set(heading_tokens(own)) | {
            ch for h in own for cjk, run in split_runs(h) if cjk for ch in run}
        records.append((record_id, order, heading_path, heading_norm, unit_start, unit_end,
                        labels, text, norm, offmap,
                        SEP.join(token_stream(segments, breaks=True)),
                        SEP.join(sorted(own_head))))
    return _BookRows(book_id, version, records, blind, lengths, flags, postings)


def _add_postings(table: dict[str, tuple[list[int], list[int], list[int]]], n: int,
                  tokens: Sequence[str], *, positions: bool) -> None:
    local: dict[str, list[int]] = {}
    for pos, tok in enumerate(tokens):
        seen = local.get(tok)
        if seen is None:
            local[tok] = [pos]
        else:
            seen.append(pos)
    huge = len(tokens) > MAX_POSITION  # never in practice: records are a few thousand chars
    for tok, where in local.items():
        entry = table.get(tok)
        if entry is None:
            table[tok] = entry = ([], [], [])
        if huge:
            where = [min(p, MAX_POSITION) for p in where[:0xFFFF]]
        entry[0].append(n)
        entry[1].append(len(where))
        if positions:
            entry[2].extend(where)


def _meta(conn: sqlite3.Connection, key: str) -> str:
    return conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()[0]


def _bump(conn: sqlite3.Connection) -> None:
    conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'")


@contextlib.contextmanager
def _transaction(conn: sqlite3.Connection) -> Iterator[None]:
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
