"""Issue 20 acceptance 4 on real books: a search without book_id over the library returns hits
from several books, each naming its book; a book being rebuilt is reported as skipped.

Three of the shared fixture books (an EPUB 3, an EPUB 2 with a dc:date, a LaTeX PDF),
registered with ``init``, searched through the MCP tool (in-memory session).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp.shared.memory import create_connected_server_and_client_session

from readingroom.book.server import build_book_server
from readingroom.book.service import BookService

from ..conftest import fixture_books

# Starts real server or command processes: left out of the quick tier (tests/conftest.py).
pytestmark = pytest.mark.stdio

BOOKS = {"alice": "alice-epub3-images.epub", "venus": "venus-and-adonis-epub2.epub",
         "latex": "latex-4-pages-numbered.pdf"}


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = fixture_books()
    data = tmp_path_factory.mktemp("fixture-library") / "data"
    service = BookService(data)
    for book_id, name in BOOKS.items():
        service.init(folder / name, book_id=book_id)
    return data


async def _search(data: Path, query: str) -> dict:
    async with create_connected_server_and_client_session(
            build_book_server(data, env={})) as client:
        result = await client.call_tool("book_search", {"query": query, "top_k": 30})
        assert not result.isError
        return json.loads(result.content[0].text)


@pytest.mark.anyio
async def test_hits_from_several_real_books_each_naming_its_book(data: Path):
    answer = await _search(data, "white")
    books = {h["book_id"]: h["book"] for h in answer["items"]}
    assert {"alice", "venus"} <= books.keys()
    assert books["alice"] == {"title": "Alice's Adventures in Wonderland",
                              "authors": ["Lewis Carroll"], "year": None}
    assert books["venus"] == {"title": "Venus and Adonis", "authors": ["William Shakespeare"],
                              "year": 1593}
    assert answer["data"]["books_searched"] == 3 and answer["data"]["books_skipped"] == []
    page = await _search(data, "page")
    assert {"alice", "latex"} <= {h["book_id"] for h in page["items"]}


@pytest.mark.anyio
async def test_a_book_being_rebuilt_is_reported_as_skipped(data: Path):
    registry = BookService(data).registry
    build = registry.new_build_dir("alice")  # an init --replace in progress (this process)
    try:
        answer = await _search(data, "white")
        assert [(s["book_id"], s["reason"], s["version"])
                for s in answer["data"]["books_skipped"]] == [("alice", "building", 1)]
        assert {h["book_id"] for h in answer["items"]} == {"venus"}
        assert any("not searched" in d["message"] and "alice" in d["message"]
                   for d in answer["diagnostics"])
    finally:
        registry.discard(build)
    again = await _search(data, "white")
    assert "alice" in {h["book_id"] for h in again["items"]}
