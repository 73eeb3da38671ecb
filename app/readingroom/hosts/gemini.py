"""Gemini CLI: the user ``~/.gemini/settings.json`` (every platform), top key ``mcpServers``.

Entries are ``{"command", "args", "env", "timeout"}``; ``timeout`` is the per-call limit in
milliseconds (Gemini's default is 600 000): we write the server's deadline + 30 s, so the server
answers first. The file also holds Gemini's other settings; they are kept.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from .entries import TOOL_TIMEOUT_MARGIN_S, ServerEntry
from .host import JsonHost

__all__ = ["GeminiHost"]


class GeminiHost(JsonHost):
    """Gemini CLI's user ``settings.json``."""

    name: ClassVar[str] = "gemini"
    title: ClassVar[str] = "Gemini CLI"
    servers_key: ClassVar[str] = "mcpServers"

    def candidate_paths(self) -> list[Path]:
        """``~/.gemini/settings.json``."""
        return [self.ctx.home / ".gemini" / "settings.json"]

    def desired_value(self, entry: ServerEntry) -> dict[str, Any]:
        """``command``, ``args``, ``env`` and ``timeout`` (ms)."""
        value = self.base_value(entry)
        value["timeout"] = round((entry.deadline_s + TOOL_TIMEOUT_MARGIN_S) * 1000)
        return value
