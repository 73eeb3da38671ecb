"""Regression (issue 20 §4): ``book_search`` without ``book_id`` on a server of every book.

It was refused ("book_id is required on this server"), so an assistant with a library of 300
books had to call it 300 times and could not rank the results. Now it searches every book at
once: one ranked list, each hit naming its book and its record, ``data`` saying how many books
were searched. Over the real MCP server (in-memory session).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp.shared.memory import create_connected_server_and_client_session
from tests.book.mcp.library import make_library

from readingroom.book.server import build_book_server

pytestmark = pytest.mark.anyio


async def test_a_search_without_book_id_searches_every_book(tmp_path: Path):
    data = make_library(tmp_path)
    async with create_connected_server_and_client_session(
            build_book_server(data, env={})) as client:
        result = await client.call_tool("book_search", {"query": "sea"})
    answer = json.loads(result.content[0].text)
    assert not result.isError, answer.get("error")
    assert {h["book_id"] for h in answer["items"]} == {"pdf", "epub"}
    for hit in answer["items"]:
        assert hit["record_id"] and hit["book"]["title"] and hit["version"] == 1
        assert "«sea»" in hit["snippet"]
    assert answer["data"]["books_searched"] == 2 and answer["data"]["books_skipped"] == []
