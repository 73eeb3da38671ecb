"""EPUB contents pages and navigation (issue 11 §3, §5): nav documents in the spine, spine
items typed as contents, and 目次 pages of links are ``contents`` units (still read); nav
``<span>`` headings stay in the contents so their children keep their true parent."""

from __future__ import annotations

import pytest

from readingroom.book.ingest import ingest
from readingroom.book.records import build_book_text

from ..conftest import fixture_books
from ..ingested import ingested
from ..make_epub_classes import (
    make_book,
    make_contents_page_book,
    make_nav_in_spine_book,
    make_nav_span_book,
)


def test_nav_document_in_the_spine_is_contents(tmp_path):
    doc = ingest(make_nav_in_spine_book(tmp_path / "b.epub"))
    roles = {u.href: u.role for u in doc.units}
    assert roles == {"OEBPS/nav.xhtml": "contents", "OEBPS/one.xhtml": "body",
                     "OEBPS/two.xhtml": "body"}
    nav = doc.units[0]
    assert "One" in nav.text and nav.blocks  # still readable


def test_typed_and_untyped_contents_pages(tmp_path):
    doc = ingest(make_contents_page_book(tmp_path / "b.epub"))
    roles = {u.href.rsplit("/", 1)[-1]: u.role for u in doc.units}
    assert roles == {"contents.xhtml": "contents", "mokuji.xhtml": "contents",
                     "story.xhtml": "body", "end.xhtml": "body"}


def test_a_chapter_with_a_few_links_stays_body(tmp_path):
    body = (
        "<p>See <a href='b.xhtml'>the next chapter</a> and <a href='b.xhtml'>again</a> and "
        "<a href='b.xhtml'>once more</a>, but mostly this chapter is a long paragraph of its "
        "own words, told at length, with nothing else in it.</p>"
    )
    doc = ingest(make_book(tmp_path / "b.epub", [("a", body), ("b", "<p>B.</p>")]))
    assert [u.role for u in doc.units] == ["body", "body"]


def test_nav_span_headings_keep_their_children(tmp_path):
    doc = ingest(make_nav_span_book(tmp_path / "b.epub"))
    entries = [(e.title, e.level, e.unit_index, e.char_offset) for e in doc.toc]
    third = doc.units[3].text.index("Third Story")
    assert entries == [
        ("Introduction", 1, 0, 0),
        ("Anne Author", 1, 1, 0),
        ("First Story", 2, 1, 0),
        ("Second Story", 2, 2, 0),
        ("Bea Writer", 1, 3, third),
        ("Early Work", 2, 3, third),
        ("Third Story", 3, 3, third),
    ]
    # a span heading with no linked entry under it has nowhere to point
    assert any("'Nobody'" in w for w in doc.warnings)


def test_nav_span_headings_are_parents_in_the_records(tmp_path):
    doc = ingest(make_nav_span_book(tmp_path / "b.epub"))
    paths = {r.heading_path for r in build_book_text(doc).records}
    assert ("Bea Writer", "Early Work", "Third Story") in paths
    assert ("Anne Author", "Second Story") in paths


def test_alice_nav_in_spine_is_the_only_contents_unit():
    doc = ingested(fixture_books() / "alice-epub3-images.epub")
    contents = [u.href for u in doc.units if u.role == "contents"]
    assert contents == ["OPS/toc.xhtml"]


@pytest.mark.slow
def test_fixture_nav_documents_in_the_spine_are_contents():
    for name in ("epub30-spec.epub", "linear-algebra.epub"):
        doc = ingested(fixture_books() / name)
        navs = [u for u in doc.units if u.href and u.href.endswith("nav.xhtml")]
        assert navs and all(u.role == "contents" for u in navs)
        assert sum(u.role == "body" for u in doc.units) > len(doc.units) // 2


def test_an_ncx_listed_in_the_spine_is_contents(tmp_path):
    doc = ingest(make_book(tmp_path / "b.epub", [("c", "<p>Body text.</p>")],
                           ncx_pages=[("1", "c.xhtml")], ncx_in_spine=True))
    roles = {u.href: u.role for u in doc.units}
    assert roles == {"OEBPS/c.xhtml": "body", "OEBPS/toc.ncx": "contents"}
