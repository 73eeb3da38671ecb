"""Regression (issue 20 §4): a book being rebuilt is reported as skipped, never silently
missing from a library search.

While ``init --replace`` builds a new version of one book (a live build folder), a search of
the whole library names that book in ``data.books_skipped`` with ``reason: building`` and says
in a warning that absence from the results proves nothing about it; the other books are
searched. Once the build is gone the book is searched again. Before, there was no library
search at all: the call without ``book_id`` was refused.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp.shared.memory import create_connected_server_and_client_session
from tests.book.mcp.library import make_library

from readingroom.book.server import build_book_server
from readingroom.book.service import BookService

pytestmark = pytest.mark.anyio


async def _search(data: Path) -> dict:
    async with create_connected_server_and_client_session(
            build_book_server(data, env={})) as client:
        result = await client.call_tool("book_search", {"query": "sea"})
    answer = json.loads(result.content[0].text)
    assert not result.isError, answer.get("error")
    return answer


async def test_a_book_being_rebuilt_is_named_as_skipped(tmp_path: Path):
    data = make_library(tmp_path)
    registry = BookService(data).registry
    build = registry.new_build_dir("pdf")
    try:
        answer = await _search(data)
    finally:
        registry.discard(build)
    assert [(s["book_id"], s["reason"]) for s in answer["data"]["books_skipped"]] == [
        ("pdf", "building")]
    assert {h["book_id"] for h in answer["items"]} == {"epub"}
    warnings = [d["message"] for d in answer["diagnostics"] if d["code"] == "BOOK_BUSY"]
    assert warnings and "pdf" in warnings[0] and "proves nothing" in warnings[0]
    after = await _search(data)
    assert {h["book_id"] for h in after["items"]} == {"pdf", "epub"}
