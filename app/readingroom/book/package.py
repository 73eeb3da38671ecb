"""Book packages: immutable version folders under ``DATA/books/BOOK_ID/``, published atomically.

Layout of one book::

    DATA/books/BOOK_ID/
        CURRENT                 the published version ("3"), replaced atomically
        .lock                   cross-process lock (publishing, removal)
        v1/ v2/ v3/             immutable version folders
            manifest.json
            source/<original file name>
            units.jsonl         raw text per unit (the truth) with its metadata
            toc.json
            records.jsonl
            book.md
            index.sqlite
            skill/<name>/SKILL.md, references/
        .build-<random>/        a build in progress (never read; removed on failure)

A book is registered exactly when ``CURRENT`` names an existing version folder. A version is
built aside and renamed into place, then ``CURRENT`` is replaced: a failed or interrupted build
leaves the registry and earlier versions untouched, and two builds at once serialise at publish.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from filelock import FileLock

from ..core.errors import Code, CoreError
from ..core.files import replace_path, write_atomically

__all__ = [
    "BOOK_ID_PATTERN",
    "BookPackage",
    "Registry",
    "book_id_from_name",
    "check_book_id",
]

BOOK_ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
_LOCK_TIMEOUT = 60.0


def check_book_id(book_id: str) -> str:
    """Refuse ids that are not safe folder names (``a-z0-9._-``, 1-64, no leading dot)."""
    if not BOOK_ID_PATTERN.match(book_id or "") or ".." in book_id:
        raise CoreError(
            Code.INVALID_ARGUMENT,
            f"{book_id!r} is not a valid book id.",
            details={"pattern": BOOK_ID_PATTERN.pattern},
            remediation="Use 1-64 lowercase letters, digits, '.', '_' or '-', e.g. my-book.",
        )
    return book_id


def book_id_from_name(name: str) -> str:
    """A book id from a file name: lowercase ASCII slug, or 'book' when nothing is left."""
    import unicodedata

    stem = Path(name).stem
    ascii_ = unicodedata.normalize("NFKD", stem).encode("ascii", "ignore").decode().lower()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_).strip("-")[:64].strip("-")
    return slug or "book"


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

    def _lock(self, book_id: str) -> FileLock:
        book_dir = self._book_dir(book_id)
        book_dir.mkdir(parents=True, exist_ok=True)
        return FileLock(str(book_dir / ".lock"), timeout=_LOCK_TIMEOUT)

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
            if p.is_dir() and BOOK_ID_PATTERN.match(p.name) and self.current_version(p.name)
        )

    def __iter__(self) -> Iterator[BookPackage]:
        for book_id in self.list_ids():
            yield self.get(book_id)

    # ------------------------------------------------------------------ building
    def new_build_dir(self, book_id: str) -> Path:
        """A private folder to build a version in (on the same file system as the book)."""
        book_dir = self._book_dir(book_id)
        book_dir.mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(prefix=".build-", dir=book_dir))

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
        with self._lock(book_id):
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
        """Remove an unfinished build."""
        shutil.rmtree(build_dir, ignore_errors=True)

    def remove(self, book_id: str) -> int:
        """Unregister a book and delete all its versions; returns how many versions went."""
        self.get(book_id)
        book_dir = self._book_dir(book_id)
        with self._lock(book_id):
            versions = [p for p in book_dir.glob("v*") if p.is_dir()]
            (book_dir / "CURRENT").unlink(missing_ok=True)
            for path in versions:
                shutil.rmtree(path, ignore_errors=True)
        shutil.rmtree(book_dir, ignore_errors=True)
        return len(versions)
