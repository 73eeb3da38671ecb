"""VS Code (GitHub Copilot agent mode): the user ``mcp.json``, top key ``servers``.

Locations: ``%APPDATA%\\Code\\User\\mcp.json`` (Windows),
``~/Library/Application Support/Code/User/mcp.json`` (macOS),
``$XDG_CONFIG_HOME/Code/User/mcp.json`` (Linux, ``~/.config`` by default). Entries are
``{"type": "stdio", "command", "args", "env"}``; ``type`` is required. VS Code allows comments
in this file; json cannot keep them, so such a file is refused rather than rewritten.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from .entries import ServerEntry
from .host import JsonHost

__all__ = ["VsCodeHost"]


class VsCodeHost(JsonHost):
    """VS Code's user-level ``mcp.json``."""

    name: ClassVar[str] = "vscode"
    title: ClassVar[str] = "VS Code"
    servers_key: ClassVar[str] = "servers"

    def candidate_paths(self) -> list[Path]:
        """The user ``mcp.json`` of this platform."""
        if self.ctx.is_windows:
            user = self.ctx.roaming() / "Code" / "User"
        elif self.ctx.is_macos:
            user = self.ctx.home / "Library" / "Application Support" / "Code" / "User"
        else:
            user = self.ctx.config_home() / "Code" / "User"
        return [user / "mcp.json"]

    def desired_value(self, entry: ServerEntry) -> dict[str, Any]:
        """``{"type": "stdio", "command", "args", "env"}``."""
        return {"type": "stdio", **self.base_value(entry)}
