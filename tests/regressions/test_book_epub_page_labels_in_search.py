"""Regression (issue 21 §2): EPUB page labels in search hints and hits are printed pages.

``locate`` gave printed page 19 from the page list, but ``search --hint label=19`` found
nothing — the EPUB "label" the index used was the spine itemref id — and hits' ``page_labels``
carried manifest ids (``chapter002``, ``id-id2641220``). For EPUBs ``label=`` and
``page_labels`` now use the printed pages (page list, page-break markers), or are empty when
the book has none. Real fixture: alice (a nav page list); a generated book without pages.
"""

from __future__ import annotations

import json

import pytest
from tests.book.conftest import fixture_books
from tests.book.make_epub_classes import make_book

from readingroom.book.service import BookService


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    folder = tmp_path_factory.mktemp("labels")
    service = BookService(folder / "data")
    service.init(fixture_books() / "alice-epub3-images.epub", book_id="alice")
    service.init(make_book(folder / "plain.epub",
                           [("chapter002", "<h1>Plain</h1><p>A chapter without pages.</p>")]),
                 book_id="plain")
    return service


def _printed_pages(service, book_id):
    pkg = service.registry.get(book_id)
    units = [json.loads(line) for line in pkg.file("units.jsonl").read_text().splitlines()]
    return ({label for u in units for _off, label in u.get("page_marks", ())},
            {u["label"] for u in units} | {u["href"] for u in units})


def test_label_hint_finds_the_page_locate_names(service):
    loc = service.locate("alice", text="she ran across the field after it").items[0]["locator"]
    label = loc["page_label"]
    assert label
    env = service.search("alice", "ran across the field", hints={"label": label})
    assert env.data["hints_applied"][0]["records"] >= 1
    assert env.items and all(label in h["page_labels"] for h in env.items)
    assert "«across» «the» «field»" in env.items[0]["snippet"]


def test_hits_carry_printed_pages_never_manifest_ids(service):
    printed, ids = _printed_pages(service, "alice")
    env = service.search("alice", "rabbit", top_k=30)
    labels = {label for h in env.items for label in h["page_labels"]}
    assert labels and labels <= printed
    assert not labels & (ids - printed)


def test_a_book_without_pages_has_no_labels(service):
    env = service.search("plain", "chapter")
    assert env.items and all(h["page_labels"] == [] for h in env.items)
    assert service.search("plain", "chapter", hints={"label": "chapter002"}).items == []
