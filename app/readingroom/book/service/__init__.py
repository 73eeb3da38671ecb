"""book-agent's Core: every operation the CLI and the MCP server share.

Each operation returns an :class:`~readingroom.core.envelope.Envelope` (the same object the MCP
tools send) or raises :class:`~readingroom.core.errors.CoreError`. Reads are paginated: a
default size, a hard ceiling, and ``truncated``/``total``/``next_offset`` in ``data`` — never a
note glued into the text. Book and Skill text is untrusted reference material and says so.
"""

from __future__ import annotations

from .base import SERVER_NAME, envelope_data
from .read import DEFAULT_MAX_CHARS, MAX_CHARS_CEILING, ReadSide
from .write import WriteSide

__all__ = ["DEFAULT_MAX_CHARS", "MAX_CHARS_CEILING", "SERVER_NAME", "BookService",
           "envelope_data"]


class BookService(WriteSide, ReadSide):
    """The Core over one data folder; optionally serving one book only (single-book MCP).

    Its write side (:mod:`.write`: init, remove, the library fields) and its read side
    (:mod:`.read`: everything else) share the registry and the cache (:mod:`.base`).
    """
