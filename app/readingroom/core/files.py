"""Writing files so that a reader never sees half of one: temp file, fsync, atomic replace.

Every part of the suite that writes a file a person or another program relies on (host configs,
book packages, Book Skills, the ledger's head) writes it through :func:`write_atomically` or
:func:`replace_path`, so a crash or a kill leaves either the old file or the new one.

A write to a symlink changes the file the link leads to (the link stays a link, as with a
shell's ``>``); a read-only file is refused (:class:`ReadOnlyFileError`), since a replace would
otherwise ignore its permission bits; and a caller that read the file first can ask for the
replace to happen only while the file still holds what it read (:class:`FileChangedError`).
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
import time
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Final

__all__ = [
    "REPLACE_ATTEMPTS",
    "UNCHECKED",
    "FileChangedError",
    "ReadOnlyFileError",
    "refuse_read_only",
    "replace_path",
    "write_atomically",
    "write_target",
]

REPLACE_ATTEMPTS = 5
"""How often a replace refused with ``PermissionError`` is tried (Windows only refuses it)."""


class ReadOnlyFileError(PermissionError):
    """The file to replace is read-only (no write permission); it was not changed."""


class FileChangedError(OSError):
    """The file no longer holds what the caller read: another program wrote it meanwhile."""


class _Unchecked(Enum):
    UNCHECKED = "unchecked"


UNCHECKED: Final = _Unchecked.UNCHECKED
"""``write_atomically(expect=UNCHECKED)``: replace whatever the file holds now."""


def write_target(path: str | os.PathLike[str]) -> Path:
    """The file a write to ``path`` changes: ``path``, or where its symlink (chain) leads."""
    candidate = Path(path)
    if candidate.is_symlink():
        return Path(os.path.realpath(candidate))
    return candidate


def refuse_read_only(path: str | os.PathLike[str]) -> None:
    """Raise :class:`ReadOnlyFileError` when ``path`` exists and may not be written.

    The permission bits are read as well as ``os.access``: an administrator (root) may write
    anything, yet a file whose owner made it ``0444`` is meant to stay as it is.
    """
    target = Path(path)
    try:
        mode = target.stat().st_mode
    except FileNotFoundError:
        return
    if stat.S_ISREG(mode) and (mode & 0o222 == 0 or not os.access(target, os.W_OK)):
        raise ReadOnlyFileError(errno.EACCES, "read-only file; not replaced", str(target))


def replace_path(
    source: str | os.PathLike[str],
    target: str | os.PathLike[str],
    *,
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    """``os.replace(source, target)``, tried again while Windows holds ``target`` open.

    Windows refuses a replace while another process (a host, an antivirus scanner, the search
    indexer) briefly has the file open; it is usually free again within moments. Elsewhere the
    first attempt either succeeds or raises.
    """
    for attempt in range(REPLACE_ATTEMPTS):
        try:
            os.replace(source, target)
            return
        except PermissionError:
            if attempt == REPLACE_ATTEMPTS - 1:
                raise
            sleep(0.2 * (attempt + 1))


def _current_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def write_atomically(
    path: str | os.PathLike[str],
    data: bytes | str,
    *,
    keep_mode: bool = True,
    expect: bytes | _Unchecked | None = UNCHECKED,
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    """Write ``data`` to ``path`` through a temp file in the same folder, fsync, then replace.

    Args:
        path: the file to create or replace; its folder is created when missing. A symlink is
            followed: its target is replaced, and the link stays.
        data: bytes as given, or text encoded as UTF-8 without a BOM (line endings untouched).
        keep_mode: give the new file the permission bits of the one it replaces.
        expect: the bytes the file must still hold (``None``: it must still not exist), checked
            just before the replace; :data:`UNCHECKED` replaces whatever is there.
        sleep: how to wait between replace attempts (injected by tests).

    Raises:
        ReadOnlyFileError: the file exists and is read-only (nothing written).
        FileChangedError: the file no longer holds ``expect`` (nothing written).
        OSError: the write or the replace failed (the old file is intact).
    """
    target = write_target(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    refuse_read_only(target)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    mode = target.stat().st_mode & 0o7777 if keep_mode and target.exists() else None
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        # Checked last, after the slow part, so the window for a writer that does not share
        # the caller's lock is as short as a portable program can make it.
        if expect is not UNCHECKED and _current_bytes(target) != expect:
            raise FileChangedError(errno.EAGAIN, "changed since it was read; not replaced",
                                   str(target))
        replace_path(tmp, target, sleep=sleep)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
