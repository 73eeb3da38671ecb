"""Book packages: immutable version folders under ``DATA/books/BOOK_ID/``, published atomically.

Layout of one book::

    DATA/books/BOOK_ID/
        CURRENT                 the published version ("3"), replaced atomically
        v1/ v2/ v3/             immutable version folders
            manifest.json
            source/<original file name>
            units.jsonl         raw text per unit (the truth) with its metadata
            toc.json
            records.jsonl
            book.md
            index.sqlite
            skill/<name>/SKILL.md, references/
        .build-p<pid>-h<host>-<random>/
                                a build in progress (never read; removed on failure)
    DATA/books/.locks/BOOK_ID.lock
                                the book's cross-process lock (build start, publish, removal)

A book is registered when its folder holds ``CURRENT``; it is readable when ``CURRENT`` names an
existing version folder whose files are intact. A version is built aside and renamed into
place, then ``CURRENT`` is replaced: a failed or interrupted build leaves the registry and
earlier versions untouched, and two builds at once serialise at publish.

**Damage is named.** The manifest records the size and SHA-256 of every file of its version
(``files``; the source's in ``source``). A missing, truncated or garbage file — the manifest
itself, ``units.jsonl``, ``index.sqlite``, the Skill, the source copy — or a ``CURRENT`` naming
a missing version is BOOK_DAMAGED naming the file and the repair (``init --replace``), never
a defect and never "not registered". :meth:`BookPackage.check` compares the files with the
manifest: sizes on every load, SHA-256 on ``status`` and before a locator is verified.

One lock per book covers starting a build, publishing it and removing the book, and it lives
outside the book's folder so that removal can delete the whole folder while holding it. A build
folder's name records the process that owns it (pid and a tag of the host): ``remove`` refuses
with BOOK_BUSY while a live process builds, and a build whose process has died (a killed
``init``) is deleted by the next build start or ``status`` on the same host.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import shutil
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from ..core.errors import Code, CoreError
from ..core.files import replace_path, write_atomically

log = logging.getLogger("readingroom.book.package")

__all__ = [
    "BOOK_ID_PATTERN",
    "LAYOUT_FILES",
    "ORIGIN_FILE",
    "STALE_UNOWNED_BUILD_SECONDS",
    "WINDOWS_RESERVED_NAMES",
    "BookPackage",
    "Damage",
    "Registry",
    "book_id_from_name",
    "check_book_id",
    "damaged",
    "file_digest",
    "pid_alive",
    "record_files",
]

BOOK_ID_PATTERN = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
"""What a book id is, matched against the *whole* id (``fullmatch``)."""
WINDOWS_RESERVED_NAMES = frozenset(
    {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(1, 10)),
     *(f"lpt{i}" for i in range(1, 10))}
)
"""Device names Windows reserves as a file name's stem (``con``, ``aux.txt``, ``com1.md``)."""
STALE_UNOWNED_BUILD_SECONDS = 3600.0
"""A build folder that names no owner (made before owners were recorded) is stale after this."""
LAYOUT_FILES = ("units.jsonl", "toc.json", "records.jsonl", "book.md", "index.sqlite")
"""Files every version has (besides ``manifest.json``, ``source/`` and ``skill/``)."""
ORIGIN_FILE = "origin.json"
"""Beside ``CURRENT``: where a book imported by ``add`` was last seen (see ``origin``)."""
_SOURCE_FORMATS = frozenset({"pdf", "epub", "markdown"})
_LOCK_TIMEOUT = 60.0
_BUILD_PREFIX = ".build-"
_BUILD_NAME = re.compile(r"\.build-p(\d{1,10})-h([0-9a-f]{8})-.+")


def check_book_id(book_id: str) -> str:
    """Refuse ids that are not safe folder names on every system, saying why.

    A book id is 1-64 of ``a-z0-9._-``, starting with a letter or digit, with no ``..``, not
    ending in ``.`` and not a name Windows reserves (``con``, ``nul``, ``com1``, ``aux.txt``):
    the id is a folder name in the data folder and the Skill's name, on every host.
    """
    why = _id_problem(book_id) if isinstance(book_id, str) else "it is not text"
    if why:
        raise CoreError(
            Code.INVALID_ARGUMENT,
            f"{book_id!r} is not a valid book id: {why}.",
            details={"pattern": BOOK_ID_PATTERN.pattern, "reason": why},
            remediation="Use 1-64 lowercase letters, digits, '.', '_' or '-', e.g. my-book.",
        )
    return book_id


def _id_problem(book_id: str) -> str | None:
    if not book_id:
        return "it is empty"
    if len(book_id) > 64:
        return "it is longer than 64 characters"
    if not BOOK_ID_PATTERN.fullmatch(book_id):
        bad = next((c for c in book_id if not (c.isascii() and (c.islower() or c.isdigit()
                                                                or c in "._-"))), None)
        if bad is not None:
            return f"it contains {bad!r}; only a-z, 0-9, '.', '_' and '-' are allowed"
        return "it must start with a letter or a digit"
    if ".." in book_id:
        return "it contains '..'"
    if book_id.endswith("."):
        return "it ends with '.', which Windows drops from folder names"
    if book_id.split(".", 1)[0] in WINDOWS_RESERVED_NAMES:
        return f"{book_id.split('.', 1)[0]!r} is a device name Windows reserves"
    return None


def book_id_from_name(name: str) -> str:
    """A book id from a file name: lowercase ASCII slug, or 'book' when nothing is left.

    A slug Windows would refuse as a folder name (``con``, ``nul``, ``com1``) gets ``-book``.
    """
    import unicodedata

    stem = Path(name).stem
    ascii_ = unicodedata.normalize("NFKD", stem).encode("ascii", "ignore").decode().lower()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_).strip("-")[:59].strip("-")
    if slug in WINDOWS_RESERVED_NAMES:
        slug += "-book"
    return slug or "book"


def _host_tag() -> str:
    return hashlib.sha256(socket.gethostname().encode("utf-8", "replace")).hexdigest()[:8]


def pid_alive(pid: int) -> bool:
    """Whether a process with this id runs on this host (unknown counts as alive)."""
    if pid <= 0:
        return False
    if sys.platform == "win32":
        # os.kill(pid, 0) would terminate the process on Windows: ask the kernel instead.
        import ctypes

        kernel32 = ctypes.windll.kernel32
        handle = kernel32.OpenProcess(0x1000, False, pid)  # PROCESS_QUERY_LIMITED_INFORMATION
        if not handle:
            return bool(kernel32.GetLastError() == 5)  # ERROR_ACCESS_DENIED: it exists
        try:
            code = ctypes.c_ulong()
            if not kernel32.GetExitCodeProcess(handle, ctypes.byref(code)):
                return True
            return code.value == 259  # STILL_ACTIVE
        finally:
            kernel32.CloseHandle(handle)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: it exists under another user
        return True
    return True


@dataclass(frozen=True)
class Damage:
    """One damaged file of a package version: which, and what is wrong with it."""

    file: str
    problem: str

    def to_data(self) -> dict[str, str]:
        """The damage as a JSON-ready dict."""
        return {"file": self.file, "problem": self.problem}


def damaged(book_id: str, version: int | None, damage: Damage,
            package: Path | None = None) -> CoreError:
    """BOOK_DAMAGED naming the file, what is wrong with it and how to rebuild the book."""
    where = f"version {version}" if version is not None else "its registry entry"
    source = None
    if package is not None and damage.file != "manifest.json" and \
            not damage.file.startswith("source/"):
        copies = sorted(p for p in (package / "source").glob("*") if p.is_file())
        source = copies[0] if copies else None
    again = (f'book-agent init "{source}" --id {book_id} --replace (the package\'s own copy '
             "of the source)" if source is not None else
             f"book-agent init ORIGINAL_FILE --id {book_id} --replace")
    return CoreError(
        Code.BOOK_DAMAGED,
        f"Book {book_id!r} ({where}) is damaged: {damage.file} {damage.problem}.",
        details={"book_id": book_id, "version": version, "file": damage.file,
                 "problem": damage.problem},
        remediation=f"Rebuild the book: {again}; or remove it with book-agent remove "
        f"{book_id}. Nothing it says can be trusted until then.",
    )


_DIGESTS: dict[tuple[str, int, int], str] = {}
_DIGESTS_LOCK = threading.Lock()
_MAX_DIGESTS = 512


def file_digest(path: Path) -> str:
    """SHA-256 of a file, remembered per (path, size, mtime) so repeated checks are cheap."""
    st = path.stat()
    key = (str(path), st.st_size, st.st_mtime_ns)
    with _DIGESTS_LOCK:
        known = _DIGESTS.get(key)
    if known is not None:
        return known
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    value = digest.hexdigest()
    with _DIGESTS_LOCK:
        if len(_DIGESTS) >= _MAX_DIGESTS:
            _DIGESTS.clear()
        _DIGESTS[key] = value
    return value


def record_files(folder: Path) -> dict[str, dict[str, Any]]:
    """Size and SHA-256 of every file of a finished build, except the manifest and source.

    Written into the manifest as ``files`` at build time (the source is in ``source``).
    """
    out: dict[str, dict[str, Any]] = {}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).as_posix()
        if not path.is_file() or rel == "manifest.json" or rel.startswith("source/"):
            continue
        out[rel] = {"size": path.stat().st_size, "sha256": file_digest(path)}
    return out


_MAX_MANIFEST_DEPTH = 12
"""A manifest is a few levels deep; anything deeper was not written by book-agent."""


def _depth(value: Any) -> int:
    """Nesting depth of a JSON value, without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, dict | list):
            deepest = max(deepest, level)
            if level > _MAX_MANIFEST_DEPTH:
                break
            stack.extend((child, level + 1) for child in
                         (node.values() if isinstance(node, dict) else node))
    return deepest


def _is(value: Any, kind: type | tuple[type, ...]) -> bool:
    return isinstance(value, kind) and not isinstance(value, bool)


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _counts(value: Any) -> bool:
    return isinstance(value, list) and all(_is(v, int) and v >= 0 for v in value)


def _plain_name(name: Any) -> bool:
    """A file name with no folder in it (the source copy's; a POSIX name may hold a '\\')."""
    separators = {"/", "\0", os.sep, os.altsep or "/"}
    return isinstance(name, str) and bool(name) and name not in (".", "..") and not any(
        c in separators for c in name)


def _inside(rel: Any) -> bool:
    """A relative POSIX path that stays inside the version folder."""
    if not isinstance(rel, str) or not rel or rel.startswith("/") or "\\" in rel \
            or "\0" in rel or ":" in rel:
        return False
    return all(part not in ("", ".", "..") for part in rel.split("/"))


def _manifest_problem(data: Any, book_id: str, version: int) -> str | None:
    """Why a parsed manifest cannot be the manifest of this version, or None.

    Every field book-agent reads after init is checked for its type, so a manifest edited or
    damaged into another shape is named as damage rather than met as a defect later.
    """
    if not isinstance(data, dict):
        return "does not hold a JSON object"
    if _depth(data) > _MAX_MANIFEST_DEPTH:
        return "is nested deeper than a manifest is"
    top: list[tuple[str, Any]] = [
        ("id", lambda v: isinstance(v, str)), ("version", lambda v: _is(v, int)),
        ("title", lambda v: isinstance(v, str)), ("authors", _strings),
        ("language", lambda v: v is None or isinstance(v, str)),
        ("source", lambda v: isinstance(v, dict)), ("counts", lambda v: isinstance(v, dict)),
        ("capabilities", lambda v: isinstance(v, dict)), ("warnings", _strings),
        ("metadata", lambda v: isinstance(v, dict)),
        ("tool", lambda v: isinstance(v, dict)), ("created", lambda v: isinstance(v, str))]
    for key, ok in top:
        if key not in data or not ok(data[key]):
            return f"has no valid {key!r}"
    if data["id"] != book_id or data["version"] != version:
        return (f"belongs to {data['id']!r} version {data['version']}, not to this folder "
                f"({book_id!r} version {version})")
    source, counts, caps = data["source"], data["counts"], data["capabilities"]
    sha = source.get("sha256")
    if not (_plain_name(source.get("file_name")) and _is(source.get("size"), int)
            and source["size"] >= 0 and isinstance(sha, str) and len(sha) == 64
            and isinstance(source.get("format"), str) and source["format"] in _SOURCE_FORMATS):
        return "has no valid 'source' (file name, size, SHA-256, format)"
    if not all(_is(counts.get(k), int) and counts[k] >= 0 for k in ("units", "records")) or \
            not (counts.get("unit_kind") is None or isinstance(counts["unit_kind"], str)):
        return "has no valid 'counts'"
    if not _counts(caps.get("no_text_layer_units")) or not all(
            _counts(caps.get(k, [])) for k in ("vertical_units", "markdown_fallback_units")) \
            or not (caps.get("semantic") is None or isinstance(caps["semantic"], dict)):
        return "has no valid 'capabilities'"
    for key in ("library", "reference"):  # optional: books imported from a library
        if key in data and not (data[key] is None or isinstance(data[key], dict)):
            return f"has no valid {key!r}"
    files = data.get("files")
    if files is not None and not (isinstance(files, dict) and all(
            _inside(k) and isinstance(v, dict) and _is(v.get("size"), int)
            and isinstance(v.get("sha256"), str) for k, v in files.items())):
        return "has no valid 'files'"
    return None


@dataclass(frozen=True)
class BookPackage:
    """One published version of a book (read-only)."""

    book_id: str
    version: int
    path: Path

    def damaged(self, file: str, problem: str) -> CoreError:
        """BOOK_DAMAGED for one file of this version."""
        return damaged(self.book_id, self.version, Damage(file, problem), self.path)

    @property
    def manifest(self) -> dict[str, Any]:
        """The version's manifest, checked to be one; BOOK_DAMAGED otherwise."""
        try:
            raw = (self.path / "manifest.json").read_bytes()
        except FileNotFoundError:
            raise self.damaged("manifest.json", "is missing") from None
        except OSError as exc:
            raise self.damaged("manifest.json", f"cannot be read ({exc.strerror})") from None
        try:
            data = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            raise self.damaged("manifest.json", "is not valid JSON (truncated or overwritten)"
                               ) from None
        why = _manifest_problem(data, self.book_id, self.version)
        if why:
            raise self.damaged("manifest.json", why)
        return data

    def file(self, name: str) -> Path:
        """A file of the package by its name in the layout."""
        return self.path / name

    def read_bytes(self, name: str) -> bytes:
        """A file of the package; BOOK_DAMAGED when it is missing or not a regular file."""
        path = self.file(name)
        try:
            if not path.is_file():  # never open a pipe or a device in its place
                raise FileNotFoundError(name)
            return path.read_bytes()
        except FileNotFoundError:
            raise self.damaged(name, "is missing") from None
        except OSError as exc:
            raise self.damaged(name, f"cannot be read ({exc.strerror})") from None

    def read_text(self, name: str) -> str:
        """A UTF-8 text file of the package (newlines as written); BOOK_DAMAGED when it is
        missing or not UTF-8."""
        try:
            return self.read_bytes(name).decode("utf-8")
        except UnicodeDecodeError:
            raise self.damaged(name, "is not UTF-8 text (overwritten?)") from None

    def read_jsonl(self, name: str, *, expected: int | None = None,
                   sha256: str | None = None) -> list[dict[str, Any]]:
        """The JSON objects of a JSON Lines file; BOOK_DAMAGED naming the line that is not one,
        when the file holds another number of lines than the manifest counted, or when its
        bytes are not those whose SHA-256 the manifest recorded."""
        raw = self.read_bytes(name)
        if sha256 is not None and hashlib.sha256(raw).hexdigest() != sha256:
            raise self.damaged(name, "differs from the file recorded at build (its SHA-256 "
                               "changed)")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise self.damaged(name, "is not UTF-8 text (overwritten?)") from None
        rows: list[dict[str, Any]] = []
        for n, line in enumerate(text.splitlines(), start=1):
            if not line:
                continue
            try:
                row = json.loads(line)
            except (ValueError, RecursionError):
                raise self.damaged(name, f"line {n} is not valid JSON (the file is truncated "
                                   "or was edited)") from None
            if not isinstance(row, dict):
                raise self.damaged(name, f"line {n} is not a JSON object")
            rows.append(row)
        if expected is not None and len(rows) != expected:
            raise self.damaged(name, f"holds {len(rows)} entries where the manifest counts "
                               f"{expected} (truncated?)")
        return rows

    @property
    def source_file(self) -> Path:
        """The package's copy of the source file; BOOK_DAMAGED when it is gone."""
        folder = self.path / "source"
        try:
            found = sorted(p for p in folder.iterdir() if p.is_file())
        except OSError:
            found = []
        if not found:
            raise self.damaged("source/", "holds no copy of the source file")
        return found[0]

    def skill_dir(self) -> Path:
        """The Book Skill folder (``skill/<name>``); BOOK_DAMAGED when it is gone."""
        try:
            found = sorted(p for p in (self.path / "skill").iterdir() if p.is_dir())
        except OSError:
            found = []
        if not found or not (found[0] / "SKILL.md").is_file():
            raise self.damaged("skill/", "has no Book Skill (SKILL.md is missing)")
        return found[0]

    def check(self, *, deep: bool = False,
              manifest: dict[str, Any] | None = None) -> list[Damage]:
        """What is damaged in this version, compared with what its manifest recorded.

        Always: the manifest, every recorded file's presence and size, the source copy's
        size. ``deep``: SHA-256 of each as well. A package built before files were recorded
        is checked for the presence of the layout's files (and, deep, the source's hash).
        """
        if manifest is None:
            try:
                manifest = self.manifest
            except CoreError as err:
                return [Damage(err.details.get("file", "manifest.json"),
                               err.details.get("problem", err.message))]
        found: list[Damage] = []
        recorded = manifest.get("files")
        expected: dict[str, dict[str, Any] | None] = dict(recorded) if recorded else {
            name: None for name in LAYOUT_FILES}
        for rel, want in expected.items():
            problem = _file_problem(self.path / rel, want, deep=deep)
            if problem:
                found.append(Damage(rel, problem))
        if not recorded:
            try:
                self.skill_dir()
            except CoreError:
                found.append(Damage("skill/", "has no Book Skill (SKILL.md is missing)"))
        source = manifest["source"]
        copy = self.path / "source" / source["file_name"]
        if not copy.is_file():
            try:
                copy = self.source_file
            except CoreError:
                copy = None  # type: ignore[assignment]
        if copy is None:
            found.append(Damage("source/", "holds no copy of the source file"))
        else:
            rel = "source/" + copy.name
            problem = _file_problem(copy, {"size": source["size"], "sha256": source["sha256"]},
                                    deep=deep)
            if problem:
                found.append(Damage(rel, problem))
        return found

    def verify_source(self, manifest: dict[str, Any] | None = None) -> Path:
        """The source copy, checked against the manifest's size and SHA-256 (BOOK_DAMAGED
        otherwise): what a verified locator rests on."""
        source = (manifest or self.manifest)["source"]
        copy = self.source_file
        problem = _file_problem(copy, {"size": source["size"], "sha256": source["sha256"]},
                                deep=True)
        if problem:
            raise self.damaged("source/" + copy.name, problem)
        return copy


def _file_problem(path: Path, want: dict[str, Any] | None, *, deep: bool) -> str | None:
    """What is wrong with one package file against its recorded size and hash, or None."""
    try:
        st = path.stat()
    except OSError:
        return "is missing"
    if not path.is_file():
        return "is not a file"
    if want is None:
        return None
    if st.st_size != want["size"]:
        return (f"has {st.st_size:,} bytes where {want['size']:,} were recorded at build "
                "(truncated or replaced)")
    if deep:
        try:
            digest = file_digest(path)
        except OSError as exc:
            return f"cannot be read ({exc.strerror})"
        if digest != want["sha256"]:
            return "differs from the file recorded at build (its SHA-256 changed)"
    return None


class Registry:
    """The books under ``DATA/books``."""

    def __init__(self, data_dir: Path | str) -> None:
        self.data_dir = Path(data_dir)
        self.books_dir = self.data_dir / "books"
        self.listeners: list[Callable[[str, int | None], None]] = []
        """Told ``(book_id, version)`` after a version is published, ``(book_id, None)``
        after a book is removed (outside the book's lock). A listener's failure is logged,
        never raised: the change itself is done."""

    def _notify(self, book_id: str, version: int | None) -> None:
        for listener in list(self.listeners):
            try:
                listener(book_id, version)
            except Exception:  # a listener never undoes a published change
                log.warning("a registry listener failed for %s", book_id, exc_info=True)

    def _book_dir(self, book_id: str) -> Path:
        return self.books_dir / check_book_id(book_id)

    @contextlib.contextmanager
    def _locked(self, book_id: str, *, timeout: float = _LOCK_TIMEOUT) -> Iterator[None]:
        """Hold the book's lock; BOOK_BUSY when another process keeps it past ``timeout``."""
        locks = self.books_dir / ".locks"
        locks.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(locks / f"{check_book_id(book_id)}.lock"), timeout=timeout)
        try:
            lock.acquire()
        except Timeout:
            raise _busy(book_id, "another book-agent process holds its lock") from None
        try:
            yield
        finally:
            lock.release()

    def _builds(self, book_id: str) -> list[tuple[Path, bool]]:
        """The book's build folders, each with whether a live process still owns it."""
        book_dir = self._book_dir(book_id)
        if not book_dir.is_dir():
            return []
        here, now, found = _host_tag(), time.time(), []
        for path in book_dir.glob(f"{_BUILD_PREFIX}*"):
            owner = _BUILD_NAME.fullmatch(path.name)
            if owner is None:
                try:
                    age = now - path.stat().st_mtime
                except OSError:
                    continue
                live = age < STALE_UNOWNED_BUILD_SECONDS
            elif owner.group(2) != here:
                live = True  # another host's process: its liveness cannot be checked here
            else:
                live = pid_alive(int(owner.group(1)))
            found.append((path, live))
        return found

    def _sweep(self, book_id: str) -> int:
        """Delete build folders whose process has died (call under the lock)."""
        removed = 0
        for path, live in self._builds(book_id):
            if not live:
                shutil.rmtree(path, ignore_errors=True)
                removed += not path.exists()
        return removed

    def clean_stale_builds(self, book_id: str | None = None) -> int:
        """Delete build folders left by killed builds (of one book, or every book).

        Best effort: a book whose lock is busy right now is skipped. Returns how many went.
        """
        if book_id is None:
            if not self.books_dir.is_dir():
                return 0
            ids = [p.name for p in self.books_dir.iterdir()
                   if p.is_dir() and _id_problem(p.name) is None]
        else:
            ids = [check_book_id(book_id)]
        removed = 0
        for one in ids:
            if not any(not live for _p, live in self._builds(one)):
                continue
            try:
                with self._locked(one, timeout=0):
                    removed += self._sweep(one)
            except CoreError:
                continue
        return removed

    def builds_in_progress(self, book_id: str) -> int:
        """How many live builds of the book are running."""
        return sum(live for _p, live in self._builds(book_id))

    def current_version(self, book_id: str) -> int | None:
        """The published version, or None when the book is not registered (or its ``CURRENT``
        names no version folder)."""
        pointer = self._book_dir(book_id) / "CURRENT"
        try:
            version = int(pointer.read_text(encoding="utf-8").strip())
        except (OSError, ValueError):
            return None
        return version if (self._book_dir(book_id) / f"v{version}").is_dir() else None

    def is_registered(self, book_id: str) -> bool:
        """Whether the book has a ``CURRENT`` pointer, readable or damaged."""
        try:
            return (self._book_dir(book_id) / "CURRENT").is_file()
        except OSError:
            return False

    def pointer_damage(self, book_id: str) -> tuple[int | None, Damage] | None:
        """``(version named, damage)`` when a registered book's ``CURRENT`` is unusable."""
        book_dir = self._book_dir(book_id)
        try:
            text = (book_dir / "CURRENT").read_text(encoding="utf-8").strip()
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError):
            return None, Damage("CURRENT", "cannot be read")
        if not text.isdigit() or len(text) > 9:
            return None, Damage("CURRENT", f"does not hold a version number ({text[:20]!r})")
        version = int(text)
        if not (book_dir / f"v{version}").is_dir():
            present = sorted(int(p.name[1:]) for p in book_dir.glob("v*")
                             if p.name[1:].isdigit() and p.is_dir())
            return version, Damage("CURRENT", f"names version {version}, which does not exist "
                                   f"(versions present: {', '.join(map(str, present)) or 'none'})")
        return None

    def get(self, book_id: str, version: int | None = None) -> BookPackage:
        """The published (or a given) version of a book; BOOK_NOT_FOUND otherwise.

        Raises:
            CoreError: BOOK_DAMAGED when ``CURRENT`` names no usable version.
        """
        current = self.current_version(book_id)
        if current is None and version is None and self.is_registered(book_id):
            broken = self.pointer_damage(book_id)
            if broken is not None:
                raise damaged(book_id, broken[0], broken[1])
        wanted = version if version is not None else current
        path = self._book_dir(book_id) / f"v{wanted}"
        if current is None or wanted is None or not path.is_dir():
            raise CoreError(
                Code.BOOK_NOT_FOUND,
                f"No registered book {book_id!r}" + (f" version {version}" if version else "")
                + ".",
                details={"book_id": book_id, "registered": self.list_ids()},
                remediation="Run `book-agent list` to see registered books, or `book-agent "
                "init SOURCE --id ID` to register one.",
            )
        return BookPackage(book_id, wanted, path)

    def list_ids(self) -> list[str]:
        """Registered book ids, sorted, damaged ones included (their ``CURRENT`` exists)."""
        if not self.books_dir.is_dir():
            return []
        return sorted(
            p.name for p in self.books_dir.iterdir()
            if p.is_dir() and _id_problem(p.name) is None and self.is_registered(p.name)
        )

    def __iter__(self) -> Iterator[BookPackage]:
        """The current version of every registered book whose ``CURRENT`` is usable."""
        for book_id in self.list_ids():
            try:
                yield self.get(book_id)
            except CoreError as err:
                if err.code != Code.BOOK_DAMAGED:
                    raise

    # ------------------------------------------------------------------ building
    def new_build_dir(self, book_id: str) -> Path:
        """A private folder to build a version in (on the same file system as the book).

        Made under the book's lock, named after this process, after deleting the builds of
        processes that died: a removal cannot slip between the folder and its owner's name.
        """
        book_dir = self._book_dir(book_id)
        with self._locked(book_id):
            book_dir.mkdir(parents=True, exist_ok=True)
            self._sweep(book_id)
            prefix = f"{_BUILD_PREFIX}p{os.getpid()}-h{_host_tag()}-"
            return Path(tempfile.mkdtemp(prefix=prefix, dir=book_dir))

    def publish(
        self,
        book_id: str,
        build_dir: Path,
        *,
        replace: bool,
        finalize: Callable[[Path, int], None],
    ) -> BookPackage:
        """Move a finished build into place as the next version and make it current.

        ``finalize(build_dir, version)`` runs under the book's lock once the version number is
        known (it writes the manifest and the Skill, which carry the number).

        Raises:
            CoreError: BOOK_EXISTS when the id is registered and ``replace`` is False.
        """
        with self._locked(book_id):
            if not build_dir.is_dir():
                raise _busy(book_id, "its build folder was deleted while it was being built")
            current = self.current_version(book_id)
            if current is not None and not replace:
                raise CoreError(
                    Code.BOOK_EXISTS,
                    f"A book with id {book_id!r} is already registered (version {current}).",
                    details={"book_id": book_id, "version": current},
                    remediation="Pass --replace to build a new version, or choose another --id.",
                )
            book_dir = self._book_dir(book_id)
            existing = [int(p.name[1:]) for p in book_dir.glob("v*") if p.name[1:].isdigit()]
            version = max(existing, default=0) + 1
            finalize(build_dir, version)
            target = book_dir / f"v{version}"
            replace_path(build_dir, target)
            write_atomically(book_dir / "CURRENT", f"{version}\n")
        self._notify(book_id, version)
        return BookPackage(book_id, version, target)

    def origin(self, book_id: str) -> dict[str, Any] | None:
        """Where the book was last seen (``DATA/books/ID/origin.json``), or None.

        A library import records its origin in the manifest; when the file moves (same
        SHA-256, new path) only this sidecar changes, so the package and its locators stay.
        """
        try:
            data = json.loads((self._book_dir(book_id) / ORIGIN_FILE).read_text(
                encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def set_origin(self, book_id: str, origin: dict[str, Any]) -> None:
        """Record where a registered book's source now is (under the book's lock)."""
        with self._locked(book_id):
            if not self.is_registered(book_id):
                self.get(book_id)  # BOOK_NOT_FOUND
            write_atomically(self._book_dir(book_id) / ORIGIN_FILE,
                             json.dumps(origin, ensure_ascii=False, indent=1) + "\n")

    def discard(self, build_dir: Path) -> None:
        """Remove an unfinished build, and the book's folder when nothing else is in it."""
        shutil.rmtree(build_dir, ignore_errors=True)
        book_id = build_dir.parent.name
        if build_dir.parent.parent != self.books_dir or _id_problem(book_id) is not None:
            return
        try:
            with self._locked(book_id, timeout=0):
                build_dir.parent.rmdir()  # only succeeds when empty: a failed first init
        except (CoreError, OSError):
            pass

    def remove(self, book_id: str) -> int:
        """Unregister a book and delete its folder; returns how many versions went.

        Raises:
            CoreError: BOOK_NOT_FOUND; BOOK_BUSY while a live process builds a version of it.
        """
        book_dir = self._book_dir(book_id)
        with self._locked(book_id):
            if not self.is_registered(book_id):
                self.get(book_id)  # BOOK_NOT_FOUND; a damaged book can still be removed
            live = [p.name for p, alive in self._builds(book_id) if alive]
            if live:
                raise _busy(book_id, "an init is building a version of it",
                            details={"builds": live})
            versions = [p for p in book_dir.glob("v*") if p.is_dir()]
            (book_dir / "CURRENT").unlink(missing_ok=True)
            shutil.rmtree(book_dir, ignore_errors=True)
        self._notify(book_id, None)
        return len(versions)


def _busy(book_id: str, why: str, *, details: dict[str, Any] | None = None) -> CoreError:
    return CoreError(Code.BOOK_BUSY, f"Book {book_id!r} is busy: {why}.",
                     details={"book_id": book_id, **(details or {})},
                     remediation="Wait for the other book-agent command to finish, then try "
                     "again.")
