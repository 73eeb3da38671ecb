"""Cursor: the global ``~/.cursor/mcp.json`` (every platform), top key ``mcpServers``.

Entries have Claude Desktop's shape: ``{"command", "args", "env"}``.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from .host import JsonHost

__all__ = ["CursorHost"]


class CursorHost(JsonHost):
    """Cursor's global ``mcp.json``."""

    name: ClassVar[str] = "cursor"
    title: ClassVar[str] = "Cursor"
    servers_key: ClassVar[str] = "mcpServers"

    def candidate_paths(self) -> list[Path]:
        """``~/.cursor/mcp.json``."""
        return [self.ctx.home / ".cursor" / "mcp.json"]
