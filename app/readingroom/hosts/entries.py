"""A server as a host entry: built from its declaration, and recognised as ours when found.

Which entries are ours: an entry whose *name* is a server of the suite's catalogue **and**
whose ``command`` names an executable called like that server (``ndl-mcp``, ``ndl-mcp.exe``,
case-insensitive, in any folder). An entry of the same name pointing anywhere else belongs to
someone else: ``install`` and ``remove`` leave it alone unless forced.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..catalog import SERVERS
from ..core.declaration import ServerInfo
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
    return ServerEntry(
        name=info.name,
        command=ctx.join(install_dir, ctx.executable_name(info.name)),
        args=tuple(info.args),
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
        ``name`` (optionally ``.exe``/``.cmd``/``.bat``; case-insensitive; any folder).
    """
    names = SERVERS.keys() if known is None else known
    if name not in names or not isinstance(command, str) or not command:
        return False
    basename = re.split(r"[\\/]", command.strip())[-1].lower()
    for suffix in _WINDOWS_LAUNCHER_SUFFIXES:
        if basename.endswith(suffix):
            basename = basename[: -len(suffix)]
            break
    return basename == name.lower()


def _executable_problem(command: str) -> str | None:
    path = Path(command)
    if not path.is_file():
        return f"executable not found: {command}"
    if os.name != "nt" and not os.access(path, os.X_OK):
        return f"not executable: {command}"
    return None


def check_entry(current: Any, entry: ServerEntry, command_key: str = "command") -> EntryOutcome:
    """Verify one entry as found in a host file (``None`` when absent)."""
    if current is None:
        return EntryOutcome(entry.name, Action.MISSING, "no entry")
    current = plain(current)
    if not isinstance(current, Mapping):
        return EntryOutcome(entry.name, Action.FOREIGN, "entry is not a table")
    command = current.get(command_key)
    if not is_ours(entry.name, command, {entry.name}):
        return EntryOutcome(entry.name, Action.FOREIGN, f"points at {command!r}")
    problem = _executable_problem(str(command))
    if problem:
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
