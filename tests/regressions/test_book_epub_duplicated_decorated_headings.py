"""Regression (issue 21 §2): duplicated and decorated EPUB headings.

A nav entry followed by the printed heading (``1. Introduction`` then ``Chapter 1.
Introduction``) showed both; a title printed three times showed twice or more; ``**…**`` kept
inside headings made ``read-markdown --heading "Chapter 1"`` list *Chapter 10* too. Now the
repeat is dropped (the printed, labelled form kept as the heading), emphasis stays out of
heading text, and headings match exactly first, then as whole words.
"""

from __future__ import annotations

import re

import pytest
from tests.book.make_epub_round2 import make_headings_book

from readingroom.book.service import BookService


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    folder = tmp_path_factory.mktemp("headings")
    service = BookService(folder / "data")
    service.init(make_headings_book(folder / "h.epub"), book_id="h")
    return service


def _headings(service) -> list[str]:
    md = service.registry.get("h").file("book.md").read_text(encoding="utf-8")
    return [line.lstrip("#").strip() for line in md.splitlines() if line.startswith("#")]


def _key(text: str) -> str:
    return re.sub(r"\W|\d|chapter", "", text.casefold())


def test_a_nav_entry_and_its_printed_heading_are_one_heading(service):
    heads = _headings(service)
    assert len([h for h in heads if _key(h) == "introduction"]) == 1, heads


def test_a_title_printed_three_times_is_shown_once(service):
    assert [h for h in _headings(service) if _key(h) == "methods"] == ["2. Methods"]


def test_no_emphasis_inside_headings(service):
    assert not [h for h in _headings(service) if "*" in h]


def test_heading_lookup_matches_exactly_first(service):
    env = service.read_markdown("h", heading="Chapter 1")
    assert env.data.get("status") != "ambiguous", env.items
    assert "The first chapter of the log." in env.data["text"]
    assert "tenth" not in env.data["text"]
    env = service.read_markdown("h", heading="**Chapter 10**")
    assert "The tenth chapter of the log." in env.data["text"]
