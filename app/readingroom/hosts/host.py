"""The host classes: :class:`Host` (what every host does), :class:`FileHost` (the write
discipline of :mod:`.files` over a config file) and :class:`JsonHost` (its JSON form).

A host module subclasses one of them and names its files; the operations (install, remove,
verify, print) and their guarantees live here once.
"""

from __future__ import annotations

import json
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, MutableMapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from ..core.files import write_target
from ..core.platform import Machine
from .entries import ServerEntry, check_entry, is_ours, repair_reason, same_meaning
from .files import (
    ConfigText,
    config_lock,
    keep_line_ending,
    parse_json_config,
    plain,
    read_config_text,
    write_config,
)
from .outcome import (
    Action,
    ConfigChangedError,
    ConfigParseError,
    ConfigWriteError,
    EntryOutcome,
    FileOutcome,
    HostOutcome,
)

__all__ = ["EDIT_ATTEMPTS", "FileHost", "Host", "JsonHost"]

EDIT_ATTEMPTS = 5
"""How often an edit is redone on a file another program changed meanwhile before giving up."""

_Change = Callable[[ConfigText, Any, bool], tuple[FileOutcome, bool]]
"""Plan (``commit`` false) or make (true) one file's change: its outcome, and whether it
changes."""


class Host(ABC):
    """One MCP host: print, install, remove and verify the suite's entries."""

    name: ClassVar[str]
    """The ``--host`` value."""
    title: ClassVar[str]

    def __init__(self, ctx: Machine) -> None:
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
        """Whether an existing entry already means every value we would write.

        Compared by meaning (:func:`.entries.same_meaning`): key order, ``30`` against
        ``30.0``, an inline table against a sub-table do not count, and an absent key equals
        an empty list or table (Codex drops ``args = []`` when it rewrites its file). Variables
        a user added to ``env`` and keys of their own are allowed.
        """
        current = plain(current)
        if not isinstance(current, Mapping):
            return False
        return all(self.key_matches(current, key, want)
                   for key, want in self.desired_value(entry).items())

    @staticmethod
    def key_matches(current: Mapping[str, Any], key: str, want: Any) -> bool:
        """Whether ``current[key]`` already means ``want`` (``env``: holds our variables)."""
        have = plain(current.get(key))
        if have is None and isinstance(want, list | dict) and not want:
            return True
        if key == "env" and isinstance(want, Mapping):
            return isinstance(have, Mapping) and all(
                k in have and same_meaning(have[k], v) for k, v in want.items())
        return same_meaning(have, want)

    def _command_of(self, current: Any) -> Any:
        current = plain(current)
        return current.get("command") if isinstance(current, Mapping) else None

    # -- operations --------------------------------------------------------------------------

    def _paths(self, config: Path | None, *, existing_only: bool) -> list[Path]:
        if config is not None:
            return [config]
        if existing_only:
            # Anything at a config path counts: a folder there is an error to report (read
            # refuses it), never "no config file".
            return [p for p in self.candidate_paths() if p.exists() or p.is_symlink()]
        return self.target_paths()

    def _load(self, path: Path) -> tuple[ConfigText, Any]:
        source = read_config_text(path)
        doc = self.new_document() if source.text is None else self.parse(source.text, path)
        return source, doc

    def install(
        self, entries: Sequence[ServerEntry], *, config: Path | None = None, force: bool = False
    ) -> HostOutcome:
        """Add or update the entries in every target file (idempotent)."""
        # Parse every target before writing any, so one broken file leaves all untouched.
        loaded = [self._load(path) for path in self._paths(config, existing_only=False)]
        return self._change(loaded, lambda source, doc, commit: self._install_into(
            source, doc, entries, force, commit=commit))

    def _change(self, loaded: Sequence[tuple[ConfigText, Any]], change: _Change) -> HostOutcome:
        """Plan ``change`` on every loaded file; then, holding their locks, redo it on each
        file that changes, read afresh, and write it.

        Files that do not change are neither locked nor written, so a refused or unchanged file
        gets no lock file beside it either.
        """
        outcome = self._outcome()
        planned = [change(source, doc, False) for source, doc in loaded]
        changing = [source.path for (source, _), (_, changed) in zip(loaded, planned, strict=True)
                    if changed]
        if not changing:
            outcome.files = [result for result, _ in planned]
            return outcome
        with config_lock(changing):
            for (source, _), (result, changed) in zip(loaded, planned, strict=True):
                outcome.files.append(self._edit(source.path, change) if changed else result)
        return outcome

    def _edit(self, path: Path, change: _Change) -> FileOutcome:
        """Read ``path`` (under its lock), apply ``change`` and write it; when another program
        wrote the file meanwhile (the host itself does not take our lock), redo the change on
        what the file holds now, :data:`EDIT_ATTEMPTS` times at most."""
        for attempt in range(EDIT_ATTEMPTS):
            source, doc = self._load(path)
            try:
                result, _ = change(source, doc, True)
                return result
            except ConfigChangedError as exc:
                if attempt == EDIT_ATTEMPTS - 1:
                    raise ConfigChangedError(
                        f"{exc} ({EDIT_ATTEMPTS} times). Close the program that keeps "
                        "writing it (the host?) and try again") from None
        raise AssertionError("unreachable")

    def _install_into(
        self, source: ConfigText, doc: Any, entries: Sequence[ServerEntry], force: bool, *,
        commit: bool,
    ) -> tuple[FileOutcome, bool]:
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
            elif stale := repair_reason(entry.name, self._command_of(current), entry.command,
                                        windows=self.ctx.is_windows):
                # Our own entry, in place, keeps the user's keys; anyone else's is made anew.
                ours = is_ours(entry.name, self._command_of(current), {entry.name})
                self.apply(servers, entry, replace=not ours)
                result.entries.append(EntryOutcome(entry.name, Action.REPAIRED, stale))
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
        if changed and commit:
            self._write(source, doc, result)
            written = [e for e in entries if any(
                o.name == e.name and o.action in (Action.ADDED, Action.UPDATED, Action.REPAIRED)
                for o in result.entries)]
            self._reread(source.path, present=written, absent=())
        return result, changed

    def remove(
        self, names: Sequence[str], *, config: Path | None = None, force: bool = False
    ) -> HostOutcome:
        """Remove our entries of these names from every file that has them."""
        paths = self._paths(config, existing_only=True)
        if not paths:
            outcome = self._outcome()
            outcome.files.append(FileOutcome(
                self.candidate_paths()[0],
                [EntryOutcome(n, Action.ABSENT, "no config file") for n in names],
            ))
            return outcome
        loaded = [self._load(path) for path in paths]
        return self._change(loaded, lambda source, doc, commit: self._remove_from(
            source, doc, names, force, commit=commit))

    def _remove_from(
        self, source: ConfigText, doc: Any, names: Sequence[str], force: bool, *, commit: bool
    ) -> tuple[FileOutcome, bool]:
        result = FileOutcome(source.path)
        if source.text is None:
            result.entries = [EntryOutcome(n, Action.ABSENT, "no config file") for n in names]
            return result, False
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
        if removed and commit:
            self._write(source, doc, result)
            self._reread(source.path, present=(), absent=removed)
        return result, bool(removed)

    def verify(
        self, entries: Sequence[ServerEntry], *, config: Path | None = None
    ) -> HostOutcome:
        """Check every existing file: it parses, our entries are there and runnable."""
        outcome = self._outcome()
        paths = self._paths(config, existing_only=True)
        if not paths:
            candidates = self.candidate_paths()
            where = config or (candidates[0] if candidates else None)
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
                result.entries = [check_entry(servers.get(e.name), e,
                                              windows=self.ctx.is_windows) for e in entries]
            outcome.files.append(result)
        return outcome

    # -- helpers -----------------------------------------------------------------------------

    def _write(self, source: ConfigText, doc: Any, result: FileOutcome) -> None:
        text = keep_line_ending(self.dump(doc, source.text), source.text)
        result.backup = write_config(source.path, text, original=source.raw, now=self.ctx.now)
        result.written = True
        if source.path.is_symlink():
            result.notes.append(f"a symlink: written through it to {write_target(source.path)}")

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
        return json.dumps(doc, indent=indent, ensure_ascii=False, allow_nan=False) + "\n"

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
            if self.key_matches(current, key, value):
                continue
            if key == "env" and isinstance(current.get("env"), dict):
                current["env"].update(value)
            else:
                current[key] = value

    def render(self, entries: Sequence[ServerEntry]) -> str:
        """A JSON snippet with the server table."""
        snippet = {self.servers_key: {e.name: self.desired_value(e) for e in entries}}
        return json.dumps(snippet, indent=2, ensure_ascii=False) + "\n"
