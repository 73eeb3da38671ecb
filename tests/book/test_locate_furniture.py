"""Locate steps over page furniture and cites printed pages.

Units are built by hand with furniture spans (what the PDF and EPUB ingesters mark): a quote
typed as the reader sees it — across a folio and a running head at a page break, past a note
marker, through a verse line number — verifies; its locator spans the raw text, names what it
stepped over, and carries the printed page label.
"""

from __future__ import annotations

import pytest

from readingroom.book.locate import SourceText, _checksum, check_locator, parse_locator
from readingroom.book.model import SourceUnit
from readingroom.core.errors import Code, CoreError


def spanned(text: str, *pieces: tuple[str, str]) -> tuple:
    """Furniture spans of each (piece, kind), found left to right in ``text``."""
    out, pos = [], 0
    for piece, kind in pieces:
        start = text.index(piece, pos)
        out.append((start, start + len(piece), kind))
        pos = start + len(piece)
    return tuple(out)


P0 = "Chapter One\nThe sentence that runs from the foot\n17"
P1 = "THE TITLE OF THE BOOK\nof one page onto the next is whole. A topologi-\n18"
P2 = "THE TITLE OF THE BOOK\nscher Raum ist da.\n19"
PDF = [
    SourceUnit("pdf_page", 0, P0, label="17", label_inferred=True,
               furniture=spanned(P0, ("17", "folio"))),
    SourceUnit("pdf_page", 1, P1, label="18", label_inferred=True,
               furniture=spanned(P1, ("THE TITLE OF THE BOOK", "running_head"), ("18", "folio"))),
    SourceUnit("pdf_page", 2, P2, label="19", label_inferred=True,
               furniture=spanned(P2, ("THE TITLE OF THE BOOK", "running_head"), ("19", "folio"))),
]


def pdf() -> SourceText:
    return SourceText(PDF, book_id="b", version=1, source_sha256="a" * 64)


def locate(source: SourceText, text: str):
    _, spans = source.find(text)
    assert len(spans) == 1, spans
    loc = source.locator(*spans[0])
    assert check_locator(loc, source) == spans[0]
    assert check_locator(parse_locator(loc.model_dump_json()), source) == spans[0]
    return loc


def test_a_sentence_across_a_folio_and_a_running_head_verifies_spanning_both_pages():
    loc = locate(pdf(), "runs from the foot of one page onto the next")
    assert (loc.unit_index, loc.unit_end_index) == (0, 1)
    assert (loc.page_label, loc.page_end_label, loc.page_label_inferred) == ("17", "18", True)
    assert loc.quote == "runs from the foot\n17\nTHE TITLE OF THE BOOK\nof one page onto the next"
    assert loc.stepped_over == [
        {"kind": "folio", "text": "17", "unit_index": 0},
        {"kind": "running_head", "text": "THE TITLE OF THE BOOK", "unit_index": 1},
    ]


def test_a_word_hyphenated_before_a_folio_joins_across_the_page():
    loc = locate(pdf(), "A topologischer Raum ist da")
    assert (loc.unit_index, loc.unit_end_index) == (1, 2)
    assert [s["kind"] for s in loc.stepped_over] == ["folio", "running_head"]


def test_a_word_broken_by_a_soft_hyphen_before_a_folio_joins_across_the_page():
    p0 = "a topo\u00ad\n12"
    units = [SourceUnit("pdf_page", 0, p0, label="12", furniture=spanned(p0, ("12", "folio"))),
             SourceUnit("pdf_page", 1, "logical space", label="13")]
    source = SourceText(units, book_id="b", version=1, source_sha256="a" * 64)
    loc = locate(source, "a topological space")
    assert (loc.unit_index, loc.unit_end_index) == (0, 1)
    assert loc.stepped_over == [{"kind": "folio", "text": "12", "unit_index": 0}]


def test_a_span_ends_before_the_furniture_that_follows_it():
    loc = locate(pdf(), "that runs from the foot")
    assert loc.unit_end_index == 0 and loc.quote == "that runs from the foot"
    assert loc.stepped_over == []


def test_furniture_alone_is_not_found_as_text():
    assert pdf().find("THE TITLE OF THE BOOK")[1] == []


def test_past_a_note_marker_and_through_verse_line_numbers():
    prose = "It was the word¹, said the reader², that mattered."
    verse = ("Even as the sun with purple-colour’d face\n"
             "Had ta’en his last leave of the weeping morn,   5\n"
             "Rose-cheek’d Adonis hied him to the chase;")
    units = [
        SourceUnit("epub_chapter", 0, prose, href="a.xhtml",
                   furniture=spanned(prose, ("¹", "note_ref"), ("²", "note_ref"))),
        SourceUnit("epub_chapter", 1, verse, href="b.xhtml",
                   furniture=spanned(verse, ("5", "line_number"))),
    ]
    source = SourceText(units, book_id="b", version=1, source_sha256="a" * 64)
    loc = locate(source, "the word, said the reader, that mattered")
    assert [s["text"] for s in loc.stepped_over] == ["¹", "²"]
    loc = locate(source, "the weeping morn, Rose-cheek'd Adonis")
    assert loc.stepped_over == [{"kind": "line_number", "text": "5", "unit_index": 1}]
    _, spans = source.find("the weeping morn, Rose-cheek'd Adonis")
    assert source.match_folds("the weeping morn, Rose-cheek'd Adonis", spans) == ["punctuation"]


def test_a_page_that_is_only_furniture_is_stepped_over_whole():
    blank = "THE TITLE\n20"
    units = [SourceUnit("pdf_page", 0, "the end of one", label="19"),
             SourceUnit("pdf_page", 1, blank, label="20",
                        furniture=spanned(blank, ("THE TITLE", "running_head"), ("20", "folio"))),
             SourceUnit("pdf_page", 2, "page and the next", label="21")]
    source = SourceText(units, book_id="b", version=1, source_sha256="a" * 64)
    loc = locate(source, "one page and")
    assert (loc.unit_index, loc.unit_end_index) == (0, 2)
    assert [s["unit_index"] for s in loc.stepped_over] == [1, 1]


def forged(loc, **change):
    bad = loc.model_copy(update=change)
    return bad.model_copy(update={"checksum": _checksum(bad.model_dump(mode="json"))})


def test_an_edited_stepped_over_is_invalid():
    loc = locate(pdf(), "runs from the foot of one page onto the next")
    for change in ([], [{"kind": "folio", "text": "99", "unit_index": 0}]):
        with pytest.raises(CoreError) as e:
            check_locator(forged(loc, stepped_over=change), pdf())
        assert e.value.code is Code.INVALID_LOCATOR
        assert e.value.details["fields"] == ["stepped_over"]
    dropped = loc.model_dump(mode="json")
    del dropped["stepped_over"]  # removed: it reads as an older locator, but the checksum knew
    with pytest.raises(CoreError) as e:
        check_locator(parse_locator(dropped), pdf())
    assert e.value.details["fields"] == ["checksum"]


def test_an_edited_inferred_flag_is_invalid():
    loc = locate(pdf(), "runs from the foot of one page onto the next")
    with pytest.raises(CoreError) as e:
        check_locator(forged(loc, page_label_inferred=None), pdf())
    assert e.value.details["fields"] == ["page_label_inferred"]


def test_a_locator_issued_before_these_fields_existed_still_verifies():
    units = [SourceUnit("pdf_page", 0, "Plain text on a page.", label="3")]
    source = SourceText(units, book_id="b", version=1, source_sha256="a" * 64)
    loc = locate(source, "text on a")
    old = loc.model_dump(mode="json")
    del old["stepped_over"], old["page_label_inferred"]
    old["checksum"] = _checksum(old)
    assert check_locator(parse_locator(old), source) == source.find("text on a")[1][0]


def test_pdf_labels_are_never_the_string_none_and_inferred_only_when_so():
    units = [SourceUnit("pdf_page", 0, "alpha beta", label=None),
             SourceUnit("pdf_page", 1, "gamma delta", label="ii")]
    source = SourceText(units, book_id="b", version=1, source_sha256="a" * 64)
    loc = locate(source, "beta gamma")
    dumped = loc.model_dump(mode="json", exclude_none=True)
    assert "None" not in str(dumped.values())
    assert loc.page_label is None and loc.page_end_label == "ii"
    assert loc.page_label_inferred is None


def test_epub_page_labels_come_from_the_page_marks():
    c0 = "Page one text here. Page two begins now and runs on."
    c1 = "Still page two. Then page three."
    c2 = "A chapter with no printed pages."
    units = [
        SourceUnit("epub_chapter", 0, c0, href="c0.xhtml",
                   page_marks=((0, "171"), (c0.index("Page two"), "172"))),
        SourceUnit("epub_chapter", 1, c1, href="c1.xhtml",
                   page_marks=((c1.index("Then"), "173"),)),
        SourceUnit("epub_chapter", 2, c2, href="c2.xhtml"),
    ]
    source = SourceText(units, book_id="b", version=1, source_sha256="a" * 64)
    loc = locate(source, "text here. Page two begins")
    assert (loc.page_label, loc.page_end_label) == ("171", "172")
    loc = locate(source, "Page two begins")
    assert (loc.page_label, loc.page_end_label) == ("172", "172")
    loc = locate(source, "Still page two")  # before the chapter's first mark: the page goes on
    assert (loc.page_label, loc.page_end_label) == ("172", "172")
    loc = locate(source, "Still page two. Then page three")
    assert (loc.page_label, loc.page_end_label) == ("172", "173")
    loc = locate(source, "no printed pages")
    assert loc.page_label is None and loc.page_end_label is None


def test_every_locator_of_a_furnished_book_round_trips():
    source = pdf()
    words = source.folded.split(" ")
    for n in range(len(words) - 3):
        phrase = " ".join(words[n:n + 3])
        _, spans = source.find(phrase)
        for span in spans:
            loc = source.locator(*span)
            assert check_locator(parse_locator(loc.model_dump_json()), source) == span
