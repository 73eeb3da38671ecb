"""What every host module shares: where files are, what an entry is, and how a file is written.

The write discipline, the same for every host file:

1. **Parse or refuse.** An existing file that does not parse (or whose server table is not a
   table) is refused with a message naming the file and the position; it is left untouched and
   no backup is made. A missing file starts as an empty document.
2. **Touch only our entries.** Other servers, other keys, their order (and, in TOML, comments
   and formatting) come through as they were.
3. **Timestamped backup** ``<file>.bak-YYYYmmdd-HHMMSS`` of an existing file before it changes.
4. **Atomic replace**: a temporary file in the same folder, flushed and fsynced, then
   ``os.replace``. UTF-8 **without** a byte-order mark, LF line ends. A BOM already present in
   an existing file is tolerated when reading and removed on write (Claude Desktop rejects a
   BOM and resets its server list).
5. **Re-read and verify** the written file: it parses, and every entry is what we wrote.
6. **Idempotent**: when nothing would change the file is not written and no backup is made.

Which entries are ours: an entry whose *name* is a server of the suite's catalogue **and**
whose ``command`` names an executable called like that server (``ndl-mcp``, ``ndl-mcp.exe``,
case-insensitive, in any folder). An entry of the same name pointing anywhere else belongs to
someone else: ``install`` and ``remove`` leave it alone unless forced.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Iterable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any, ClassVar

from ..catalog import SERVERS, ServerInfo
from ..core.settings import ENV_RECEIPT_LOG

__all__ = [
    "FAILING",
    "RECEIPTS_FILENAME",
    "STARTUP_TIMEOUT_S",
    "TOOL_TIMEOUT_MARGIN_S",
    "Action",
    "ConfigParseError",
    "ConfigWriteError",
    "EntryOutcome",
    "FileHost",
    "FileOutcome",
    "Host",
    "HostContext",
    "HostError",
    "HostOutcome",
    "JsonHost",
    "ServerEntry",
    "backup_path",
    "build_entries",
    "build_entry",
    "check_entry",
    "is_ours",
    "ledger_path",
    "parse_json_config",
    "plain",
    "read_config_text",
    "replace_atomically",
    "write_config",
]

RECEIPTS_FILENAME = "receipts.jsonl"
"""The suite's one receipt ledger, in the data folder."""

STARTUP_TIMEOUT_S = 30
"""Start-up allowance: a first, virus-scanned start of a frozen executable is slow."""

TOOL_TIMEOUT_MARGIN_S = 30
"""Host per-call timeout = the server's own deadline + this, so the server answers first."""

BOM = "\ufeff"


class HostError(Exception):
    """A host configuration could not be handled; the message says which file and why."""


class ConfigParseError(HostError):
    """An existing config file does not parse (or has the wrong shape); it was not touched."""


class ConfigWriteError(HostError):
    """Writing a config file failed, or the written file did not read back as intended."""


class Action(StrEnum):
    """What happened to one entry (or what verify found)."""

    ADDED = "added"
    UPDATED = "updated"
    UNCHANGED = "unchanged"
    REMOVED = "removed"
    ABSENT = "absent"
    """remove: no entry of that name (nothing to do)."""
    OK = "ok"
    """verify: present, ours, executable found."""
    MISSING = "missing"
    """verify: no entry (or no file)."""
    FOREIGN = "not ours"
    """an entry of that name points at another program; left alone."""
    BROKEN = "broken"
    """verify: ours, but its executable is missing or a secret is written in it."""
    PRINTED = "printed"
    """the command to run was printed; nothing was changed (Claude Code without its CLI)."""
    FAILED = "failed"


FAILING = frozenset({Action.MISSING, Action.FOREIGN, Action.BROKEN, Action.FAILED})


Runner = Callable[[Sequence[str]], "subprocess.CompletedProcess[str]"]


def _run_command(argv: Sequence[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(argv), capture_output=True, text=True, encoding="utf-8", errors="replace",
        timeout=120, check=False,
    )


@dataclass(frozen=True)
class HostContext:
    """Where a host keeps its files, and how to find and run programs; injectable for tests."""

    home: Path
    appdata: Path | None = None
    """``%APPDATA%`` (Windows roaming application data)."""
    localappdata: Path | None = None
    """``%LOCALAPPDATA%`` (Windows local application data; MSIX packages live under it)."""
    env: Mapping[str, str] = field(default_factory=dict)
    platform: str = sys.platform
    """``win32``, ``darwin`` or ``linux`` (as :data:`sys.platform`)."""
    now: Callable[[], datetime] = datetime.now
    which: Callable[[str], str | None] = shutil.which
    run: Runner = _run_command

    @classmethod
    def current(cls) -> HostContext:
        """The context of the running user and system."""
        env = dict(os.environ)
        appdata = env.get("APPDATA")
        localappdata = env.get("LOCALAPPDATA")
        return cls(
            home=Path.home(),
            appdata=Path(appdata) if appdata else None,
            localappdata=Path(localappdata) if localappdata else None,
            env=env,
            platform=sys.platform,
        )

    @property
    def is_windows(self) -> bool:
        """True on Windows."""
        return self.platform == "win32"

    @property
    def is_macos(self) -> bool:
        """True on macOS."""
        return self.platform == "darwin"

    def config_home(self) -> Path:
        """``$XDG_CONFIG_HOME`` when set to an absolute path, else ``~/.config``."""
        configured = self.env.get("XDG_CONFIG_HOME", "")
        if configured and Path(configured).is_absolute():
            return Path(configured)
        return self.home / ".config"

    def roaming(self) -> Path:
        """``%APPDATA%`` (falling back to ``~/AppData/Roaming`` when unset)."""
        return self.appdata or self.home / "AppData" / "Roaming"

    def executable_name(self, name: str) -> str:
        """``name`` with ``.exe`` on Windows."""
        return f"{name}.exe" if self.is_windows else name

    def _pure(self, text: str) -> PurePosixPath | PureWindowsPath:
        return PureWindowsPath(text) if self.is_windows else PurePosixPath(text)

    def absolute(self, value: str | os.PathLike[str]) -> str:
        """``value`` unchanged when already absolute, else resolved against the cwd."""
        text = os.fspath(value)
        if Path(text).is_absolute() or self._pure(text).is_absolute():
            return text
        return str(Path(text).resolve())

    def join(self, folder: str | os.PathLike[str], name: str) -> str:
        """``folder/name`` as an absolute path string.

        A folder absolute on the running system is joined natively; otherwise it must be
        absolute for the context's platform (``C:\\…`` written for Windows from elsewhere).
        """
        text = os.fspath(folder)
        if Path(text).is_absolute():
            return str(Path(text) / name)
        if not self._pure(text).is_absolute():
            raise ValueError(f"{text!r} is not an absolute path")
        return str(self._pure(text) / name)


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


def ledger_path(data_dir: str | os.PathLike[str], ctx: HostContext) -> str:
    """The shared receipt ledger in ``data_dir`` (absolute, native form)."""
    return ctx.join(data_dir, RECEIPTS_FILENAME)


def build_entry(
    info: ServerInfo,
    install_dir: str | os.PathLike[str],
    data_dir: str | os.PathLike[str],
    ctx: HostContext,
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
    ctx: HostContext,
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


def plain(value: Any) -> Any:
    """A tomlkit item as plain Python; anything else unchanged."""
    unwrap = getattr(value, "unwrap", None)
    return unwrap() if callable(unwrap) else value


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


@dataclass
class EntryOutcome:
    """What happened to one server's entry."""

    name: str
    action: Action
    detail: str = ""


@dataclass
class FileOutcome:
    """What happened in one host file (``path`` is None for hosts driven by their own CLI)."""

    path: Path | None
    entries: list[EntryOutcome] = field(default_factory=list)
    backup: Path | None = None
    written: bool = False
    problems: list[str] = field(default_factory=list)
    """File-level problems (verify fails on them)."""
    notes: list[str] = field(default_factory=list)


@dataclass
class HostOutcome:
    """The result of one operation on one host."""

    host: str
    title: str
    files: list[FileOutcome] = field(default_factory=list)

    @property
    def entries(self) -> list[EntryOutcome]:
        """Every entry outcome across files."""
        return [e for f in self.files for e in f.entries]

    @property
    def ok(self) -> bool:
        """No entry failed and no file has a problem."""
        return not any(e.action in FAILING for e in self.entries) and not any(
            f.problems for f in self.files
        )

    @property
    def printed(self) -> bool:
        """Some commands were only printed, not run: registering needs the user's hand."""
        return any(e.action is Action.PRINTED for e in self.entries)

    def render(self) -> str:
        """A short report for people."""
        lines = [f"{self.title}:"]
        for f in self.files:
            lines.append(f"  {f.path}" if f.path else "  (through the claude CLI)")
            lines.extend(f"    {e.name}: {e.action.value}" + (f" - {e.detail}" if e.detail else "")
                         for e in f.entries)
            lines.extend(f"    problem: {p}" for p in f.problems)
            lines.extend(f"    {n}" for n in f.notes)
            if f.backup:
                lines.append(f"    backup: {f.backup}")
        return "\n".join(lines)


# -- reading and writing ---------------------------------------------------------------------


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


def backup_path(path: Path, when: datetime) -> Path:
    """A free ``<file>.bak-YYYYmmdd-HHMMSS`` name beside ``path`` (``-2``, ``-3``… if taken)."""
    stem = f"{path.name}.bak-{when:%Y%m%d-%H%M%S}"
    candidate = path.with_name(stem)
    counter = 2
    while candidate.exists():
        candidate = path.with_name(f"{stem}-{counter}")
        counter += 1
    return candidate


def replace_atomically(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8, no BOM, as given) to ``path`` through a temp file + os.replace."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o7777 if path.exists() else None
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(text.encode("utf-8"))
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        for attempt in range(5):
            try:
                os.replace(tmp, path)
                break
            except PermissionError:
                # Windows refuses the replace while another process (a host, an antivirus
                # scanner) briefly has the file open; it is usually free again within moments.
                if attempt == 4:
                    raise
                time.sleep(0.2 * (attempt + 1))
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_config(path: Path, text: str, ctx: HostContext, *, existed: bool) -> Path | None:
    """Back up ``path`` (when it existed) and replace it atomically; returns the backup path.

    Raises:
        ConfigWriteError: The backup or the write failed (the original is intact).
    """
    backup = None
    try:
        if existed:
            backup = backup_path(path, ctx.now())
            shutil.copy2(path, backup)
        replace_atomically(path, text)
    except OSError as exc:
        raise ConfigWriteError(f"{path}: could not write ({exc}); not changed") from exc
    return backup


# -- hosts -----------------------------------------------------------------------------------


class Host(ABC):
    """One MCP host: print, install, remove and verify the suite's entries."""

    name: ClassVar[str]
    """The ``--host`` value."""
    title: ClassVar[str]

    def __init__(self, ctx: HostContext) -> None:
        self.ctx = ctx

    @abstractmethod
    def candidate_paths(self) -> list[Path]:
        """Every file this host may read its servers from on this platform."""

    def target_paths(self) -> list[Path]:
        """The files ``install`` writes by default."""
        return self.candidate_paths()[:1]

    def config_exists(self) -> bool:
        """Whether the host appears to be set up here (one of its files exists)."""
        return any(p.is_file() for p in self.candidate_paths())

    @abstractmethod
    def render(self, entries: Sequence[ServerEntry]) -> str:
        """What ``--print`` shows: a snippet (or commands) to add by hand."""

    @abstractmethod
    def install(
        self, entries: Sequence[ServerEntry], *, config: Path | None = None, force: bool = False
    ) -> HostOutcome:
        """Add or update the entries (idempotent)."""

    @abstractmethod
    def remove(
        self, names: Sequence[str], *, config: Path | None = None, force: bool = False
    ) -> HostOutcome:
        """Remove our entries of these names; entries that are not ours stay unless forced."""

    @abstractmethod
    def verify(
        self, entries: Sequence[ServerEntry], *, config: Path | None = None
    ) -> HostOutcome:
        """Check the file parses and our entries point at executables that exist."""

    def _outcome(self) -> HostOutcome:
        return HostOutcome(self.name, self.title)


class FileHost(Host):
    """A host whose servers live in a config file we edit (format hooks in subclasses)."""

    servers_key: ClassVar[str]
    rejects_bom: ClassVar[bool] = False
    """The host resets its config when the file starts with a BOM (verify reports it)."""

    # -- format hooks ------------------------------------------------------------------------

    @abstractmethod
    def parse(self, text: str, path: Path) -> Any:
        """Parse the file's text; raise :class:`ConfigParseError` naming the position."""

    @abstractmethod
    def dump(self, doc: Any, original: str | None) -> str:
        """The document as text."""

    @abstractmethod
    def new_document(self) -> Any:
        """An empty document for a file that does not exist yet."""

    @abstractmethod
    def desired_value(self, entry: ServerEntry) -> dict[str, Any]:
        """The entry's value as plain Python (what ``matches`` compares against)."""

    @abstractmethod
    def apply(self, servers: MutableMapping[str, Any], entry: ServerEntry, *,
              replace: bool) -> None:
        """Add the entry, or update our keys of an existing one in place (``replace``: anew)."""

    def servers_of(self, doc: Any, path: Path, *, create: bool) -> MutableMapping[str, Any] | None:
        """The document's server table (created when asked); refuse a wrong shape."""
        if not isinstance(doc, MutableMapping):
            raise ConfigParseError(f"{path}: the top level is not an object; not changed")
        servers = doc.get(self.servers_key)
        if servers is None:
            if not create:
                return None
            servers = self.new_servers_table()
            doc[self.servers_key] = servers
            servers = doc[self.servers_key]
        if not isinstance(servers, MutableMapping):
            raise ConfigParseError(
                f"{path}: {self.servers_key!r} is not a table of servers; not changed"
            )
        return servers

    def new_servers_table(self) -> Any:
        """An empty server table."""
        return {}

    def drop(self, doc: Any, servers: MutableMapping[str, Any], name: str) -> None:
        """Delete one entry."""
        del servers[name]

    def matches(self, current: Any, entry: ServerEntry) -> bool:
        """Whether an existing entry already holds every value we would write."""
        current = plain(current)
        if not isinstance(current, Mapping):
            return False
        for key, want in self.desired_value(entry).items():
            have = current.get(key)
            if key == "env" and isinstance(want, Mapping):
                if not isinstance(have, Mapping) or any(have.get(k) != v for k, v in want.items()):
                    return False
            elif have != want:
                return False
        return True

    def _command_of(self, current: Any) -> Any:
        current = plain(current)
        return current.get("command") if isinstance(current, Mapping) else None

    # -- operations --------------------------------------------------------------------------

    def _paths(self, config: Path | None, *, existing_only: bool) -> list[Path]:
        if config is not None:
            return [config]
        if existing_only:
            return [p for p in self.candidate_paths() if p.is_file()]
        return self.target_paths()

    def _load(self, path: Path) -> tuple[ConfigText, Any]:
        source = read_config_text(path)
        doc = self.new_document() if source.text is None else self.parse(source.text, path)
        return source, doc

    def install(
        self, entries: Sequence[ServerEntry], *, config: Path | None = None, force: bool = False
    ) -> HostOutcome:
        """Add or update the entries in every target file (idempotent)."""
        outcome = self._outcome()
        # Parse every target before writing any, so one broken file leaves all untouched.
        loaded = [self._load(path) for path in self._paths(config, existing_only=False)]
        for source, doc in loaded:
            outcome.files.append(self._install_into(source, doc, entries, force))
        return outcome

    def _install_into(
        self, source: ConfigText, doc: Any, entries: Sequence[ServerEntry], force: bool
    ) -> FileOutcome:
        result = FileOutcome(source.path)
        servers = self.servers_of(doc, source.path, create=True)
        assert servers is not None
        changed = False
        for entry in entries:
            current = servers.get(entry.name)
            if current is None:
                self.apply(servers, entry, replace=True)
                result.entries.append(EntryOutcome(entry.name, Action.ADDED))
                changed = True
            elif not is_ours(entry.name, self._command_of(current), {entry.name}):
                if force:
                    self.apply(servers, entry, replace=True)
                    result.entries.append(EntryOutcome(
                        entry.name, Action.UPDATED,
                        f"replaced an entry pointing at {self._command_of(current)!r} (--force)",
                    ))
                    changed = True
                else:
                    result.entries.append(EntryOutcome(
                        entry.name, Action.FOREIGN,
                        f"points at {self._command_of(current)!r}; left alone "
                        "(--force replaces it)",
                    ))
            elif self.matches(current, entry):
                result.entries.append(EntryOutcome(entry.name, Action.UNCHANGED))
            else:
                self.apply(servers, entry, replace=False)
                result.entries.append(EntryOutcome(entry.name, Action.UPDATED))
                changed = True
        if source.had_bom:
            result.notes.append("removed a UTF-8 byte-order mark")
            changed = True
        if changed:
            self._write(source, doc, result)
            written = [e for e in entries if any(
                o.name == e.name and o.action in (Action.ADDED, Action.UPDATED)
                for o in result.entries)]
            self._reread(source.path, present=written, absent=())
        return result

    def remove(
        self, names: Sequence[str], *, config: Path | None = None, force: bool = False
    ) -> HostOutcome:
        """Remove our entries of these names from every file that has them."""
        outcome = self._outcome()
        paths = self._paths(config, existing_only=True)
        if not paths:
            outcome.files.append(FileOutcome(
                self.candidate_paths()[0],
                [EntryOutcome(n, Action.ABSENT, "no config file") for n in names],
            ))
            return outcome
        loaded = [self._load(path) for path in paths]
        for source, doc in loaded:
            outcome.files.append(self._remove_from(source, doc, names, force))
        return outcome

    def _remove_from(
        self, source: ConfigText, doc: Any, names: Sequence[str], force: bool
    ) -> FileOutcome:
        result = FileOutcome(source.path)
        if source.text is None:
            result.entries = [EntryOutcome(n, Action.ABSENT, "no config file") for n in names]
            return result
        servers = self.servers_of(doc, source.path, create=False)
        removed = []
        for name in names:
            current = None if servers is None else servers.get(name)
            if current is None:
                result.entries.append(EntryOutcome(name, Action.ABSENT))
            elif not is_ours(name, self._command_of(current), {name}) and not force:
                result.entries.append(EntryOutcome(
                    name, Action.FOREIGN,
                    f"points at {self._command_of(current)!r}; left alone (--force removes it)",
                ))
            else:
                assert servers is not None
                self.drop(doc, servers, name)
                removed.append(name)
                result.entries.append(EntryOutcome(name, Action.REMOVED))
        if removed:
            self._write(source, doc, result)
            self._reread(source.path, present=(), absent=removed)
        return result

    def verify(
        self, entries: Sequence[ServerEntry], *, config: Path | None = None
    ) -> HostOutcome:
        """Check every existing file: it parses, our entries are there and runnable."""
        outcome = self._outcome()
        paths = self._paths(config, existing_only=True)
        if not paths:
            where = config or (self.candidate_paths() or [None])[0]
            outcome.files.append(FileOutcome(
                where, [EntryOutcome(e.name, Action.MISSING, "no config file") for e in entries],
            ))
            return outcome
        for path in paths:
            source, doc = self._load(path)
            result = FileOutcome(path)
            if source.text is None:
                result.entries = [EntryOutcome(e.name, Action.MISSING, "no config file")
                                  for e in entries]
            else:
                if source.had_bom and self.rejects_bom:
                    result.problems.append(
                        f"starts with a UTF-8 byte-order mark, which {self.title} rejects "
                        "(install rewrites the file without it)"
                    )
                servers = self.servers_of(doc, path, create=False) or {}
                result.entries = [check_entry(servers.get(e.name), e) for e in entries]
            outcome.files.append(result)
        return outcome

    # -- helpers -----------------------------------------------------------------------------

    def _write(self, source: ConfigText, doc: Any, result: FileOutcome) -> None:
        text = self.dump(doc, source.text)
        result.backup = write_config(source.path, text, self.ctx, existed=source.text is not None)
        result.written = True

    def _reread(self, path: Path, *, present: Iterable[ServerEntry],
                absent: Iterable[str]) -> None:
        backup_hint = "; the previous file is in the backup beside it"
        try:
            source, doc = self._load(path)
        except ConfigParseError as exc:
            raise ConfigWriteError(f"written file does not read back: {exc}{backup_hint}") from exc
        if source.had_bom:
            raise ConfigWriteError(f"{path}: written file has a BOM{backup_hint}")
        servers = self.servers_of(doc, path, create=False) or {}
        for entry in present:
            if not self.matches(servers.get(entry.name), entry):
                raise ConfigWriteError(f"{path}: {entry.name} did not read back{backup_hint}")
        for name in absent:
            if name in servers:
                raise ConfigWriteError(f"{path}: {name} is still present{backup_hint}")


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


class JsonHost(FileHost):
    """A host with a JSON config file and a ``{servers_key: {NAME: {...}}}`` table."""

    def parse(self, text: str, path: Path) -> Any:
        """Parse JSON strictly (see :func:`parse_json_config`)."""
        return parse_json_config(text, path)

    def dump(self, doc: Any, original: str | None) -> str:
        """Indented JSON (the file's own indent when it has one), UTF-8 characters kept."""
        indent: str | int = 2
        if original:
            match = re.search(r"^([ \t]+)\S", original, re.MULTILINE)
            if match:
                indent = match.group(1)
        return json.dumps(doc, indent=indent, ensure_ascii=False) + "\n"

    def new_document(self) -> Any:
        """An empty JSON object."""
        return {}

    def base_value(self, entry: ServerEntry) -> dict[str, Any]:
        """``command``, ``args`` and ``env`` as most JSON hosts spell them."""
        return {"command": entry.command, "args": list(entry.args), "env": dict(entry.env)}

    def desired_value(self, entry: ServerEntry) -> dict[str, Any]:
        """The entry's JSON value."""
        return self.base_value(entry)

    def apply(self, servers: MutableMapping[str, Any], entry: ServerEntry, *,
              replace: bool) -> None:
        """Set our keys; other keys of an existing entry (and its other env vars) stay."""
        desired = self.desired_value(entry)
        current = servers.get(entry.name)
        if replace or not isinstance(current, dict):
            servers[entry.name] = desired
            return
        for key, value in desired.items():
            if key == "env" and isinstance(current.get("env"), dict):
                current["env"].update(value)
            else:
                current[key] = value

    def render(self, entries: Sequence[ServerEntry]) -> str:
        """A JSON snippet with the server table."""
        snippet = {self.servers_key: {e.name: self.desired_value(e) for e in entries}}
        return json.dumps(snippet, indent=2, ensure_ascii=False) + "\n"
