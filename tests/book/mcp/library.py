"""A small data folder for the MCP tests: a PDF book and an EPUB book with an image."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

from readingroom.book.service import BookService
from readingroom.core.rawstdio import RawStdioClient
from tests.forked import StdioClient

from ..make_books import TINY_JPEG, make_epub, make_pdf

__all__ = ["PDF_PAGES", "book_server", "envelope", "make_library", "png_size"]

PDF_PAGES = ["Whales swim in the cold northern sea.", "Ships sail past the harbour light.",
             "The harbour light guides the ships home."]


def make_library(root: Path) -> Path:
    """A data folder with ``pdf`` (three pages, an outline) and ``epub`` (an image chapter)."""
    data = root / "data"
    service = BookService(data)
    pdf = make_pdf(root / "pdf.pdf", PDF_PAGES,
                   outline=[(1, "Whales", 1), (1, "Ships", 2), (1, "Light", 3)])
    service.init(pdf, book_id="pdf")
    epub = make_epub(root / "epub.epub", [
        ("Sea", "<h1>Sea</h1><p>The sea is wide and deep.</p>"),
        ("Picture", '<h1>Picture</h1><p>A red square follows.</p>'
                    '<img src="images/red.jpg" alt="red"/>'),
    ], images={"images/red.jpg": TINY_JPEG})
    service.init(epub, book_id="epub")
    return data


def book_server(data: Path, *args: str, env: dict[str, str] | None = None,
                stderr: Any = subprocess.DEVNULL) -> RawStdioClient:
    """``python -m readingroom.book --data-dir DATA mcp ARGS`` as a raw stdio client."""
    environment = {k: v for k, v in os.environ.items()
                   if not k.startswith(("READINGROOM_", "BOOK_AGENT_"))}
    environment.update(env or {})
    command = [sys.executable, "-m", "readingroom.book", "--data-dir", str(data), "mcp", *args]
    return StdioClient(command, env=environment, stderr=stderr)


def envelope(result: dict[str, Any]) -> dict[str, Any]:
    """The envelope of a tool result, checked to be the same as text and as structure."""
    text = json.loads(result["content"][0]["text"])
    if "structuredContent" in result and result["structuredContent"] is not None:
        assert result["structuredContent"] == text
    return text


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height from a PNG's IHDR (asserting the signature)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height
