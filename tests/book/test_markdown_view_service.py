"""Image-only pages as placeholders through the whole package: book.md, records, index, Skill."""

from __future__ import annotations

from itertools import pairwise

import pytest

from readingroom.book.service import BookService
from readingroom.book.view import NO_TEXT_LAYER

from .make_markdown_view import make_mixed_scan_pdf


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    folder = tmp_path_factory.mktemp("mixed")
    pdf = make_mixed_scan_pdf(
        folder / "mixed.pdf",
        ["Chapter One\nThe heron waited by the water until the evening came.",
         "The heron flew over the marsh when the night was falling at last."],
        scanned=1, outline=[(1, "Chapter One", 1), (1, "Plates", 2)])
    service = BookService(folder / "data")
    service.init(pdf, book_id="mixed")
    return service


def _records(library):
    return library._load("mixed").records


def test_the_image_only_page_is_an_empty_record_in_reading_order(library):
    records = _records(library)
    assert [(r.unit_start, r.unit_end) for r in records] == [(0, 0), (1, 1), (2, 2)]
    assert records[1].text == "" and records[1].heading_path == ("Plates",)
    status = library.status("mixed").data
    assert status["capabilities"]["no_text_layer_units"] == [1]


def test_book_md_shows_the_placeholder_under_its_heading(library):
    env = library.read_markdown("mixed", heading="Plates")
    assert "<!-- page index=1" in env.data["text"]
    assert "Page index 1" in env.data["text"] and NO_TEXT_LAYER in env.data["text"]


def test_search_locate_and_read_entry_tolerate_the_empty_record(library):
    hits = library.search("mixed", "heron").items
    assert {h["record_id"] for h in hits} == {"r0001", "r0002-2"} or len(hits) == 2
    placeholder = _records(library)[1]
    entry = library.read_entry("mixed", placeholder.record_id, neighbors=1).data
    assert entry is not None
    located = library.locate("mixed", record_id=placeholder.record_id)
    assert located.data["status"] in ("verified", "not_found")
    assert library.locate("mixed", text="flew over the marsh").data["status"] == "verified"


def test_the_skill_names_the_placeholder(library):
    contents = library.skill_file("mixed", "references/contents.md").data["text"]
    row = next(line for line in contents.splitlines() if _records(library)[1].record_id in line)
    assert NO_TEXT_LAYER in row


@pytest.mark.parametrize("vertical", [True, False], ids=["vertical", "horizontal"])
def test_japanese_pdf_paragraphs_stay_whole_and_unbroken(tmp_path, vertical):
    from readingroom.book.ingest import ingest
    from readingroom.book.records import build_book_text
    from readingroom.book.text import is_cjk

    from .make_books import make_japanese_pdf

    first = "吾輩は猫である。名前はまだ無い。どこで生れたかとんと見当がつかぬ。" * 2
    second = "吾輩はここで始めて人間というものを見た。"
    pdf = make_japanese_pdf(tmp_path / "ja.pdf", [first, second], vertical=vertical)
    md = build_book_text(ingest(pdf)).markdown
    assert f"{first}\n\n{second}" in md
    lines = md.splitlines()
    assert not any(a and b and is_cjk(a[-1]) and is_cjk(b[0]) for a, b in pairwise(lines))
