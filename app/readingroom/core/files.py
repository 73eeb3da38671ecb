"""Writing files so that a reader never sees half of one: temp file, fsync, atomic replace.

Every part of the suite that writes a file a person or another program relies on (host configs,
book packages, Book Skills, the ledger's head) writes it through :func:`write_atomically` or
:func:`replace_path`, so a crash or a kill leaves either the old file or the new one.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

__all__ = ["REPLACE_ATTEMPTS", "replace_path", "write_atomically"]

REPLACE_ATTEMPTS = 5
"""How often a replace refused with ``PermissionError`` is tried (Windows only refuses it)."""


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


def write_atomically(
    path: str | os.PathLike[str],
    data: bytes | str,
    *,
    keep_mode: bool = True,
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    """Write ``data`` to ``path`` through a temp file in the same folder, fsync, then replace.

    Args:
        path: the file to create or replace; its folder is created when missing.
        data: bytes as given, or text encoded as UTF-8 without a BOM (line endings untouched).
        keep_mode: give the new file the permission bits of the one it replaces.
        sleep: how to wait between replace attempts (injected by tests).
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
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
        replace_path(tmp, target, sleep=sleep)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
