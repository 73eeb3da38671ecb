"""Attack: a locator edited by hand with its checksum recomputed.

The checksum is an unkeyed SHA-256 over the other fields, so anyone can recompute it. Before the
fix `read-source` checked only the checksum, the book, the version and the span hash: a locator
whose ``quote``, ``page_index``, ``page_label``, ``kind`` (or ``href``, ``fragment``, page end)
was edited and re-checksummed came back with ``"verified": true`` beside the real text (all six
edits measured verified). Now the package's own locator of the same range is rebuilt from its
text and every field compared: any difference is INVALID_LOCATOR naming the field. A genuine
locator still verifies, in the service, through the CLI and over MCP (`book_read_source`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.book.make_books import make_epub, make_pdf
from tests.book.mcp.library import book_server, envelope
from tests.forked import book_agent

from readingroom.book.locate import Locator, _checksum
from readingroom.book.service import BookService
from readingroom.core.errors import Code, CoreError

# Starts real server or command processes: left out of the quick tier (tests/conftest.py).
pytestmark = pytest.mark.stdio


@pytest.fixture(scope="module")
def books(tmp_path_factory):
    root = tmp_path_factory.mktemp("forged")
    service = BookService(root / "data")
    pdf = make_pdf(root / "b.pdf", ["Alpha beta gamma on page one.",
                                    "Delta epsilon zeta on page two."],
                   labels=[{"startpage": 0, "prefix": "", "style": "r", "firstpagenum": 1}])
    service.init(pdf, book_id="pdfbook")
    epub = make_epub(root / "b.epub", [
        ("One", '<h1 id="one">One</h1><p id="p1">First chapter words here.</p>'),
        ("Two", '<h1 id="two">Two</h1><p id="p2">Second chapter sentence here.</p>'),
    ])
    service.init(epub, book_id="epubbook")
    return root, service


def _forge(loc: dict, **change) -> dict:
    forged = Locator(**loc).model_copy(update=change).model_dump(mode="json")
    forged["checksum"] = _checksum(forged)  # what an attacker does: the checksum is unkeyed
    return forged


PDF_EDITS = [
    {"quote": "Words the book never says"},
    {"page_index": 0},
    {"page_label": "99"},
    {"page_end_index": 0},
    {"page_end_label": "xl"},
    {"kind": "epub_chapter"},
    {"href": "OEBPS/forged.xhtml"},
    {"quote_truncated": True},
    {"span_sha256": "0" * 64},
]


@pytest.mark.parametrize("change", PDF_EDITS, ids=lambda c: next(iter(c)))
def test_forged_pdf_locator_is_refused_naming_the_field(books, change):
    _, service = books
    loc = service.locate("pdfbook", text="Delta epsilon").items[0]["locator"]
    with pytest.raises(CoreError) as e:
        service.read_source(_forge(loc, **change))
    assert e.value.code is Code.INVALID_LOCATOR
    field = next(iter(change))
    assert field in e.value.details["fields"] and field in e.value.message


@pytest.mark.parametrize("change", [{"href": "OEBPS/forged.xhtml"}, {"fragment": "p1"},
                                    {"unit_index": 0, "unit_end_index": 0}])
def test_forged_epub_locator_is_refused(books, change):
    _, service = books
    loc = service.locate("epubbook", text="Second chapter sentence").items[0]["locator"]
    with pytest.raises(CoreError) as e:
        service.read_source(_forge(loc, **change))
    assert e.value.code is Code.INVALID_LOCATOR
    assert e.value.details["fields"]


def test_genuine_locators_still_verify(books):
    _, service = books
    for book, text in (("pdfbook", "Delta epsilon"), ("epubbook", "Second chapter sentence")):
        loc = service.locate(book, text=text).items[0]["locator"]
        env = service.read_source(json.dumps(loc))
        assert env.data["verified"] is True and env.data["text"] == text
        assert env.data["locator"] == loc


def test_cli_refuses_a_forged_locator_and_verifies_the_genuine_one(books, tmp_path):
    root, service = books
    loc = service.locate("pdfbook", text="Delta epsilon").items[0]["locator"]
    data = str(root / "data")
    genuine = book_agent(["--data-dir", data, "--json", "read-source", "-"],
                         input=json.dumps(loc), text=True, encoding="utf-8", timeout=60)
    assert genuine.returncode == 0, genuine.stderr
    assert json.loads(genuine.stdout)["data"]["verified"] is True
    forged_file = Path(tmp_path / "forged.json")
    forged_file.write_text(json.dumps(_forge(loc, page_label="99")), encoding="utf-8")
    forged = book_agent(["--data-dir", data, "--json", "read-source", f"@{forged_file}"],
                        text=True, encoding="utf-8", timeout=60)
    assert forged.returncode == 1
    err = json.loads(forged.stdout)["error"]
    assert err["code"] == "INVALID_LOCATOR" and err["details"]["fields"] == ["page_label"]
    assert "verified" not in json.loads(forged.stdout).get("data", {})
    assert len(forged.stderr.strip().splitlines()) == 1


def test_mcp_read_source_refuses_the_forged_and_verifies_the_genuine(books):
    root, service = books
    loc = service.locate("pdfbook", text="Delta epsilon").items[0]["locator"]
    with book_server(root / "data") as client:
        client.initialize()
        genuine = client.call_tool("book_read_source", {"locator": loc})
        assert genuine.get("isError") is not True
        assert envelope(genuine)["data"]["verified"] is True
        for change in ({"quote": "Words the book never says"}, {"page_label": "99"},
                       {"kind": "markdown_lines"}):
            forged = client.call_tool("book_read_source", {"locator": _forge(loc, **change)})
            assert forged["isError"] is True
            error = envelope(forged)["error"]
            assert error["code"] == "INVALID_LOCATOR"
            assert error["details"]["fields"][0] == next(iter(change))
