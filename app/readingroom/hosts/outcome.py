"""What an operation on a host did: one :class:`Action` per entry, gathered per file and host.

The host errors are drawn here too: a file that does not parse is refused untouched
(:class:`ConfigParseError`), a write that fails or does not read back is a
:class:`ConfigWriteError`, and one given up because another program kept changing the file is a
:class:`ConfigChangedError`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

__all__ = [
    "FAILING",
    "Action",
    "ConfigChangedError",
    "ConfigParseError",
    "ConfigWriteError",
    "EntryOutcome",
    "FileOutcome",
    "HostError",
    "HostOutcome",
]


class HostError(Exception):
    """A host configuration could not be handled; the message says which file and why."""


class ConfigParseError(HostError):
    """An existing config file does not parse (or has the wrong shape); it was not touched."""


class ConfigWriteError(HostError):
    """Writing a config file failed, or the written file did not read back as intended."""


class ConfigChangedError(ConfigWriteError):
    """Another program changed the config file between our read and our replace (every time we
    tried); it was not overwritten."""


class Action(StrEnum):
    """What happened to one entry (or what verify found)."""

    ADDED = "added"
    UPDATED = "updated"
    REPAIRED = "repaired"
    """install: a stale entry of ours (its executable moved or gone) pointed at this install."""
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
"""The actions that make an operation fail."""


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
