"""issue 11 §6 over MCP (in-memory session): book.md's image hrefs, continued read_entry reads.

The server is the real one (:func:`build_book_server`); the client sees what a host sees.
"""

from __future__ import annotations

import base64
import json
import re

import pytest
from mcp.shared.memory import create_connected_server_and_client_session

from readingroom.book.server import build_book_server
from readingroom.book.service import BookService

from ..conftest import fixture_books

# Starts real server or command processes: left out of the quick tier (tests/conftest.py).
pytestmark = pytest.mark.stdio

IMAGE_LINK = re.compile(r"!\[[^\]]*\]\(([^)\s]+)\)")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("mcp-defects")
    service = BookService(root / "data")
    service.init(fixture_books() / "alice-epub3-images.epub", book_id="alice")
    src = root / "long.md"
    src.write_text("# Before\n\n" + "Words before the middle. " * 30 + "\n\n# Middle\n\n"
                   + " ".join(f"Middle sentence {i} of the long record." for i in range(80))
                   + "\n\n# After\n\n" + "Words after the middle. " * 30 + "\n",
                   encoding="utf-8")
    service.init(src, book_id="long")
    return root / "data"


def envelope(result) -> dict:
    return json.loads(result.content[0].text)


@pytest.mark.anyio
async def test_every_image_href_book_md_prints_arrives(data):
    service = BookService(data)
    loaded = service._load("alice")
    md = loaded.pkg.file("book.md").read_text(encoding="utf-8").splitlines()
    printed = [(n, m.group(1)) for n, line in enumerate(md, start=1)
               for m in IMAGE_LINK.finditer(line)]
    assert printed
    async with create_connected_server_and_client_session(
            build_book_server(data, env={})) as client:
        for line, href in printed:
            rec = next((r for r in loaded.records if r.md_line_start <= line <= r.md_line_end),
                       loaded.records[0])
            located = envelope(await client.call_tool("book_locate_source", {
                "book_id": "alice", "record_id": rec.record_id}))
            result = await client.call_tool("book_read_epub_image", {
                "book_id": "alice", "locator": located["items"][0]["locator"], "href": href})
            env = envelope(result)
            assert result.isError is False, env.get("error")
            assert env["data"]["path"].endswith(href.lstrip("./"))
            assert env["data"]["href_form"] in ("container path", "package-relative")
            image = next(b for b in result.content if b.type == "image")
            assert base64.b64decode(image.data)[:3] == b"\xff\xd8\xff"
        bare = await client.call_tool("book_read_epub_image", {
            "book_id": "alice", "href": printed[0][1]})
        assert bare.isError is False and envelope(bare)["data"]["chapter"] is None
        miss = await client.call_tool("book_read_epub_image", {
            "book_id": "alice", "locator": located["items"][0]["locator"],
            "href": "images/not-there.jpg"})
        error = envelope(miss)["error"]
        assert miss.isError and error["code"] == "NOT_FOUND"
        assert "looked up" in error["message"] and "OPS/images/" in error["message"]


@pytest.mark.anyio
async def test_read_entry_serves_the_target_first_and_continues(data):
    service = BookService(data)
    records = service._load("long").records
    middle = next(r for r in records if r.heading_path[-1] == "Middle")
    async with create_connected_server_and_client_session(
            build_book_server(data, env={})) as client:
        args = {"book_id": "long", "record_id": middle.record_id, "neighbors": 1,
                "max_chars": 600}
        text, calls = "", 0
        while True:
            env = envelope(await client.call_tool("book_read_entry", args))
            calls += 1
            first = env["items"][0]
            assert first["record_id"] == middle.record_id and first["is_target"]
            text += first["text"]
            if first["next_offset"] is None:
                break
            cont = env["data"]["continuation"]
            assert cont["tool"] == "book_read_entry"
            assert cont["arguments"]["offset"] == first["next_offset"]
            args = cont["arguments"]
        assert text == middle.text and calls > 1
        # The last piece of the target leaves room for its neighbours, in book order.
        assert env["items"][0]["relation"] == "target"
        assert {i["relation"] for i in env["items"][1:]} <= {"previous", "next"}
        orders = [i["order"] for i in env["items"][1:]]
        assert orders == sorted(orders)


@pytest.mark.anyio
async def test_locate_names_the_folds_over_mcp(data):
    async with create_connected_server_and_client_session(
            build_book_server(data, env={})) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert "data.folds" in tools["book_locate_source"].description
        found = envelope(await client.call_tool("book_locate_source", {
            "book_id": "alice", "text": "Alice was beginning to get very tired"}))
        assert found["data"]["status"] == "verified" and found["data"]["folds"] == []
        # The book has a straight "I'll" and an em dash; typed curly and with "--".
        typed = envelope(await client.call_tool("book_locate_source", {
            "book_id": "alice", "text": "listen to me! I’ll soon make you dry enough"}))
        assert typed["data"]["status"] == "verified"
        assert typed["data"]["folds"] == ["punctuation"]
        dash = envelope(await client.call_tool("book_locate_source", {
            "book_id": "alice", "text": "assembled on the bank -- the birds"}))
        assert dash["data"]["status"] == "verified" and dash["data"]["folds"] == ["punctuation"]


@pytest.mark.anyio
async def test_read_markdown_continuation_carries_the_offset_into_a_long_line(tmp_path):
    src = tmp_path / "jp.md"
    paragraph = "".join(f"これは{i}番目の文です。" for i in range(200))
    src.write_text(f"# 本\n\n序文。\n\n## 長い段落\n\n{paragraph}\n\n## 次\n\n短い。\n",
                   encoding="utf-8")
    BookService(tmp_path / "data").init(src, book_id="jp")
    async with create_connected_server_and_client_session(
            build_book_server(tmp_path / "data", env={})) as client:
        args = {"book_id": "jp", "heading": "長い段落", "max_chars": 500}
        text = ""
        for _ in range(20):
            env = envelope(await client.call_tool("book_read_markdown", args))
            text += env["data"]["text"] if env["data"]["offset"] else "\n" + env["data"]["text"]
            if not env["data"]["truncated"]:
                break
            args = env["data"]["continuation"]["arguments"]
        assert paragraph in text and text.count(paragraph[:30]) == 1
        assert "短い" not in text, "the continuation stays within the section"
