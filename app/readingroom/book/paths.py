"""Paths and text that come from a user's command line, checked before anything is done.

A file the user names as output must not be a folder nor lie under a file (missing folders on
the way are created); writing it fails as PATH_UNUSABLE with the system's reason, never as a
traceback. File names are bytes on POSIX and
may not be UTF-8 (Python carries such bytes as lone surrogates): the package stores a name that
can be written as UTF-8, and text arguments that are not UTF-8 are refused by name.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..core.errors import Code, CoreError
from ..core.files import write_atomically

__all__ = ["MAX_PATH_CHARS", "check_output_file", "check_text", "storable_name", "unusable",
           "write_output"]

MAX_PATH_CHARS = 4096
"""Longer paths are refused before the file system is asked (it would refuse them anyway)."""


def storable_name(name: str) -> str:
    """A file name that can be written into UTF-8 files (manifest, Skill) and on every OS.

    Undecodable bytes (lone surrogates) and control characters become U+FFFD; the rest of the
    name is kept as it was.
    """
    cleaned = "".join(
        "\ufffd" if (0xD800 <= ord(c) <= 0xDFFF or ord(c) < 0x20 or ord(c) == 0x7F) else c
        for c in name
    )
    return cleaned or "source"


def check_text(value: str | None, what: str) -> str | None:
    """Refuse text that is not valid Unicode (non-UTF-8 bytes from the command line)."""
    if value is not None and any(0xD800 <= ord(c) <= 0xDFFF for c in value):
        raise CoreError(Code.INVALID_ARGUMENT, f"{what} is not valid UTF-8 text.",
                        details={"argument": what},
                        remediation="Pass the text in UTF-8 (check the terminal's encoding).")
    return value


def unusable(path: Path | str, what: str, why: str) -> CoreError:
    """A PATH_UNUSABLE error naming the argument, the (shortened) path and the reason."""
    shown = os.fsdecode(path)
    shown = shown if len(shown) <= 200 else shown[:100] + "…" + shown[-60:]
    return CoreError(Code.PATH_UNUSABLE, f"{what} {shown!r} cannot be used: {why}.",
                     details={"argument": what},
                     remediation="Give a file name in a folder that exists and that you can "
                     "write to.")


def check_output_file(path: Path | str, what: str = "--out") -> Path:
    """Refuse an output path that cannot become a file: a folder, or under a file.

    A missing folder on the way is fine (the write creates it, as ``skill export`` does).

    Raises:
        CoreError: PATH_UNUSABLE saying why.
    """
    target = Path(path)
    if len(os.fsdecode(target)) > MAX_PATH_CHARS:
        raise unusable(target, what, f"it is longer than {MAX_PATH_CHARS} characters")
    try:
        if target.is_dir():
            raise unusable(target, what, "it is a folder; give a file name")
        ancestor = target.parent
        while not ancestor.exists() and ancestor != ancestor.parent:
            ancestor = ancestor.parent
        if ancestor.exists() and not ancestor.is_dir():
            raise unusable(target, what, f"{os.fsdecode(ancestor)!r} is a file, not a folder")
    except OSError as exc:  # e.g. a name too long for the file system
        raise unusable(target, what, exc.strerror or type(exc).__name__) from None
    return target


def write_output(path: Path | str, data: bytes, what: str = "--out") -> Path:
    """Write ``data`` to a checked output file atomically; PATH_UNUSABLE when that fails."""
    target = check_output_file(path, what)
    try:
        write_atomically(target, data)
    except OSError as exc:
        raise unusable(target, what, exc.strerror or type(exc).__name__) from None
    return target
