"""book-agent: a user's own book as a registered, versioned, verifiable book package."""

from __future__ import annotations

from ..core.declaration import Program

__all__ = ["PROGRAM"]

PROGRAM = Program(name="book-agent", entry_point="readingroom.book.cli:main")
"""The ``book-agent`` command line (its MCP server joins the catalogue as a server later)."""
