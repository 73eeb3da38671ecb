"""Claude Desktop: ``claude_desktop_config.json``, ``mcpServers``.

Locations: Windows classic install ``%APPDATA%\\Claude\\``; Windows MSIX install (Microsoft
Store, and the claude.ai installer in recent versions)
``%LOCALAPPDATA%\\Packages\\Claude_*\\LocalCache\\Roaming\\Claude\\`` — the package folder's
publisher suffix is globbed, never hard-coded, and **every** location found is written, since
which one the app reads depends on how it was installed; macOS
``~/Library/Application Support/Claude/``; Linux (unofficial builds)
``$XDG_CONFIG_HOME/Claude/``.

Claude Desktop ends a tool call at about 60 s whatever the server does, so its entries carry
``READINGROOM_TOOL_DEADLINE`` = 50: the server stops first and answers with a structured
``DEADLINE_EXCEEDED`` instead of the host's bare timeout. A UTF-8 BOM makes Claude Desktop reset
its server list, so it is removed on write and reported by verify.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from ..core.settings import ENV_TOOL_DEADLINE
from .entries import ServerEntry
from .host import JsonHost

__all__ = ["CLAUDE_DESKTOP_DEADLINE_S", "CONFIG_NAME", "ClaudeDesktopHost"]

CONFIG_NAME = "claude_desktop_config.json"

CLAUDE_DESKTOP_DEADLINE_S = 50
"""Server deadline under Claude Desktop: below its fixed ~60 s per-call limit."""


class ClaudeDesktopHost(JsonHost):
    """Claude Desktop's JSON config, in every location this machine has."""

    name: ClassVar[str] = "claude-desktop"
    title: ClassVar[str] = "Claude Desktop"
    servers_key: ClassVar[str] = "mcpServers"
    rejects_bom: ClassVar[bool] = True

    def classic_path(self) -> Path:
        """The non-MSIX location of this platform."""
        if self.ctx.is_windows:
            return self.ctx.roaming() / "Claude" / CONFIG_NAME
        if self.ctx.is_macos:
            return self.ctx.home / "Library" / "Application Support" / "Claude" / CONFIG_NAME
        return self.ctx.config_home() / "Claude" / CONFIG_NAME

    def msix_paths(self) -> list[Path]:
        """The config path inside every MSIX Claude package found (Windows only)."""
        if not self.ctx.is_windows or self.ctx.localappdata is None:
            return []
        packages = self.ctx.localappdata / "Packages"
        folders = sorted(packages.glob("Claude_*/LocalCache/Roaming/Claude"))
        return [folder / CONFIG_NAME for folder in folders if folder.is_dir()]

    def candidate_paths(self) -> list[Path]:
        """The classic location, then every MSIX location."""
        return [self.classic_path(), *self.msix_paths()]

    def target_paths(self) -> list[Path]:
        """Every location whose Claude folder exists; the classic one when none does."""
        found = [p for p in self.candidate_paths() if p.is_file() or p.parent.is_dir()]
        return found or [self.classic_path()]

    def desired_value(self, entry: ServerEntry) -> dict[str, Any]:
        """``command``, ``args``, ``env`` with the deadline below Claude Desktop's limit."""
        value = self.base_value(entry)
        deadline = min(entry.deadline_s, CLAUDE_DESKTOP_DEADLINE_S)
        value["env"][ENV_TOOL_DEADLINE] = f"{deadline:g}"
        return value
