"""What the package, navigation and image readers read an EPUB through (the reader is one).

A protocol, so that those parts depend on this and not on :mod:`.reader`, which puts them
together: the EPUB reader's modules form no circle.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from .container import Container
from .document import ParsedDocument

__all__ = ["EpubSource"]


class EpubSource(Protocol):
    """An open EPUB: its file, its container, its parsed documents and its warnings."""

    path: Path
    container: Container

    def warn(self, message: str) -> None:
        """Keep ``message`` for the book's warnings (once; a bounded number in all)."""
        ...

    def document(self, name: str, what: str, *, content: bool = False) -> ParsedDocument:
        """The container entry ``name`` parsed (``what`` names it in errors and warnings)."""
        ...
