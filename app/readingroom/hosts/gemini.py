"""Gemini CLI: the user ``~/.gemini/settings.json`` (every platform), top key ``mcpServers``.

Entries are ``{"command", "args", "env", "timeout"}``; ``timeout`` is the per-call limit in
milliseconds (Gemini's default is 600 000): we write the server's deadline + 30 s, so the server
answers first. The file also holds Gemini's other settings; they are kept. ``GEMINI_CLI_HOME``,
when set, replaces the home folder (as Gemini itself reads it).

**Folder trust.** Gemini CLI starts no stdio server, user-level ones included, while the folder
it runs in is untrusted, and folder trust is on by default. ``verify`` therefore reports the
trust of the current folder as Gemini CLI 0.61 decides it (``packages/core/src/utils/trust.ts``):
``GEMINI_CLI_TRUST_WORKSPACE`` / ``GEMINI_RESTRICTED_MODE`` first, then
``security.folderTrust.enabled`` (system settings over user settings), then the longest rule of
``~/.gemini/trustedFolders.json`` (``{"<folder>": "TRUST_FOLDER" | "TRUST_PARENT" |
"DO_NOT_TRUST"}``) covering the folder; no rule means untrusted. It is a note, never a failure:
the folder ``verify`` runs in need not be the one the user starts Gemini in.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any, ClassVar

from .entries import TOOL_TIMEOUT_MARGIN_S, ServerEntry
from .files import parse_json_config, read_config_text
from .host import JsonHost
from .outcome import ConfigParseError, HostOutcome

__all__ = ["TRUSTED_FOLDERS_NAME", "FolderTrust", "GeminiHost", "Trust"]

TRUSTED_FOLDERS_NAME = "trustedFolders.json"
"""Gemini CLI's trust rules, beside its ``settings.json``."""

_TRUST_LEVELS = ("TRUST_FOLDER", "TRUST_PARENT", "DO_NOT_TRUST")


class Trust(StrEnum):
    """Whether Gemini CLI trusts a folder (and so starts our servers there)."""

    TRUSTED = "trusted"
    UNTRUSTED = "untrusted"
    OFF = "trust feature off"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class FolderTrust:
    """The trust Gemini CLI gives one folder, why, and what the user must do about it."""

    folder: Path
    state: Trust
    detail: str

    def render(self) -> str:
        """One line for the verify report."""
        return f"folder trust for {self.folder}: {self.state.value} - {self.detail}"


class GeminiHost(JsonHost):
    """Gemini CLI's user ``settings.json``."""

    name: ClassVar[str] = "gemini"
    title: ClassVar[str] = "Gemini CLI"
    servers_key: ClassVar[str] = "mcpServers"

    def gemini_dir(self) -> Path:
        """``$GEMINI_CLI_HOME/.gemini``, by default ``~/.gemini``."""
        home = self.ctx.env.get("GEMINI_CLI_HOME", "").strip()
        return (Path(home) if home else self.ctx.home) / ".gemini"

    def candidate_paths(self) -> list[Path]:
        """``~/.gemini/settings.json``."""
        return [self.gemini_dir() / "settings.json"]

    def trusted_folders_path(self) -> Path:
        """``GEMINI_CLI_TRUSTED_FOLDERS_PATH``, else ``trustedFolders.json`` in the Gemini dir."""
        configured = self.ctx.env.get("GEMINI_CLI_TRUSTED_FOLDERS_PATH", "").strip()
        return Path(configured) if configured else self.gemini_dir() / TRUSTED_FOLDERS_NAME

    def system_settings_path(self) -> Path:
        """Gemini CLI's system-wide settings file (administrators; overrides user settings)."""
        configured = self.ctx.env.get("GEMINI_CLI_SYSTEM_SETTINGS_PATH", "").strip()
        if configured:
            return Path(configured)
        if self.ctx.is_windows:
            return Path("C:\\ProgramData\\gemini-cli\\settings.json")
        if self.ctx.is_macos:
            return Path("/Library/Application Support/GeminiCli/settings.json")
        return Path("/etc/gemini-cli/settings.json")

    def workspace(self) -> Path:
        """The folder whose trust ``verify`` reports: the current one."""
        return Path.cwd()

    def desired_value(self, entry: ServerEntry) -> dict[str, Any]:
        """``command``, ``args``, ``env`` and ``timeout`` (ms)."""
        value = self.base_value(entry)
        value["timeout"] = round((entry.deadline_s + TOOL_TIMEOUT_MARGIN_S) * 1000)
        return value

    def verify(
        self, entries: Sequence[ServerEntry], *, config: Path | None = None
    ) -> HostOutcome:
        """Check the entries (see :meth:`FileHost.verify`) and report the folder's trust."""
        outcome = super().verify(entries, config=config)
        path = config or self.candidate_paths()[0]
        source = read_config_text(path)
        settings = {} if source.text is None else self.parse(source.text, path)
        trust = self.folder_trust(settings, self.workspace())
        for result in outcome.files:
            result.notes.append(trust.render())
        return outcome

    # -- folder trust ------------------------------------------------------------------------

    def folder_trust(self, user_settings: Any, folder: Path) -> FolderTrust:
        """The trust Gemini CLI gives ``folder``, read the way Gemini CLI 0.61 reads it."""
        env = self.ctx.env
        if env.get("GEMINI_RESTRICTED_MODE") == "true" or \
                env.get("GEMINI_CLI_TRUST_WORKSPACE") == "false":
            return FolderTrust(folder, Trust.UNTRUSTED, _ENV_UNTRUSTED + " " + _what_to_do(
                folder, self.trusted_folders_path()))
        if env.get("GEMINI_CLI_TRUST_WORKSPACE") == "true":
            return FolderTrust(folder, Trust.TRUSTED, "GEMINI_CLI_TRUST_WORKSPACE=true in this "
                               "environment trusts every folder")
        enabled = self._trust_enabled(user_settings)
        if isinstance(enabled, str):
            return FolderTrust(folder, Trust.UNKNOWN, enabled)
        if not enabled:
            return FolderTrust(folder, Trust.OFF, "security.folderTrust.enabled is false: "
                               "Gemini CLI starts the servers in every folder")
        return self._rule_for(folder)

    def _trust_enabled(self, user_settings: Any) -> bool | str:
        """``security.folderTrust.enabled`` (default true; system settings win), or why the
        system settings cannot be read."""
        system = _read_json(self.system_settings_path())
        if isinstance(system, str):
            return system
        for settings in (system, user_settings):
            value = _dig(settings, "security", "folderTrust", "enabled")
            if isinstance(value, bool):
                return value
        return True

    def _rule_for(self, folder: Path) -> FolderTrust:
        path = self.trusted_folders_path()
        todo = _what_to_do(folder, path)
        rules = _read_json(path)
        if rules is None:
            return FolderTrust(folder, Trust.UNTRUSTED,
                               f"no {path} yet, so Gemini CLI trusts no folder. {todo}")
        if isinstance(rules, str):
            return FolderTrust(folder, Trust.UNKNOWN, f"{rules}; Gemini CLI refuses to start "
                               "until it is fixed")
        if not isinstance(rules, Mapping):
            return FolderTrust(folder, Trust.UNKNOWN, f"{path} is not a JSON object; Gemini "
                               "CLI refuses to start until it is fixed")
        bad = [f"{k!r}: {v!r}" for k, v in rules.items() if v not in _TRUST_LEVELS]
        if bad:
            return FolderTrust(folder, Trust.UNKNOWN, f"{path} has invalid trust levels "
                               f"({', '.join(bad)}); Gemini CLI refuses to start until they are "
                               f"one of {', '.join(_TRUST_LEVELS)}")
        target = self._normal(folder)
        best: tuple[int, str, str] | None = None
        for rule, level in rules.items():
            covered = Path(rule).parent if level == "TRUST_PARENT" else Path(rule)
            if _is_within(target, self._normal(covered)):
                length = len(self._normal(Path(rule)))
                if best is None or length > best[0]:
                    best = (length, rule, level)
        if best is None:
            return FolderTrust(folder, Trust.UNTRUSTED, f"no rule in {path} covers it. {todo}")
        _, rule, level = best
        if level == "DO_NOT_TRUST":
            return FolderTrust(folder, Trust.UNTRUSTED, f"{path} says DO_NOT_TRUST for {rule}. "
                               f"{todo}")
        return FolderTrust(folder, Trust.TRUSTED, f"{path}: {level} for {rule}")

    def _normal(self, path: Path) -> str:
        """``path`` as Gemini compares it: real path, ``/`` separators, case-folded on Windows
        and macOS."""
        try:
            text = str(path.resolve()) if path.exists() else str(path)
        except OSError:
            text = str(path)
        pure = PureWindowsPath(text) if self.ctx.is_windows else PurePosixPath(text)
        text = pure.as_posix()
        return text.casefold() if self.ctx.is_windows or self.ctx.is_macos else text


_ENV_UNTRUSTED = ("GEMINI_RESTRICTED_MODE=true or GEMINI_CLI_TRUST_WORKSPACE=false in this "
                  "environment distrusts every folder.")


def _what_to_do(folder: Path, trust_file: Path) -> str:
    return (f"Gemini CLI starts no MCP server here: in `gemini`, run `/permissions trust` (or "
            f"accept the trust prompt), or add {json.dumps(str(folder))}: \"TRUST_FOLDER\" to "
            f"{trust_file}; `gemini mcp list` then shows the servers connected")


def _read_json(path: Path) -> Any:
    """The file's JSON (None when absent), or a message saying why it cannot be read."""
    try:
        source = read_config_text(path)
        if source.text is None:
            return None
        return parse_json_config(source.text, path, refuse_duplicates=False)
    except (ConfigParseError, OSError, ValueError) as exc:
        return f"{path} cannot be read ({exc})"


def _dig(value: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def _is_within(child: str, parent: str) -> bool:
    parent = parent.rstrip("/") or "/"
    return child == parent or child.startswith(parent if parent.endswith("/") else parent + "/")
