"""Host config files on disk: read (tolerating a BOM), parse JSON strictly, back up, write.

The write discipline, the same for every host file:

1. **Parse or refuse.** An existing file that does not parse (or whose server table is not a
   table) is refused with a message naming the file and the position; it is left untouched and
   no backup is made. A missing file starts as an empty document.
2. **Touch only our entries.** Other servers, other keys, their order (and, in TOML, comments
   and formatting) come through as they were.
3. **Timestamped backup** ``<file>.bak-YYYYmmdd-HHMMSS`` of an existing file before it changes.
4. **Atomic replace** (:func:`readingroom.core.files.write_atomically`): a temporary file in
   the same folder, flushed and fsynced, then ``os.replace``. UTF-8 **without** a byte-order
   mark, LF line ends. A BOM already present in an existing file is tolerated when reading and
   removed on write (Claude Desktop rejects a BOM and resets its server list).
5. **Re-read and verify** the written file: it parses, and every entry is what we wrote.
6. **Idempotent**: when nothing would change the file is not written and no backup is made.

Steps 2, 5 and 6 are :class:`readingroom.hosts.host.FileHost`'s; this module does the rest.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from ..core.files import write_atomically
from .outcome import ConfigParseError, ConfigWriteError

__all__ = [
    "BOM",
    "ConfigText",
    "backup_path",
    "parse_json_config",
    "plain",
    "read_config_text",
    "write_config",
]

BOM = "\ufeff"
"""The byte-order mark, as text."""


@dataclass(frozen=True)
class ConfigText:
    """An existing config file's text (``None`` when the file does not exist)."""

    path: Path
    text: str | None
    had_bom: bool = False


def read_config_text(path: Path) -> ConfigText:
    """Read a config file as UTF-8, tolerating (and reporting) a byte-order mark.

    Raises:
        ConfigParseError: The file is not UTF-8 text (or is not a regular file).
    """
    if not path.exists():
        return ConfigText(path, None)
    if not path.is_file():
        raise ConfigParseError(f"{path}: not a regular file; not changed")
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigParseError(
            f"{path}: not UTF-8 text (byte {exc.start}); not changed, fix or move it first"
        ) from None
    if text.startswith(BOM):
        return ConfigText(path, text[len(BOM):], had_bom=True)
    return ConfigText(path, text)


def plain(value: Any) -> Any:
    """A tomlkit item as plain Python; anything else unchanged."""
    unwrap = getattr(value, "unwrap", None)
    return unwrap() if callable(unwrap) else value


def _reject_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"duplicate key {key!r}")
        result[key] = value
    return result


def parse_json_config(text: str, path: Path) -> Any:
    """Parse a JSON config strictly; duplicate keys are refused (a rewrite would drop one).

    Raises:
        ConfigParseError: naming the file, line and column.
    """
    if not text.strip():
        return {}
    try:
        return json.loads(text, object_pairs_hook=_reject_duplicate_keys)
    except json.JSONDecodeError as exc:
        raise ConfigParseError(
            f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
            "not changed. Comments and trailing commas are not JSON and a rewrite would lose "
            "them: fix or remove them first"
        ) from None
    except ValueError as exc:
        raise ConfigParseError(f"{path}: {exc}; not changed") from None


def backup_path(path: Path, when: datetime) -> Path:
    """A free ``<file>.bak-YYYYmmdd-HHMMSS`` name beside ``path`` (``-2``, ``-3``… if taken)."""
    stem = f"{path.name}.bak-{when:%Y%m%d-%H%M%S}"
    candidate = path.with_name(stem)
    counter = 2
    while candidate.exists():
        candidate = path.with_name(f"{stem}-{counter}")
        counter += 1
    return candidate


def write_config(
    path: Path, text: str, *, existed: bool, now: Callable[[], datetime] = datetime.now
) -> Path | None:
    """Back up ``path`` (when it existed) and replace it atomically; returns the backup path.

    Args:
        path: the config file.
        text: its new content, written as UTF-8 without a BOM, exactly as given.
        existed: whether ``path`` existed (and so is backed up first).
        now: the clock that timestamps the backup's name.

    Raises:
        ConfigWriteError: The backup or the write failed (the original is intact).
    """
    backup = None
    try:
        if existed:
            backup = backup_path(path, now())
            shutil.copy2(path, backup)
        write_atomically(path, text)
    except OSError as exc:
        raise ConfigWriteError(f"{path}: could not write ({exc}); not changed") from exc
    return backup
