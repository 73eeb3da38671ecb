"""Contents pages stay out of search by default, through every layer (issue 11 §3).

The index leaves contents records out (tests/book/search); here the switch and the count
travel through the service, the CLI and the MCP tool, on a generated EPUB whose nav document
is in the spine (so its record lists every chapter title).
"""

from __future__ import annotations

import json

import pytest
from mcp.shared.memory import create_connected_server_and_client_session

from readingroom.book.commands import cli
from readingroom.book.server import build_book_server
from readingroom.book.service import BookService

from .make_epub_classes import make_nav_in_spine_book


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("contents-switch")
    BookService(root / "data").init(make_nav_in_spine_book(root / "nav.epub"), book_id="nav")
    return root / "data"


def _contents_ids(service: BookService) -> set[str]:
    return {r.record_id for r in service._load("nav").records if r.role == "contents"}


def test_the_service_leaves_contents_out_and_says_so(data):
    service = BookService(data)
    contents = _contents_ids(service)
    assert contents, "the nav document in the spine should be a contents record"
    default = service.search("nav", "Two")
    assert default.data["contents_left_out"] >= 1
    assert not {h["record_id"] for h in default.items} & contents
    assert default.query.input["include_contents"] is False
    both = service.search("nav", "Two", include_contents=True)
    assert {h["record_id"] for h in both.items} & contents
    assert both.data["contents_left_out"] == 0


def test_the_cli_switch(data, capsys):
    args = ["--data-dir", str(data), "search", "nav", "Two", "--json"]
    assert cli.main(args) == 0
    plain = json.loads(capsys.readouterr().out)
    assert cli.main([*args, "--include-contents"]) == 0
    switched = json.loads(capsys.readouterr().out)
    assert plain["data"]["contents_left_out"] >= 1
    assert switched["data"]["contents_left_out"] == 0
    assert len(switched["items"]) > len(plain["items"])


@pytest.mark.anyio
async def test_the_mcp_tool_switch(data):
    async with create_connected_server_and_client_session(
            build_book_server(data, env={})) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert "include_contents" in tools["book_search"].inputSchema["properties"]
        answers = []
        for extra in ({}, {"include_contents": True}):
            result = await client.call_tool("book_search",
                                            {"book_id": "nav", "query": "Two", **extra})
            answers.append(json.loads(result.content[0].text))
        assert answers[0]["data"]["contents_left_out"] >= 1
        assert answers[1]["data"]["contents_left_out"] == 0
