"""Host config files on disk: read (tolerating a BOM), parse JSON strictly, lock, back up, write.

The write discipline, the same for every host file:

1. **Parse or refuse.** An existing file that does not parse (or whose server table is not a
   table) is refused with a message naming the file and the position; it is left untouched and
   no backup is made. So is one the host itself could not read: JSON with ``NaN``/``Infinity``
   or a number too large for a double, nesting deeper than :data:`MAX_NESTING`. A missing file
   starts as an empty document.
2. **Touch only our entries.** Other servers, other keys, their order (and, in TOML, comments
   and formatting) come through as they were.
3. **Locked while edited** (:func:`config_lock`, a lock file beside the config), and replaced
   only while it still holds what was read: a program that does not take the lock (the host
   itself) is not overwritten either; the edit is redone on the new text, a few times at most.
4. **Timestamped backup** ``<file>.bak-YYYYmmdd-HHMMSS`` of an existing file before it changes.
5. **Atomic replace** (:func:`readingroom.core.files.write_atomically`): a temporary file in
   the same folder, flushed and fsynced, then ``os.replace``. A symlinked config is written
   through the link (its target is backed up and replaced); a read-only one is refused. UTF-8
   **without** a byte-order mark, in the file's own line ending. A BOM already present in an
   existing file is tolerated when reading and removed on write (Claude Desktop rejects a BOM
   and resets its server list).
6. **Re-read and verify** the written file: it parses, and every entry is what we wrote.
7. **Idempotent**: when nothing would change the file is not written and no backup is made.

Steps 2, 3 (the redo), 6 and 7 are :class:`readingroom.hosts.host.FileHost`'s; this module
does the rest.
"""

from __future__ import annotations

import json
import math
import re
import shutil
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from ..core.files import (
    FileChangedError,
    ReadOnlyFileError,
    refuse_read_only,
    write_atomically,
    write_target,
)
from .outcome import ConfigChangedError, ConfigParseError, ConfigWriteError

__all__ = [
    "BOM",
    "LOCK_TIMEOUT_S",
    "MAX_NESTING",
    "ConfigText",
    "backup_path",
    "check_values",
    "config_lock",
    "keep_line_ending",
    "line_ending",
    "lock_path",
    "parse_json_config",
    "plain",
    "read_config_text",
    "write_config",
]

BOM = "\ufeff"
"""The byte-order mark, as text."""

MAX_NESTING = 64
"""The deepest nesting of arrays and tables a host config may have. Codex's TOML parser stops
at 80 levels and serde_json at 128; no real config comes near, and a bound keeps a hostile file
from reaching the parser's recursion limit."""

LOCK_TIMEOUT_S = 30.0
"""How long to wait for another readingroom that is editing the same file."""


@dataclass(frozen=True)
class ConfigText:
    """An existing config file's text (``None`` when the file does not exist)."""

    path: Path
    text: str | None
    had_bom: bool = False
    raw: bytes | None = None
    """The bytes as read (what the file must still hold when it is replaced)."""


def read_config_text(path: Path) -> ConfigText:
    """Read a config file as UTF-8, tolerating (and reporting) a byte-order mark.

    Raises:
        ConfigParseError: The file is not UTF-8 text (or is not a regular file).
    """
    if not path.exists():
        return ConfigText(path, None)
    if not path.is_file():
        kind = "a folder" if path.is_dir() else "not a regular file (a device, FIFO or socket)"
        raise ConfigParseError(
            f"{path} is {kind}, where the host's config file belongs; nothing was read or "
            "changed. Move it away, or pass --config with the config file's path"
        )
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigParseError(
            f"{path}: not UTF-8 text (byte {exc.start}); not changed, fix or move it first"
        ) from None
    if text.startswith(BOM):
        return ConfigText(path, text[len(BOM):], had_bom=True, raw=raw)
    return ConfigText(path, text, raw=raw)


def plain(value: Any) -> Any:
    """A tomlkit item as plain Python; anything else unchanged."""
    unwrap = getattr(value, "unwrap", None)
    return unwrap() if callable(unwrap) else value


# -- strict JSON ------------------------------------------------------------------------------


class _Unreadable(ValueError):
    """A JSON token the hosts cannot read; ``token`` is its text, to find it in the file."""

    def __init__(self, token: str, why: str) -> None:
        super().__init__(why)
        self.token = token


def _reject_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"duplicate key {key!r}")
        result[key] = value
    return result


def _keep_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    return dict(pairs)


def _refuse_constant(token: str) -> Any:
    raise _Unreadable(token, f"{token} is not JSON (JSON.parse, which the hosts use, refuses it)")


def _finite_float(token: str) -> float:
    value = float(token)
    if math.isinf(value):
        raise _Unreadable(token, f"the number {token[:40]} is too large for the hosts (a "
                          "double holds at most about 1.8e308)")
    return value


def _bounded_int(token: str) -> int:
    # A double overflows past 309 digits; JavaScript hosts would read Infinity.
    if len(token.lstrip("-")) > 309 or abs(int(token)) > sys.float_info.max:
        raise _Unreadable(token, f"the number {token[:40]}… is too large for the hosts (a "
                          "double holds at most about 1.8e308)")
    return int(token)


_JSON_STRING = r'"(?:[^"\\]|\\.)*"'


def _position(text: str, token: str) -> str:
    """``line L, column C`` of the first ``token`` outside a JSON string, or ``""``."""
    for match in re.finditer(_JSON_STRING + "|" + re.escape(token), text):
        if not match.group().startswith('"'):
            start = match.start()
            line = text.count("\n", 0, start) + 1
            return f"line {line}, column {start - text.rfind(chr(10), 0, start)}: "
    return ""


def check_values(value: Any, path: Path) -> None:
    """Refuse a parsed config the hosts could not read back from what we would write.

    Refused: nesting deeper than :data:`MAX_NESTING`, a string (or key) holding an unpaired
    surrogate (``"\\ud800"``: it has no UTF-8 form, so the file could not be written).

    Raises:
        ConfigParseError: naming the file and the problem.
    """
    stack: list[tuple[Any, int]] = [(plain(value), 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            _check_text(item, path)
            continue
        if isinstance(item, Mapping):
            children: Iterable[Any] = item.values()
            for key in item:
                _check_text(str(key), path)
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        if depth >= MAX_NESTING:
            raise ConfigParseError(f"{path}: nested more than {MAX_NESTING} levels deep, more "
                                   "than a host reads; not changed")
        stack.extend((child, depth + 1) for child in children)


def _check_text(text: str, path: Path) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ConfigParseError(f"{path}: a string holds an unpaired surrogate ({text[:40]!r}), "
                               "which has no UTF-8 form; not changed") from None


def parse_json_config(text: str, path: Path, *, refuse_duplicates: bool = True) -> Any:
    """Parse a JSON config strictly, refusing what a host could not read or we could not keep.

    Refused: anything that is not JSON (comments, trailing commas), a repeated key (a rewrite
    would drop one; ``refuse_duplicates``), ``NaN``/``Infinity``, a number beyond a double's
    range, nesting deeper than :data:`MAX_NESTING`, an unpaired surrogate.

    Raises:
        ConfigParseError: naming the file (and the line and column when known). Never
            ``RecursionError`` or any other exception.
    """
    if not text.strip():
        return {}
    hook = _reject_duplicate_keys if refuse_duplicates else _keep_duplicate_keys
    try:
        doc = json.loads(text, object_pairs_hook=hook, parse_constant=_refuse_constant,
                         parse_float=_finite_float, parse_int=_bounded_int)
    except json.JSONDecodeError as exc:
        raise ConfigParseError(
            f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
            "not changed. Comments and trailing commas are not JSON and a rewrite would lose "
            "them: fix or remove them first"
        ) from None
    except _Unreadable as exc:
        raise ConfigParseError(f"{path}: {_position(text, exc.token)}{exc}; not changed") \
            from None
    except RecursionError:
        raise ConfigParseError(f"{path}: nested more than {MAX_NESTING} levels deep, more than "
                               "a host reads; not changed") from None
    except ValueError as exc:
        raise ConfigParseError(f"{path}: {exc}; not changed") from None
    check_values(doc, path)
    return doc


# -- line endings -----------------------------------------------------------------------------


def line_ending(text: str | None) -> str:
    """The file's own line ending: ``"\\r\\n"`` when most of its lines end so, else ``"\\n"``."""
    if not text:
        return "\n"
    crlf = text.count("\r\n")
    return "\r\n" if crlf > text.count("\n") - crlf else "\n"


def keep_line_ending(new_text: str, original: str | None) -> str:
    """``new_text`` with the lines it added ending as ``original``'s do.

    In a CRLF file every bare LF becomes CRLF (tomlkit keeps the file's own lines and writes
    ours with LF); an LF file is given back as it is, so its lines stay byte for byte.
    """
    if line_ending(original) == "\r\n":
        return re.sub(r"(?<!\r)\n", "\r\n", new_text)
    return new_text


# -- locking, backup, write -------------------------------------------------------------------


def lock_path(path: Path) -> Path:
    """The lock file of a config: ``.<name>.lock`` beside the file (the link's target)."""
    target = write_target(path)
    return target.with_name(f".{target.name}.lock")


@contextmanager
def config_lock(paths: Iterable[Path], *, timeout: float = LOCK_TIMEOUT_S) -> Iterator[None]:
    """Hold the lock of every config in ``paths`` (taken in one order, so two runs never wait
    on each other crosswise); their folders are created when missing.

    Raises:
        ConfigWriteError: a lock could not be taken within ``timeout`` (another readingroom is
            editing the file) or not created at all.
    """
    locks = sorted({lock_path(p): p for p in paths}.items(), key=lambda item: str(item[0]))
    with ExitStack() as stack:
        for lock, path in locks:
            try:
                lock.parent.mkdir(parents=True, exist_ok=True)
                stack.enter_context(FileLock(lock, timeout=timeout))
            except Timeout:
                raise ConfigWriteError(
                    f"{path}: another program holds its lock {lock} (another readingroom "
                    "editing it?); not changed, try again when it is done") from None
            except OSError as exc:
                raise ConfigWriteError(f"{path}: could not lock it ({exc}); not changed") \
                    from exc
        yield


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
    path: Path, text: str, *, original: bytes | None,
    now: Callable[[], datetime] = datetime.now,
) -> Path | None:
    """Back up ``path`` (when it existed) and replace it atomically; returns the backup path.

    A symlink is written through: its target is backed up (beside the target) and replaced.

    Args:
        path: the config file.
        text: its new content, written as UTF-8 without a BOM, exactly as given.
        original: the bytes read from ``path`` (``None``: it did not exist). The file is
            replaced only while it still holds them.
        now: the clock that timestamps the backup's name.

    Raises:
        ConfigChangedError: the file no longer holds ``original`` (another program wrote
            it); nothing was changed and no backup is left.
        ConfigWriteError: the file is read-only, or the backup or the write failed (the
            original is intact).
    """
    target = write_target(path)
    backup = None
    try:
        refuse_read_only(target)
        if original is not None:
            backup = backup_path(target, now())
            shutil.copy2(target, backup)
            if backup.read_bytes() != original:
                raise FileChangedError(f"{target} changed since it was read")
        write_atomically(target, text, expect=original)
    except (FileChangedError, FileNotFoundError) as exc:
        _discard(backup)
        if isinstance(exc, FileNotFoundError) and original is None:
            raise ConfigWriteError(f"{path}: could not write ({exc}); not changed") from exc
        raise ConfigChangedError(f"{path}: another program changed it while it was being "
                                 "edited; not changed") from exc
    except ReadOnlyFileError:
        raise ConfigWriteError(
            f"{path}: the file is read-only; not changed. Make it writable to let readingroom "
            "edit it, or add the entries by hand (install-host --print shows them)") from None
    except OSError as exc:
        _discard(backup)
        raise ConfigWriteError(f"{path}: could not write ({exc}); not changed") from exc
    return backup


def _discard(backup: Path | None) -> None:
    if backup is not None:
        backup.unlink(missing_ok=True)
