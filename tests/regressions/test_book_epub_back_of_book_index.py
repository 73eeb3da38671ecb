"""Regression (issue 21 §2): the back-of-book index, and singular/plural folding.

An EPUB index (EPUB Indexes vocabulary, or a chapter headed "Index") was body text: it ranked
first for names and lost its links. Now its unit and records have role ``index``, search
leaves them out by default like contents (counted in ``index_left_out``; ``include_index``
brings them back, through the service, the MCP tool and the CLI), and read_entry gives each
locator as a link resolved to chapter, fragment and record. Plain ASCII words are indexed by
their singular on both engines, so ``metatopics`` finds ``metatopic``.
"""

from __future__ import annotations

import pytest
from tests.book.make_epub_round2 import make_index_book
from tests.book.test_cli import run

from readingroom.book.search.index import BookIndex
from readingroom.book.server import BookSearchInput
from readingroom.book.service import BookService


@pytest.fixture(scope="module")
def books(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bookindex")
    service = BookService(folder / "data")
    service.init(make_index_book(folder / "i.epub"), book_id="typed")
    service.init(make_index_book(folder / "u.epub", typed=False), book_id="untyped")
    return service, folder / "data"


@pytest.mark.parametrize("book", ["typed", "untyped"])
def test_the_index_is_left_out_by_default_and_counted(books, book):
    service, _ = books
    env = service.search(book, "association")
    assert env.data["index_left_out"] == 1 and env.data["contents_left_out"] == 0
    assert all(h["heading_path"] != ["Index"] for h in env.items)
    assert "Topic maps join" in service.read_entry(book, env.items[0]["record_id"]).items[0][
        "text"] or "association" in env.items[0]["snippet"]
    every = service.search(book, "association", include_index=True)
    roles = {r.record_id: r.role for r in service._load(book).records}
    assert "index" in {roles[h["record_id"]] for h in every.items}
    assert every.data["index_left_out"] == 0


def test_index_locators_are_links_to_chapter_and_paragraph(books):
    service, _ = books
    index = next(r for r in service._load("typed").records if r.role == "index")
    links = service.read_entry("typed", index.record_id).items[0]["links"]
    by_text = {(link["text"], link["fragment"]): link for link in links}
    p46 = by_text[("46", "p46")]
    assert p46["href"].endswith("ch2.xhtml") and p46["unit_index"] == 1
    target = service._load("typed").units[1].text[p46["char_offset"]:]
    assert target.startswith("Topic maps join topics")
    assert service.read_entry("typed", p46["record_id"]).items[0]["heading_path"] == ["Ch2"]
    assert by_text[("13", "p13")]["record_id"] != p46["record_id"]


def test_the_switch_reaches_the_mcp_tool_and_the_cli(books):
    _service, data = books
    assert BookSearchInput(book_id="typed", query="x", include_index=True).mode_options()[
        "include_index"] is True
    shown = run(data, "search", "typed", "association")
    assert "back-of-book index record" in shown.stdout
    every = run(data, "search", "typed", "association", "--include-index")
    assert "back-of-book index record" not in every.stdout and "Idx" in every.stdout


@pytest.mark.parametrize("engine", ["fts5", "python"])
def test_plural_finds_singular_on_both_engines(books, engine):
    service, _ = books
    path = service.registry.get("typed").file("index.sqlite")
    with BookIndex.open(path, engine=engine) as index:
        hits = index.search("metatopics").hits
        assert hits and "«metatopic»" in hits[0].snippet and hits[0].folds == ["plural"]
        assert index.search("associations").hits  # association, in the chapter
