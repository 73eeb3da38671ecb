"""book_search over MCP without book_id: the library; a single-book server stays confined."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp.shared.memory import create_connected_server_and_client_session

from readingroom.book.server import build_book_server

# Starts real server processes: left out of the quick tier (tests/conftest.py).
pytestmark = [pytest.mark.anyio, pytest.mark.stdio]


async def _call(data: Path, arguments: dict[str, Any], *, book_id: str | None = None
                ) -> tuple[bool, dict[str, Any]]:
    async with create_connected_server_and_client_session(
            build_book_server(data, book_id=book_id, env={})) as client:
        result = await client.call_tool("book_search", arguments)
        return bool(result.isError), json.loads(result.content[0].text)


async def test_without_book_id_the_server_of_every_book_searches_the_library(
        template_library: Path):
    error, answer = await _call(template_library, {"query": "silver bridge", "top_k": 20})
    assert not error
    data = answer["data"]
    assert data["scope"] == "library" and data["books_searched"] == 12
    assert "untrusted" in data["content_trust"]
    books = {h["book_id"] for h in answer["items"]}
    assert len(books) >= 3
    assert all(h["book"]["title"].startswith("Generated Book") for h in answer["items"])
    assert answer["result"]["returned"] == len(answer["items"])


async def test_book_ids_collection_and_tag(template_library: Path):
    _e, chosen = await _call(template_library, {"query": "harbour", "top_k": 50,
                                                "book_ids": ["book-05", "book-06"]})
    assert {h["book_id"] for h in chosen["items"]} <= {"book-05", "book-06"}
    assert chosen["data"]["books_searched"] == 2
    _e, sea = await _call(template_library, {"query": "harbour", "collection": "Sea",
                                             "top_k": 50})
    assert {h["book_id"] for h in sea["items"]} == {"book-00", "book-01"}
    _e, tagged = await _call(template_library, {"query": "harbour", "tag": "essay"})
    assert {h["book_id"] for h in tagged["items"]} == {"book-02"}


async def test_one_book_still_searches_that_book(template_library: Path):
    error, answer = await _call(template_library, {"query": "harbour", "book_id": "book-01"})
    assert not error and answer["data"]["book_id"] == "book-01"
    assert "scope" not in answer["data"]


@pytest.mark.parametrize("arguments", [
    {"query": "harbour", "hints": {"page": "1"}},
    {"query": "harbour", "book_id": "book-01", "book_ids": ["book-02"]},
    {"query": "harbour", "book_id": "book-01", "tag": "novel"},
])
async def test_refused_combinations(template_library: Path, arguments: dict[str, Any]):
    error, answer = await _call(template_library, arguments)
    assert error and answer["error"]["code"] == "INVALID_ARGUMENT"


async def test_a_single_book_server_stays_confined(template_library: Path):
    error, answer = await _call(template_library, {"query": "harbour"}, book_id="book-01")
    assert not error and answer["data"]["book_id"] == "book-01"
    assert {h.get("book_id", "book-01") for h in answer["items"]} == {"book-01"}
    for arguments in ({"book_ids": ["book-02"]}, {"book_ids": ["book-01", "book-02"]},
                      {"collection": "Sea"}, {"tag": "novel"}):
        error, answer = await _call(template_library, {"query": "harbour", **arguments},
                                    book_id="book-01")
        assert error and answer["error"]["code"] == "BOOK_NOT_ALLOWED", arguments
    error, answer = await _call(template_library, {"query": "harbour",
                                                   "book_ids": ["book-01"]},
                                book_id="book-01")
    assert not error and answer["data"]["book_id"] == "book-01"


async def test_the_input_schema_offers_the_library(template_library: Path):
    async with create_connected_server_and_client_session(
            build_book_server(template_library, env={})) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    schema = tools["book_search"].inputSchema["properties"]
    assert {"book_id", "book_ids", "collection", "tag"} <= schema.keys()
    assert "every" in tools["book_search"].description
