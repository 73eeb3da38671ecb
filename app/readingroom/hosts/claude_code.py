"""Claude Code (CLI): user-scope servers, registered through ``claude mcp add --scope user``.

``~/.claude.json`` is live state that Claude Code rewrites while it runs (and has emptied when
it failed to parse), so it is **never written here**: when ``claude`` is on PATH we run its own
commands, otherwise we print them. The file is only *read*, to see what is registered already
(``$CLAUDE_CONFIG_DIR/.claude.json`` when that variable is set; user-scope servers are its
top-level ``mcpServers``).

The server name goes *before* the ``--env`` options: ``--env`` takes several values and, placed
before the name, swallows it ("Invalid environment variable format: NAME", Claude Code 2.1.x).
``--`` ends the options, so the command and its arguments are passed through untouched.
Secrets are not passed: Claude Code starts servers with its own environment, and the servers
fall back to the OS keyring.
"""

from __future__ import annotations

import shlex
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from .entries import ServerEntry, check_entry, is_ours, repair_reason, same_meaning
from .files import parse_json_config, read_config_text
from .host import Host
from .outcome import Action, EntryOutcome, FileOutcome, HostOutcome

__all__ = ["ClaudeCodeHost"]

PROGRAM = "claude"


class ClaudeCodeHost(Host):
    """Claude Code's user scope, through the ``claude`` CLI."""

    name: ClassVar[str] = "claude-code"
    title: ClassVar[str] = "Claude Code"

    def candidate_paths(self) -> list[Path]:
        """The state file Claude Code keeps its user-scope servers in (read only)."""
        config_dir = self.ctx.env.get("CLAUDE_CONFIG_DIR", "").strip()
        return [Path(config_dir) / ".claude.json" if config_dir else self.ctx.home / ".claude.json"]

    def config_exists(self) -> bool:
        """Claude Code's state file exists, or its CLI is on PATH."""
        return super().config_exists() or self.ctx.which(PROGRAM) is not None

    # -- commands ----------------------------------------------------------------------------

    @staticmethod
    def add_command(entry: ServerEntry, program: str = PROGRAM) -> list[str]:
        """``claude mcp add --scope user --transport stdio NAME [--env K=V…] -- CMD ARGS``."""
        argv = [program, "mcp", "add", "--scope", "user", "--transport", "stdio", entry.name]
        for key, value in entry.env.items():
            argv += ["--env", f"{key}={value}"]
        return [*argv, "--", entry.command, *entry.args]

    @staticmethod
    def remove_command(name: str, program: str = PROGRAM) -> list[str]:
        """``claude mcp remove --scope user NAME``."""
        return [program, "mcp", "remove", "--scope", "user", name]

    def quote(self, argv: Sequence[str]) -> str:
        """One command line as the user's shell wants it typed."""
        if self.ctx.is_windows:
            return subprocess.list2cmdline(list(argv))
        return shlex.join(argv)

    def render(self, entries: Sequence[ServerEntry]) -> str:
        """The ``claude mcp add`` command line of each entry."""
        return "".join(self.quote(self.add_command(e)) + "\n" for e in entries)

    # -- state -------------------------------------------------------------------------------

    def _registered(self, config: Path | None) -> tuple[Path, Mapping[str, Any] | None]:
        """The state file and its user-scope ``mcpServers`` (None when the file is absent)."""
        path = config or self.candidate_paths()[0]
        source = read_config_text(path)
        if source.text is None:
            return path, None
        doc = parse_json_config(source.text, path)
        servers = doc.get("mcpServers") if isinstance(doc, Mapping) else None
        return path, servers if isinstance(servers, Mapping) else {}

    @staticmethod
    def _matches(current: Any, entry: ServerEntry) -> bool:
        if not isinstance(current, Mapping):
            return False
        env = current.get("env") or {}
        return (
            current.get("command") == entry.command
            and same_meaning(list(current.get("args") or []), list(entry.args))
            and isinstance(env, Mapping)
            and all(k in env and same_meaning(env[k], v) for k, v in entry.env.items())
        )

    def _execute(self, argv: list[str]) -> str | None:
        """Run one claude command; the error text when it failed."""
        try:
            done = self.ctx.run(argv)
        except (OSError, subprocess.SubprocessError) as exc:
            return f"{' '.join(argv[:4])}… could not run: {exc}"
        if done.returncode != 0:
            said = (done.stderr or done.stdout or "").strip().splitlines()
            return f"exit {done.returncode}: {said[-1] if said else 'no message'}"
        return None

    def _carry_out(self, name: str, commands: list[list[str]], result: FileOutcome,
                   action: Action, program: str | None) -> None:
        if program is None:
            shown = " && ".join(self.quote(c) for c in commands)
            result.entries.append(EntryOutcome(name, Action.PRINTED, shown))
            return
        for argv in commands:
            error = self._execute([program, *argv[1:]])
            if error:
                result.entries.append(EntryOutcome(name, Action.FAILED, error))
                return
        result.entries.append(EntryOutcome(name, action))

    def _no_cli_note(self, result: FileOutcome) -> None:
        result.notes.append(
            "the claude command is not on PATH: nothing was changed; run the command(s) shown "
            "(readingroom install-host --host claude-code --print lists them)"
        )

    # -- operations --------------------------------------------------------------------------

    def install(
        self, entries: Sequence[ServerEntry], *, config: Path | None = None, force: bool = False
    ) -> HostOutcome:
        """Run ``claude mcp add`` for each entry not already registered as we would."""
        outcome = self._outcome()
        path, servers = self._registered(config)
        program = self.ctx.which(PROGRAM)
        result = FileOutcome(None)
        for entry in entries:
            current = (servers or {}).get(entry.name)
            if current is None:
                self._carry_out(entry.name, [self.add_command(entry)], result, Action.ADDED,
                                program)
            elif stale := repair_reason(entry.name, _command(current), entry.command,
                                        windows=self.ctx.is_windows):
                commands = [self.remove_command(entry.name), self.add_command(entry)]
                self._carry_out(entry.name, commands, result, Action.REPAIRED, program)
                if result.entries[-1].action is Action.REPAIRED:
                    result.entries[-1].detail = stale
            elif not is_ours(entry.name, _command(current), {entry.name}) and not force:
                result.entries.append(EntryOutcome(
                    entry.name, Action.FOREIGN,
                    f"points at {_command(current)!r}; left alone (--force replaces it)",
                ))
            elif self._matches(current, entry):
                result.entries.append(EntryOutcome(entry.name, Action.UNCHANGED))
            else:
                # claude mcp add refuses a name that exists, so an update is remove + add.
                commands = [self.remove_command(entry.name), self.add_command(entry)]
                self._carry_out(entry.name, commands, result, Action.UPDATED, program)
        if program is None and result.entries and any(
            e.action is Action.PRINTED for e in result.entries
        ):
            self._no_cli_note(result)
        result.notes.append(f"state read from {path}")
        outcome.files.append(result)
        return outcome

    def remove(
        self, names: Sequence[str], *, config: Path | None = None, force: bool = False
    ) -> HostOutcome:
        """Run ``claude mcp remove --scope user`` for each of our entries."""
        outcome = self._outcome()
        path, servers = self._registered(config)
        program = self.ctx.which(PROGRAM)
        result = FileOutcome(None)
        for name in names:
            current = (servers or {}).get(name)
            if current is None:
                result.entries.append(EntryOutcome(name, Action.ABSENT))
            elif not is_ours(name, _command(current), {name}) and not force:
                result.entries.append(EntryOutcome(
                    name, Action.FOREIGN,
                    f"points at {_command(current)!r}; left alone (--force removes it)",
                ))
            else:
                self._carry_out(name, [self.remove_command(name)], result, Action.REMOVED,
                                program)
        if program is None and any(e.action is Action.PRINTED for e in result.entries):
            self._no_cli_note(result)
        result.notes.append(f"state read from {path}")
        outcome.files.append(result)
        return outcome

    def verify(
        self, entries: Sequence[ServerEntry], *, config: Path | None = None
    ) -> HostOutcome:
        """Check Claude Code's state file lists our entries, pointing at real executables."""
        outcome = self._outcome()
        path, servers = self._registered(config)
        result = FileOutcome(path)
        if servers is None:
            result.entries = [EntryOutcome(e.name, Action.MISSING, "no state file")
                              for e in entries]
        else:
            result.entries = [check_entry(servers.get(e.name), e, windows=self.ctx.is_windows)
                              for e in entries]
        outcome.files.append(result)
        return outcome


def _command(current: Any) -> Any:
    return current.get("command") if isinstance(current, Mapping) else None
