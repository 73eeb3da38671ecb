"""A server as a host entry: built from its declaration, and recognised as ours when found.

Which entries are ours: an entry whose *name* is a server of the suite's catalogue **and**
whose ``command`` names an executable called like that server (``ndl-mcp``, ``ndl-mcp.exe``,
case-insensitive, in any folder). An entry of the same name pointing anywhere else belongs to
someone else: ``install`` and ``remove`` leave it alone unless forced — except a *stale* one
(:func:`repair_reason`): our executable in another install folder, or an absolute command
where no file exists any more. ``install`` repairs those.

Entries are compared by meaning (:func:`same_meaning`): hosts that re-serialise their own
files (Codex after any ``codex mcp add``) write ``30.0`` for ``30``, reorder keys or move a
table, and that is not a change.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PureWindowsPath
from typing import Any

from ..catalog import SERVERS
from ..core.declaration import ServerInfo, expand_data_args
from ..core.platform import Machine
from ..core.settings import ENV_RECEIPT_LOG
from .files import plain
from .outcome import Action, EntryOutcome

__all__ = [
    "RECEIPTS_FILENAME",
    "STARTUP_TIMEOUT_S",
    "TOOL_TIMEOUT_MARGIN_S",
    "ServerEntry",
    "build_entries",
    "build_entry",
    "check_entry",
    "is_ours",
    "ledger_path",
    "repair_reason",
    "same_meaning",
]

RECEIPTS_FILENAME = "receipts.jsonl"
"""The suite's one receipt ledger, in the data folder."""

STARTUP_TIMEOUT_S = 30
"""Start-up allowance: a first, virus-scanned start of a frozen executable is slow."""

TOOL_TIMEOUT_MARGIN_S = 30
"""Host per-call timeout = the server's own deadline + this, so the server answers first."""


@dataclass(frozen=True)
class ServerEntry:
    """One server as a host entry: built from the catalogue, the install and the data folder."""

    name: str
    command: str
    """Absolute path of the executable, native form (backslashes on Windows)."""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    """Non-secret settings written literally into the entry."""
    secret_names: tuple[str, ...] = ()
    """Secret variable *names*; never a value. Resolved at run time (environment, keyring)."""
    deadline_s: float = 90.0
    """The server's own per-call deadline."""
    path_env: frozenset[str] = frozenset()
    """Keys of ``env`` whose values are paths (rendered with forward slashes in TOML)."""


def ledger_path(data_dir: str | os.PathLike[str], ctx: Machine) -> str:
    """The shared receipt ledger in ``data_dir`` (absolute, native form)."""
    return ctx.join(data_dir, RECEIPTS_FILENAME)


def build_entry(
    info: ServerInfo,
    install_dir: str | os.PathLike[str],
    data_dir: str | os.PathLike[str],
    ctx: Machine,
) -> ServerEntry:
    """The host entry of one catalogue server installed in ``install_dir``.

    Raises:
        ValueError: ``install_dir`` or ``data_dir`` is not absolute (hosts start servers from
            folders of their own choosing, so a relative path would point nowhere).
    """
    def in_data(relative: str) -> str:
        folder = ctx.absolute(data_dir)
        for part in filter(None, relative.split("/")):
            folder = ctx.join(folder, part)
        return folder

    return ServerEntry(
        name=info.name,
        command=ctx.join(install_dir, ctx.executable_name(info.name)),
        args=(*expand_data_args(info.data_args, in_data), *info.args),
        env={ENV_RECEIPT_LOG: ledger_path(data_dir, ctx)},
        secret_names=tuple(info.secrets),
        deadline_s=info.deadline_s,
        path_env=frozenset({ENV_RECEIPT_LOG}),
    )


def build_entries(
    servers: Iterable[ServerInfo],
    install_dir: str | os.PathLike[str],
    data_dir: str | os.PathLike[str],
    ctx: Machine,
) -> list[ServerEntry]:
    """:func:`build_entry` for each server, in order."""
    return [build_entry(info, install_dir, data_dir, ctx) for info in servers]


_WINDOWS_LAUNCHER_SUFFIXES = (".exe", ".cmd", ".bat")


def is_ours(name: str, command: object, known: Collection[str] | None = None) -> bool:
    """Whether a host entry belongs to this suite.

    Args:
        name: The entry's key in the host file.
        command: Its ``command`` value.
        known: Server names of the suite (default: the catalogue).

    Returns:
        True when ``name`` is a suite server and ``command`` names an executable called
        ``name`` (optionally ``.exe``/``.cmd``/``.bat``; case-insensitive; any folder); or
        ``name`` is ``<server>-<instance>`` (book-agent's per-book ``book-agent-mybook``) and
        ``command`` names that catalogue server's executable.
    """
    names = SERVERS.keys() if known is None else known
    if name not in names or not isinstance(command, str) or not command:
        return False
    basename = re.split(r"[\\/]", command.strip())[-1].lower()
    for suffix in _WINDOWS_LAUNCHER_SUFFIXES:
        if basename.endswith(suffix):
            basename = basename[: -len(suffix)]
            break
    lowered = name.lower()
    return basename == lowered or (
        lowered.startswith(basename + "-") and basename in {s.lower() for s in SERVERS})


def same_meaning(have: Any, want: Any) -> bool:
    """Whether two config values mean the same to a host.

    Numbers compare by value (``30 == 30.0``; a boolean is not a number), tables regardless of
    key order or of how they are written (inline or as a sub-table: both arrive here as
    mappings), lists item by item.
    """
    have, want = plain(have), plain(want)
    if isinstance(have, bool) or isinstance(want, bool):
        return isinstance(have, bool) and isinstance(want, bool) and have == want
    if isinstance(have, int | float) and isinstance(want, int | float):
        return float(have) == float(want)
    if isinstance(have, Mapping) and isinstance(want, Mapping):
        return have.keys() == want.keys() and all(same_meaning(have[k], want[k]) for k in want)
    if isinstance(have, Sequence) and not isinstance(have, str) and \
            isinstance(want, Sequence) and not isinstance(want, str):
        return len(have) == len(want) and all(map(same_meaning, have, want))
    return bool(type(have) is type(want) and have == want)


def _is_absolute(command: str, windows: bool) -> bool:
    return Path(command).is_absolute() or (windows and PureWindowsPath(command).is_absolute())


def _same_path(a: str, b: str, windows: bool) -> bool:
    a, b = a.strip().replace("\\", "/"), b.strip().replace("\\", "/")
    return a.casefold() == b.casefold() if windows else a == b


def repair_reason(name: str, command: object, wanted: str, *, windows: bool = False) -> str | None:
    """Why an existing entry called ``name`` is ours to repair, or None when it is not stale.

    Stale: ``command`` names our server's executable (see :func:`is_ours`) in another folder
    than ``wanted``, whether or not it still exists; or ``command`` is an absolute path where
    no file exists any more (the install folder was moved or deleted). A bare program name
    (``npx``, ``uvx``) is never judged missing: the host searches its own ``PATH``, which is
    not ours to see.

    Args:
        name: The entry's key in the host file.
        command: Its ``command`` value.
        wanted: The command we would write.
        windows: Judge paths as on Windows (``C:\\…`` absolute, case-insensitive).
    """
    if not isinstance(command, str) or not command.strip():
        return None
    if is_ours(name, command, {name}):
        if _same_path(command, wanted, windows):
            return None
        if not Path(command).is_file():
            return f"pointed at {command}, which no longer exists"
        return f"pointed at our executable in another folder: {command}"
    if _is_absolute(command, windows) and not Path(command).exists():
        return f"pointed at {command}, which no longer exists"
    return None


def _executable_problem(command: str) -> str | None:
    path = Path(command)
    if not path.is_file():
        return f"executable not found: {command}"
    if os.name != "nt" and not os.access(path, os.X_OK):
        return f"not executable: {command}"
    return None


_REPAIR_HINT = "install again, with --install-dir naming the folder of the executables, repairs it"


def check_entry(current: Any, entry: ServerEntry, command_key: str = "command", *,
                windows: bool = False) -> EntryOutcome:
    """Verify one entry as found in a host file (``None`` when absent)."""
    if current is None:
        return EntryOutcome(entry.name, Action.MISSING, "no entry")
    current = plain(current)
    if not isinstance(current, Mapping):
        return EntryOutcome(entry.name, Action.FOREIGN, "entry is not a table")
    command = current.get(command_key)
    if not is_ours(entry.name, command, {entry.name}):
        stale = repair_reason(entry.name, command, entry.command, windows=windows)
        if stale:
            return EntryOutcome(entry.name, Action.BROKEN, f"{stale} ({_REPAIR_HINT})")
        return EntryOutcome(entry.name, Action.FOREIGN, f"points at {command!r}")
    problem = _executable_problem(str(command))
    if problem:
        if not Path(str(command)).is_file():
            problem = f"{problem} ({_REPAIR_HINT})"
        return EntryOutcome(entry.name, Action.BROKEN, problem)
    env = current.get("env")
    leaked = sorted(n for n in entry.secret_names if isinstance(env, Mapping) and n in env)
    if leaked:
        return EntryOutcome(
            entry.name, Action.BROKEN,
            f"secret written into the config: {', '.join(leaked)} (remove it; the server reads "
            "secrets from the environment or the OS keyring)",
        )
    return EntryOutcome(entry.name, Action.OK, str(command))
