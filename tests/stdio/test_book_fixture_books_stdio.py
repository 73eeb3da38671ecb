"""book-agent over real stdio on two real books of the shared samples: all ten tools.

The generated-book tests (``test_book_stdio.py``) pin every detail; this file shows the same
server on books nobody wrote for it: the German topology textbook (PDF with page labels and an
outline) and Alice (EPUB 3 with images).
"""

from __future__ import annotations

import base64
import posixpath
from pathlib import Path

import pytest
from tests.book.conftest import fixture_books
from tests.book.mcp.library import book_server, envelope, png_size

from readingroom.book.service import BookService

TEXTBOOK = "geotopo-textbook-outline.pdf"
ALICE = "alice-epub3-images.epub"


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, BookService]:
    books = fixture_books()
    data = tmp_path_factory.mktemp("real-books") / "data"
    service = BookService(data)
    service.init(books / TEXTBOOK, book_id="textbook")
    service.init(books / ALICE, book_id="alice")
    return data, service


@pytest.fixture(scope="module")
def server(library):
    with book_server(library[0]) as client:
        client.initialize()
        yield client


def call(client, name: str, **arguments) -> dict:
    result = client.call_tool(name, arguments)
    assert result["isError"] is False, result
    return envelope(result)


def test_the_ten_tools_on_a_real_textbook(server):
    listed = {b["book_id"]: b for b in call(server, "book_list")["items"]}
    assert set(listed) == {"textbook", "alice"} and listed["textbook"]["units"] == 117
    assert call(server, "book_status", book_id="textbook")["data"]["version"] == 1
    assert "book_" in call(server, "book_get_skill", book_id="textbook")["data"]["text"]
    hits = call(server, "book_search", book_id="textbook", query="topologischer Raum")
    assert hits["items"], "a phrase the textbook defines is found"
    record = hits["items"][0]["record_id"]
    entry = call(server, "book_read_entry", book_id="textbook", record_id=record)
    assert entry["items"][0]["is_target"]
    assert call(server, "book_read_markdown", book_id="textbook", start_line=1,
                max_chars=2000)["data"]["text"]
    located = call(server, "book_locate_source", book_id="textbook", record_id=record)
    locator = located["items"][0]["locator"]
    assert locator["page_label"] is not None and locator["page_index"] is not None
    read = call(server, "book_read_source", locator=locator)
    assert read["data"]["verified"] is True
    result = server.call_tool("book_render_page", {"book_id": "textbook",
                                                   "page_index": locator["page_index"],
                                                   "dpi": 50})
    env = envelope(result)
    png = base64.b64decode(next(b for b in result["content"] if b["type"] == "image")["data"])
    assert png_size(png) == (env["data"]["width"], env["data"]["height"])


def test_a_real_epub_image_arrives_decodable(server, library):
    service = library[1]
    loaded = service._load("alice")
    unit = next(u for u in loaded.units if u.images)
    first = next(r for r in loaded.records if r.unit_start == unit.index)
    locator = call(server, "book_locate_source", book_id="alice",
                   record_id=first.record_id)["items"][0]["locator"]
    href = posixpath.relpath(unit.images[0], posixpath.dirname(unit.href))
    result = server.call_tool("book_read_epub_image", {"book_id": "alice", "locator": locator,
                                                       "href": href})
    env = envelope(result)
    assert result["isError"] is False and env["data"]["image_attached"] is True
    image = next(b for b in result["content"] if b["type"] == "image")
    data = base64.b64decode(image["data"])
    assert image["mimeType"] in ("image/jpeg", "image/png")
    assert data[:3] == b"\xff\xd8\xff" or data[:8] == b"\x89PNG\r\n\x1a\n"
