"""Attack: book-agent's MCP tools asked for paths and locators outside what they serve.

Skill paths and EPUB image hrefs that climb out (``..``, percent-encoded), are absolute, name a
drive or a UNC share, carry a NUL byte, or follow a symlink out of the package; locators of
another version or edited to point at another book. Each is refused with a typed error and
never returns a byte of the target.
"""

from __future__ import annotations

import json

import pytest
from tests.book.mcp.library import book_server, envelope, make_library

from readingroom.book.service import BookService

# Starts real server or command processes: left out of the quick tier (tests/conftest.py).
pytestmark = pytest.mark.stdio

SECRET = "TOP-SECRET-OUTSIDE-THE-PACKAGE"


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    root = tmp_path_factory.mktemp("confine")
    data = make_library(root)
    (root / "secret.md").write_text(SECRET, encoding="utf-8")
    (root / "secret.png").write_bytes(b"\x89PNG\r\n\x1a\n" + SECRET.encode())
    skill = BookService(data).registry.get("pdf").skill_dir()
    (skill / "references" / "escape.md").symlink_to(root / "secret.md")
    with book_server(data) as client:
        client.initialize()
        yield client, data


SKILL_ATTACKS = ["../../../secret.md", "/etc/passwd", "C:\\Windows\\win.ini", "C:/x.md",
                 "\\\\server\\share\\x.md", "//server/share/x.md", "SKILL.md\x00.png",
                 "%2e%2e/%2e%2e/secret.md", "references/..%2f..%2fsecret.md",
                 "references/escape.md", "file:///etc/passwd"]


@pytest.mark.parametrize("path", SKILL_ATTACKS)
def test_skill_paths_outside_the_skill_are_refused(setup, path):
    client, _ = setup
    result = client.call_tool("book_get_skill", {"book_id": "pdf", "path": path})
    assert result["isError"] is True
    assert envelope(result)["error"]["code"] == "PATH_NOT_ALLOWED", path
    assert SECRET not in json.dumps(result)


HREF_ATTACKS = ["../../secret.png", "../../../../secret.png", "/etc/passwd.png",
                "C:\\secret.png", "\\\\server\\share\\a.png", "images/red.jpg\x00.png",
                "%2e%2e/%2e%2e/%2e%2e/secret.png", "file:///etc/passwd.png",
                "http://example.invalid/a.png"]


@pytest.mark.parametrize("href", HREF_ATTACKS)
def test_epub_image_hrefs_outside_the_container_are_refused(setup, href):
    client, data = setup
    locator = BookService(data).locate("epub", text="A red square").items[0]["locator"]
    result = client.call_tool("book_read_epub_image", {"book_id": "epub", "locator": locator,
                                                       "href": href})
    assert result["isError"] is True
    assert envelope(result)["error"]["code"] in ("PATH_NOT_ALLOWED", "NOT_FOUND"), href
    assert not [b for b in result["content"] if b["type"] == "image"]


def test_a_locator_edited_to_another_book_is_refused(setup):
    client, data = setup
    locator = BookService(data).locate("pdf", text="cold northern sea").items[0]["locator"]
    forged = {**locator, "book_id": "epub"}
    result = client.call_tool("book_read_source", {"locator": forged})
    assert envelope(result)["error"]["code"] in ("INVALID_LOCATOR", "STALE_LOCATOR")
    image = client.call_tool("book_read_epub_image", {"book_id": "epub", "locator": locator,
                                                      "href": "images/red.jpg"})
    assert envelope(image)["error"]["code"] == "INVALID_LOCATOR"


def test_a_locator_of_another_version_is_stale(setup):
    client, data = setup
    locator = BookService(data).locate("pdf", text="cold northern sea").items[0]["locator"]
    result = client.call_tool("book_read_source",
                              {"locator": {**locator, "package_version": 7}})
    assert envelope(result)["error"]["code"] in ("STALE_LOCATOR", "INVALID_LOCATOR")


def test_bidi_and_zero_width_controls_are_stripped_from_returned_text(tmp_path):
    from tests.book.make_books import make_pdf

    data = tmp_path / "data"
    source = make_pdf(tmp_path / "b.pdf", ["Plain words here."])
    BookService(data).init(source, book_id="b")
    skill = BookService(data).registry.get("b").skill_dir() / "SKILL.md"
    skill.write_text("Read \u202eevil\u202c and zero\u200bwidth.", encoding="utf-8")
    with book_server(data) as client:
        client.initialize()
        text = envelope(client.call_tool("book_get_skill", {"book_id": "b"}))["data"]["text"]
    assert text == "Read evil and zerowidth."
