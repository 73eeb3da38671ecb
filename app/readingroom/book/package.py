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

A book is registered exactly when ``CURRENT`` names an existing version folder. A version is
built aside and renamed into place, then ``CURRENT`` is replaced: a failed or interrupted build
leaves the registry and earlier versions untouched, and two builds at once serialise at publish.

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
import os
import re
import shutil
import socket
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from ..core.errors import Code, CoreError
from ..core.files import replace_path, write_atomically

__all__ = [
    "BOOK_ID_PATTERN",
    "STALE_UNOWNED_BUILD_SECONDS",
    "WINDOWS_RESERVED_NAMES",
    "BookPackage",
    "Registry",
    "book_id_from_name",
    "check_book_id",
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


def _pid_alive(pid: int) -> bool:
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
class BookPackage:
    """One published version of a book (read-only)."""

    book_id: str
    version: int
    path: Path

    @property
    def manifest(self) -> dict[str, Any]:
        """The version's manifest."""
        return json.loads((self.path / "manifest.json").read_text(encoding="utf-8"))

    def file(self, name: str) -> Path:
        """A file of the package by its name in the layout."""
        return self.path / name

    @property
    def source_file(self) -> Path:
        """The package's copy of the source file."""
        return next((self.path / "source").iterdir())

    def skill_dir(self) -> Path:
        """The Book Skill folder (``skill/<name>``)."""
        return next(p for p in (self.path / "skill").iterdir() if p.is_dir())


class Registry:
    """The books under ``DATA/books``."""

    def __init__(self, data_dir: Path | str) -> None:
        self.data_dir = Path(data_dir)
        self.books_dir = self.data_dir / "books"

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
                live = _pid_alive(int(owner.group(1)))
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
        """The published version, or None when the book is not registered."""
        pointer = self._book_dir(book_id) / "CURRENT"
        try:
            version = int(pointer.read_text(encoding="utf-8").strip())
        except (OSError, ValueError):
            return None
        return version if (self._book_dir(book_id) / f"v{version}").is_dir() else None

    def get(self, book_id: str, version: int | None = None) -> BookPackage:
        """The published (or a given) version of a book; BOOK_NOT_FOUND otherwise."""
        current = self.current_version(book_id)
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
        """Registered book ids, sorted."""
        if not self.books_dir.is_dir():
            return []
        return sorted(
            p.name for p in self.books_dir.iterdir()
            if p.is_dir() and _id_problem(p.name) is None and self.current_version(p.name)
        )

    def __iter__(self) -> Iterator[BookPackage]:
        for book_id in self.list_ids():
            yield self.get(book_id)

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
            return BookPackage(book_id, version, target)

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
            self.get(book_id)
            live = [p.name for p, alive in self._builds(book_id) if alive]
            if live:
                raise _busy(book_id, "an init is building a version of it",
                            details={"builds": live})
            versions = [p for p in book_dir.glob("v*") if p.is_dir()]
            (book_dir / "CURRENT").unlink(missing_ok=True)
            shutil.rmtree(book_dir, ignore_errors=True)
        return len(versions)


def _busy(book_id: str, why: str, *, details: dict[str, Any] | None = None) -> CoreError:
    return CoreError(Code.BOOK_BUSY, f"Book {book_id!r} is busy: {why}.",
                     details={"book_id": book_id, **(details or {})},
                     remediation="Wait for the other book-agent command to finish, then try "
                     "again.")
