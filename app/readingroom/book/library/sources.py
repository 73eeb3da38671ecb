"""What ``book-agent add`` reads: candidates (a file with where it came from), folder scans,
derived ids, the hash cache, read-only snapshots of a library's SQLite database, and the
library's own small state in ``DATA/library/``.

A *candidate* is one file that would become a book: its path, its *origin* (``kind`` folder,
zotero or calibre, and a ``key`` that names it stably inside that source: the file's absolute
path, ``zotero:<library>:<attachment key>``, ``calibre:<library uuid>:<book id>``), the
library's metadata and reference when it came from one, and a title to derive its id from.

``DATA/library/`` holds ``sources.json`` (every source ``add`` was given, for ``sync``),
``hashes.json`` (SHA-256 per path, size and modification time, so an unchanged library is not
read again) and ``add.lock`` (one ``add`` at a time). All three are written atomically; losing
one costs time, never a book.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import sqlite3
import tempfile
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from ...core.errors import Code, CoreError
from ...core.files import write_atomically
from ..package import WINDOWS_RESERVED_NAMES, book_id_from_name, check_book_id

__all__ = [
    "BOOK_SUFFIXES",
    "Candidate",
    "HashCache",
    "LibraryStore",
    "Skipped",
    "SourceSpec",
    "derive_id",
    "folder_key",
    "scan_paths",
    "sqlite_snapshot",
]

BOOK_SUFFIXES = frozenset({".pdf", ".epub", ".md", ".markdown"})
"""What a folder scan picks up (a file named on the command line is tried whatever its name)."""
_ID_CHARS = 48


@dataclass(frozen=True)
class Candidate:
    """One file that would become a book, and where it came from."""

    path: Path
    origin: dict[str, Any]
    """``kind``, ``key`` and the source's own identifiers (always JSON-ready)."""
    title_hint: str
    """What the id is derived from: the library's title, else the file name."""
    metadata: dict[str, Any] | None = None
    """The library's metadata of the item (None for a file from a folder)."""
    reference: dict[str, Any] | None = None
    """The library's CSL-JSON item (None: the file's own metadata makes the reference)."""

    @property
    def key(self) -> str:
        """The origin key (stable name of the item within its source)."""
        return str(self.origin["key"])

    def library(self) -> dict[str, Any]:
        """What the package records of its origin (``manifest.library``)."""
        out: dict[str, Any] = {"origin": self.origin}
        if self.metadata is not None:
            out["metadata"] = self.metadata
        if self.reference is not None:
            out["reference"] = self.reference
        return out


@dataclass(frozen=True)
class Skipped:
    """An item of a source that is not a book file, or whose file is missing (reported)."""

    source: str
    where: str
    reason: str
    title: str | None = None

    def to_data(self) -> dict[str, Any]:
        """JSON-ready form."""
        out = {"source": self.source, "where": self.where, "reason": self.reason}
        if self.title:
            out["title"] = self.title
        return out


@dataclass(frozen=True)
class SourceSpec:
    """One source given to ``add`` (remembered for ``sync``)."""

    kind: str
    """``folder``, ``zotero`` or ``calibre``."""
    path: str
    recursive: bool = False
    collection: str | None = None
    tag: str | None = None
    attachments_base: str | None = None
    formats: tuple[str, ...] = ()

    def ident(self) -> str:
        """What makes two specs the same source (a later ``add`` replaces its options)."""
        return f"{self.kind}:{os.path.normcase(self.path)}:{self.collection}:{self.tag}"

    def to_data(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {k: (list(v) if isinstance(v, tuple) else v)
                for k, v in self.__dict__.items() if v not in (None, (), False)}

    @classmethod
    def from_data(cls, data: Any) -> SourceSpec | None:
        """A spec from ``sources.json``; None for an entry that is not one."""
        if not isinstance(data, dict) or data.get("kind") not in ("folder", "zotero",
                                                                  "calibre"):
            return None
        if not isinstance(data.get("path"), str):
            return None
        formats = data.get("formats") or ()
        return cls(kind=data["kind"], path=data["path"], recursive=bool(data.get("recursive")),
                   collection=data.get("collection") if isinstance(data.get("collection"), str)
                   else None, tag=data.get("tag") if isinstance(data.get("tag"), str) else None,
                   attachments_base=data.get("attachments_base")
                   if isinstance(data.get("attachments_base"), str) else None,
                   formats=tuple(f for f in formats if isinstance(f, str)))


# --------------------------------------------------------------------------- folders


def folder_key(path: Path) -> str:
    """The origin key of a file from a folder: its absolute path, case-folded where the file
    system is (Windows)."""
    return os.path.normcase(os.path.abspath(path))


def _hidden(name: str) -> bool:
    return name.startswith(".")


def scan_paths(paths: Sequence[Path], *, recursive: bool,
               exclude: Path | None = None) -> tuple[list[Candidate], list[Skipped]]:
    """Every PDF, EPUB and Markdown file under ``paths`` (a folder: its files, with
    ``recursive`` every level below; a file: itself, whatever its suffix).

    Hidden files and folders (a leading ``.``) are left out, and so is ``exclude`` (the data
    folder, if it lies inside). Folder symlinks are not followed (no loops); file symlinks are.
    A path that does not exist is reported, not fatal.
    """
    found: dict[str, Candidate] = {}
    skipped: list[Skipped] = []
    excluded = folder_key(exclude) if exclude is not None else None

    def take(file: Path, root: Path) -> None:
        key = folder_key(file)
        if key in found:
            return
        found[key] = Candidate(
            path=Path(os.path.abspath(file)),
            origin={"kind": "folder", "key": key, "path": os.path.abspath(file),
                    "root": os.path.abspath(root)},
            title_hint=file.name)

    for given in paths:
        try:
            is_dir, is_file = given.is_dir(), given.is_file()
        except OSError:
            is_dir = is_file = False
        if is_file:
            take(given, given.parent)
            continue
        if not is_dir:
            skipped.append(Skipped("folder", str(given), "does not exist"))
            continue
        for top, dirs, files in os.walk(given):
            dirs[:] = sorted(d for d in dirs if not _hidden(d) and (
                excluded is None or folder_key(Path(top) / d) != excluded)) if recursive else []
            for name in sorted(files):
                if _hidden(name) or Path(name).suffix.lower() not in BOOK_SUFFIXES:
                    continue
                file = Path(top) / name
                if file.is_file():
                    take(file, given)
    return sorted(found.values(), key=lambda c: c.key), skipped


# --------------------------------------------------------------------------- ids


_TRANSLIT = str.maketrans({"ß": "ss", "æ": "ae", "Æ": "ae", "œ": "oe", "Œ": "oe", "ø": "o",
                           "Ø": "o", "ł": "l", "Ł": "l", "đ": "d", "Đ": "d", "þ": "th",
                           "Þ": "th", "'": "", "’": ""})


def _slug(text: str) -> str:
    ascii_ = unicodedata.normalize("NFKD", text.translate(_TRANSLIT)).encode(
        "ascii", "ignore").decode().lower()
    return re.sub(r"[^a-z0-9]+", "-", ascii_).strip("-")


def derive_id(hint: str, taken: Iterable[str] | set[str], *, from_title: bool) -> str:
    """A readable book id (ASCII ``a-z0-9-``) from a title or a file name, not in ``taken``.

    A title is cut at a word boundary to at most 48 characters; a file name keeps its stem
    (``book_id_from_name``). Nothing ASCII left: ``book``. Taken: ``-2``, ``-3`` … appended.
    """
    if from_title:
        slug = _slug(hint)
        if len(slug) > _ID_CHARS:
            cut = slug[:_ID_CHARS + 1]
            slug = cut[:cut.rfind("-")] if "-" in cut[8:] else slug[:_ID_CHARS]
        slug = slug.strip("-") or "book"
        if slug.split(".", 1)[0] in WINDOWS_RESERVED_NAMES:
            slug += "-book"
    else:
        slug = book_id_from_name(hint)
    if not isinstance(taken, set):
        taken = set(taken)
    candidate, n = slug, 1
    while candidate in taken:
        n += 1
        suffix = f"-{n}"
        candidate = slug[:64 - len(suffix)].rstrip("-") + suffix
    return check_book_id(candidate)


# --------------------------------------------------------------------------- hashing


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


class HashCache:
    """SHA-256 of files, remembered by (path, size, mtime) across runs (``hashes.json``)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._known: dict[str, list[Any]] = {}
        self._used: dict[str, list[Any]] = {}
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = {}
        if isinstance(data, dict):
            self._known = {k: v for k, v in data.items() if isinstance(v, list) and len(v) == 3}

    def sha256(self, path: Path) -> tuple[str, int]:
        """The file's SHA-256 and size (read only when the cache does not know it)."""
        st = path.stat()
        key = os.path.abspath(path)
        known = self._known.get(key)
        if known and known[0] == st.st_size and known[1] == st.st_mtime_ns:
            self._used[key] = known
            return str(known[2]), st.st_size
        digest = _sha256(path)
        self._used[key] = [st.st_size, st.st_mtime_ns, digest]
        return digest, st.st_size

    def save(self) -> None:
        """Write what this run used (entries of files no longer seen are dropped)."""
        with contextlib.suppress(OSError):
            write_atomically(self.path, json.dumps(self._used, separators=(",", ":")))


# --------------------------------------------------------------------------- SQLite


@contextlib.contextmanager
def sqlite_snapshot(database: Path, *, what: str) -> Iterator[sqlite3.Connection]:
    """A private copy of a library's SQLite database, opened, and deleted afterwards.

    A running Zotero holds ``zotero.sqlite`` locked (and may be mid-transaction); calibre may
    be writing. Nothing here opens the original: it is copied — with its ``-wal`` and
    ``-journal`` when present, so the copy opens in the state of the last commit (SQLite
    replays the log or rolls back the unfinished transaction *on the copy*) — and the copy is
    read. A copy taken while the file changed (size or mtime moved during the copy) is taken
    again, up to three times.

    Raises:
        CoreError: NOT_FOUND when there is no database; PATH_UNUSABLE when it cannot be
            copied or read as SQLite.
    """
    if not database.is_file():
        raise CoreError(Code.NOT_FOUND, f"No {what} database at {database}.",
                        details={"path": str(database)},
                        remediation=f"Give the folder holding {database.name}.")
    with tempfile.TemporaryDirectory(prefix="book-agent-library-") as tmp:
        copy = Path(tmp) / database.name
        for _attempt in range(3):
            before = _stamp(database)
            try:
                shutil.copyfile(database, copy)
                for suffix in ("-wal", "-journal"):
                    side = database.with_name(database.name + suffix)
                    target = copy.with_name(copy.name + suffix)
                    target.unlink(missing_ok=True)
                    if side.is_file():
                        shutil.copyfile(side, target)
            except OSError as exc:
                raise CoreError(Code.PATH_UNUSABLE, f"The {what} database {database} cannot "
                                f"be copied to be read: {exc.strerror or exc}.",
                                details={"path": str(database)},
                                remediation="Check that the file is readable.") from None
            if _stamp(database) == before:
                break
        try:
            conn = sqlite3.connect(copy)
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.DatabaseError as exc:
            raise CoreError(Code.PATH_UNUSABLE, f"The {what} database {database} cannot be "
                            f"read as SQLite ({exc}).", details={"path": str(database)},
                            remediation="Check that it is the library's database.") from None
        try:
            yield conn
        finally:
            conn.close()


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    wal = path.with_name(path.name + "-wal")
    try:
        wal_size = wal.stat().st_size
    except OSError:
        wal_size = -1
    return (st.st_size, st.st_mtime_ns + wal_size)


# --------------------------------------------------------------------------- state


@dataclass
class LibraryStore:
    """``DATA/library/``: the sources for ``sync``, the hash cache, the add lock."""

    data_dir: Path
    folder: Path = field(init=False)

    def __post_init__(self) -> None:
        self.folder = Path(self.data_dir) / "library"

    def hashes(self) -> HashCache:
        """The hash cache."""
        return HashCache(self.folder / "hashes.json")

    def refusals(self) -> dict[str, Any]:
        """Files refused before, by origin key: size, mtime, the image-only switch, reason
        (an unchanged refused file is not read again)."""
        try:
            data = json.loads((self.folder / "refused.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def save_refusals(self, refusals: dict[str, Any]) -> None:
        """Write the refusals memo."""
        with contextlib.suppress(OSError):
            write_atomically(self.folder / "refused.json",
                             json.dumps(refusals, ensure_ascii=False, indent=0))

    def sources(self) -> list[SourceSpec]:
        """Every source ``add`` has been given (for ``sync``), oldest first."""
        try:
            data = json.loads((self.folder / "sources.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
        items = data.get("sources") if isinstance(data, dict) else None
        return [s for s in map(SourceSpec.from_data, items or []) if s is not None]

    def remember(self, specs: Sequence[SourceSpec]) -> None:
        """Add (or refresh) sources in ``sources.json``."""
        known = {s.ident(): s for s in self.sources()}
        for spec in specs:
            known.pop(spec.ident(), None)
            known[spec.ident()] = spec
        write_atomically(self.folder / "sources.json", json.dumps(
            {"sources": [s.to_data() for s in known.values()]}, ensure_ascii=False,
            indent=1) + "\n")

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """One ``add`` or ``sync`` at a time on a data folder (BOOK_BUSY otherwise)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(self.folder / "add.lock"), timeout=0)
        try:
            lock.acquire()
        except Timeout:
            raise CoreError(Code.BOOK_BUSY, "Another book-agent add or sync is running on "
                            "this data folder.", details={"lock": str(self.folder / "add.lock")},
                            remediation="Wait for it to finish, then run again.") from None
        try:
            yield
        finally:
            lock.release()
