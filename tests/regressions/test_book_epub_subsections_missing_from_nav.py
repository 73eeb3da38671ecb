"""Regression (issue 21 §2): subsections the nav does not list, and a colophon of its own.

A chapter's ``<h2>``/``<h3>`` sections that the nav does not list never reached the records'
heading paths, so the heading boost could not find them; a colophon in its own spine item
(not in the nav) was glued to the end of the chapter before it. Now unlisted subheadings
deeper than the chapter heading become contents entries under it (records, heading paths,
the boost), and a colophon is its own section and record. Also on a real book: linear-algebra
lists only its chapters; its sections now have heading paths.
"""

from __future__ import annotations

import pytest
from tests.book.conftest import fixture_books
from tests.book.ingested import ingested
from tests.book.make_epub_round2 import make_headings_book

from readingroom.book.service import BookService


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    folder = tmp_path_factory.mktemp("subsections")
    service = BookService(folder / "data")
    service.init(make_headings_book(folder / "h.epub"), book_id="h")
    return service


def _records(service):
    return service._load("h").records


def test_unlisted_subsections_are_in_heading_paths(service):
    paths = [r.heading_path for r in _records(service)]
    assert ("1. Introduction", "Background") in paths
    assert ("1. Introduction", "Background", "Earlier surveys") in paths


def test_the_heading_boost_finds_a_subsection(service):
    hit = service.search("h", "Earlier surveys").items[0]
    assert hit["heading_path"][-1] == "Earlier surveys"
    assert "Two surveys measured the silt" in service.read_entry("h", hit["record_id"]).items[0][
        "text"]


def test_a_colophon_in_its_own_spine_item_is_its_own_record(service):
    records = _records(service)
    colophon = [r for r in records if r.heading_path == ("奥付",)]
    assert len(colophon) == 1 and "発行" in colophon[0].text
    assert all("発行" not in r.text for r in records if r is not colophon[0])


@pytest.mark.slow
def test_linear_algebra_sections_reach_the_contents():
    doc = ingested(fixture_books() / "linear-algebra.epub")
    nested = [e for e in doc.toc if e.char_offset > 0]
    assert len(nested) > 100  # the nav lists its 94 spine items only, each at offset 0
