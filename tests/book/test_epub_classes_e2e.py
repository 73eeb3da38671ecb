"""EPUB classes of issue 11 end to end: ingest marks furniture, page marks and contents pages;
the service's locate and search then verify quotes typed as the reader sees them."""

from __future__ import annotations

import pytest

from readingroom.book.service import BookService

from .conftest import fixture_books
from .make_epub_classes import (
    NOTES_BODY,
    PAGEBREAK_BODY,
    VERSE_BODY,
    make_book,
    make_nav_in_spine_book,
)


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    folder = tmp_path_factory.mktemp("classes")
    service = BookService(folder / "data")
    book = make_book(folder / "classes.epub",
                     [("pages", PAGEBREAK_BODY), ("notes", NOTES_BODY), ("verse", VERSE_BODY)])
    service.init(book, book_id="classes")
    service.init(make_nav_in_spine_book(folder / "nav.epub"), book_id="nav")
    return service


@pytest.mark.parametrize("quote", [
    "It turned at the ford and ran south.",                   # past a page number
    "The upper river, as surveyors say, was once another stream.",  # past a note marker
    "Had ta'en his last leave of the weeping morn,",           # through a line number
])
def test_quotes_typed_as_read_verify(service, quote):
    env = service.locate("classes", text=quote)
    assert env.data["status"] == "verified", (quote, env.data)


def test_nav_in_the_spine_does_not_rank_first(service):
    hits = service.search("nav", "Two").items
    assert hits
    first = service.read_entry("nav", hits[0]["record_id"]).items[0]
    assert "The second chapter." in first["text"]


def test_georgia_quote_past_a_note_marker_verifies(tmp_path):
    service = BookService(tmp_path / "data")
    service.init(fixture_books() / "georgia-cfi.epub", book_id="georgia")
    env = service.locate(
        "georgia", text="This is because the upper Savannah was formerly part of the Chattahoochee"
    )
    assert env.data["status"] == "verified", env.data
