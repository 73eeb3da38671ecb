"""The EPUB's ZIP container: limits checked before anything is read, capped reads, path rules.

The 512 MiB limit is checked twice: on the sizes the ZIP directory declares, before anything is
read, and on the bytes actually inflated, summed over every read, so no way of reading an entry
again (a spine listing one chapter thousands of times) gets past it.
"""

from __future__ import annotations

import posixpath
import re
import zipfile
import zlib
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from ....core.errors import Code, CoreError

__all__ = [
    "MAX_CSS_BYTES",
    "MAX_DOCUMENT_BYTES",
    "MAX_ENTRIES",
    "MAX_ENTRY_RATIO",
    "MAX_TOTAL_BYTES",
    "RATIO_FLOOR_BYTES",
    "Container",
    "corrupt_book",
    "resolve_href",
    "unsafe_book",
]

MAX_ENTRIES = 10_000
MAX_TOTAL_BYTES = 512 * 1024 * 1024
MAX_ENTRY_RATIO = 200
RATIO_FLOOR_BYTES = 1024 * 1024
"""Entries smaller than this may compress as well as they like (a run of blanks)."""
MAX_DOCUMENT_BYTES = 64 * 1024 * 1024
MAX_CSS_BYTES = 2 * 1024 * 1024


_DRIVE = re.compile(r"^[A-Za-z]:")


def corrupt_book(path: Path, message: str, reason: str) -> CoreError:
    return CoreError(
        Code.CORRUPT_SOURCE,
        message,
        details={"path": str(path), "reason": reason},
        remediation="Re-download or re-export the EPUB (e.g. with Calibre) and register it again.",
    )


def unsafe_book(path: Path, message: str, **details: Any) -> CoreError:
    return CoreError(
        Code.UNSAFE_SOURCE,
        message,
        details={"path": str(path), **details},
        remediation="Do not open this file; obtain the book from a trusted source.",
    )


class Container:
    """The ZIP archive, checked against the limits, read only through capped reads."""

    def __init__(self, archive: zipfile.ZipFile, path: Path) -> None:
        self.archive = archive
        self.path = path
        infos = archive.infolist()
        if len(infos) > MAX_ENTRIES:
            raise unsafe_book(
                path,
                f"The EPUB has more than {MAX_ENTRIES:,} entries (a ZIP bomb?).",
                reason="entries",
                entries=len(infos),
            )
        total = 0
        self.inflated = 0
        self.entries: dict[str, zipfile.ZipInfo] = {}
        for info in infos:
            name = info.filename
            if name in self.entries:
                # zipfile keeps the last copy, other readers the first: the book is ambiguous.
                raise unsafe_book(
                    path,
                    "The EPUB's ZIP archive has two entries with the same name, so what it "
                    "contains depends on the program reading it.",
                    reason="duplicate",
                    entry=name[:200],
                )
            if not _safe_entry_name(name):
                raise unsafe_book(
                    path,
                    "The EPUB has an entry whose path leaves the container.",
                    reason="path",
                    entry=name[:200],
                )
            total += info.file_size
            if info.file_size > RATIO_FLOOR_BYTES and info.file_size > MAX_ENTRY_RATIO * max(
                info.compress_size, 1
            ):
                raise unsafe_book(
                    path,
                    f"An EPUB entry inflates more than {MAX_ENTRY_RATIO}:1 (a ZIP bomb).",
                    reason="ratio",
                    entry=name[:200],
                )
            if not info.is_dir():
                self.entries[name] = info
        if total > MAX_TOTAL_BYTES:
            raise unsafe_book(
                path,
                f"The EPUB inflates to more than {MAX_TOTAL_BYTES // 2**20} MiB (a ZIP bomb?).",
                reason="size",
                size=total,
            )

    def has(self, name: str) -> bool:
        return name in self.entries

    def read(self, name: str, limit: int = MAX_DOCUMENT_BYTES) -> bytes:
        """An entry's bytes, never more than ``limit``, all reads together within the budget."""
        info = self.entries[name]
        if info.flag_bits & 0x1:
            raise CoreError(
                Code.ENCRYPTED_SOURCE,
                "The EPUB's ZIP entries are password-protected.",
                details={"path": str(self.path), "entry": name[:200]},
                remediation="Register a copy without encryption.",
            )
        if info.file_size > limit:
            raise unsafe_book(
                self.path,
                "An EPUB entry is larger than this reader accepts.",
                reason="entry_size",
                entry=name[:200],
                size=info.file_size,
            )
        try:
            with self.archive.open(info) as handle:
                data = handle.read(limit + 1)
        except (zipfile.BadZipFile, zlib.error, OSError, EOFError, NotImplementedError) as exc:
            raise corrupt_book(
                self.path, "An entry of the EPUB's ZIP archive is damaged.", type(exc).__name__
            ) from None
        if len(data) > limit:
            raise unsafe_book(self.path, "An EPUB entry inflates past its limit.", reason="inflate")
        self.inflated += len(data)
        if self.inflated > MAX_TOTAL_BYTES:
            raise unsafe_book(
                self.path,
                f"Reading the EPUB inflates more than {MAX_TOTAL_BYTES // 2**20} MiB "
                "(entries read again and again?).",
                reason="size",
                size=self.inflated,
            )
        return data


def _safe_entry_name(name: str) -> bool:
    if not name or name.startswith("/") or "\\" in name or "\0" in name or _DRIVE.match(name):
        return False
    return ".." not in name.split("/")


def resolve_href(base_dir: str, href: str) -> tuple[str | None, str | None]:
    """``(container path, fragment)`` for an href relative to ``base_dir``.

    The path is None for external links, ``data:`` URIs and paths that leave the container.
    """
    parts = urlsplit(href.strip())
    fragment = unquote(parts.fragment) if parts.fragment else None
    if parts.scheme or parts.netloc:
        return None, fragment
    raw = unquote(parts.path)
    if not raw:
        return "", fragment
    if raw.startswith("/") or "\\" in raw or _DRIVE.match(raw):
        return None, fragment
    joined = posixpath.normpath(posixpath.join(base_dir, raw))
    if joined == ".." or joined.startswith("../") or joined.startswith("/"):
        return None, fragment
    return joined, fragment
