"""EPUB page furniture and printed pages (issue 11 §2): page-break markers, note references and
verse line numbers are marked as furniture spans over the raw text, which keeps them; page
marks come from the markers and from the nav / NCX page list."""

from __future__ import annotations

import re
import zipfile

import pytest

from readingroom.book.furniture import mask_furniture
from readingroom.book.ingest import ingest
from readingroom.book.text import normalise

from ..conftest import fixture_books
from ..ingested import ingested
from ..make_epub_classes import NOTES_BODY, PAGEBREAK_BODY, VERSE_BODY, make_book


def _reads(unit, sentence: str) -> bool:
    """The sentence is found once furniture is stepped over (as search and locate do)."""
    return normalise(sentence) in normalise(mask_furniture(unit.text, unit.furniture))


def _kinds(unit, kind: str) -> list[str]:
    return [unit.text[s:e] for s, e, k in unit.furniture if k == kind]


def test_pagebreak_inside_a_sentence(tmp_path):
    unit = ingest(make_book(tmp_path / "b.epub", [("c", PAGEBREAK_BODY)])).units[0]
    # raw text is the truth: the printed page number with text content stays in it
    assert "the 13 ford" in unit.text
    assert _kinds(unit, "page_break") == ["13"]
    assert _reads(unit, "It turned at the ford and ran south.")
    assert _reads(unit, "The river ran on past the mill and the bridge.")
    labels = [label for _o, label in unit.page_marks]
    assert labels == ["12", "13", "14"]  # title, text, and a Gutenberg "[Pg 14]" anchor
    offsets = dict((label, o) for o, label in unit.page_marks)
    assert unit.text[offsets["12"]:].startswith("mill")
    assert unit.text[offsets["14"]:].startswith("Night")


def test_noteref_after_a_word_before_a_comma(tmp_path):
    unit = ingest(make_book(tmp_path / "b.epub", [("c", NOTES_BODY)])).units[0]
    assert "river1, as" in unit.text
    assert _kinds(unit, "note_ref") == ["1", "[2]", "1"]
    assert _reads(unit, "The upper river, as surveyors say, was once another stream.")
    assert _reads(unit, "A census counted the mills")
    # an exponent is not a note marker
    assert "x2 square" in unit.text and _reads(unit, "the area is x2 square miles")


def test_notes_stay_notes_in_the_blocks(tmp_path):
    unit = ingest(make_book(tmp_path / "b.epub", [("c", NOTES_BODY)])).units[0]
    blocks = [md for _s, _e, md in unit.blocks]
    refs = re.findall(r"\[\^([^\]]+)\](?!:)", "\n".join(blocks))
    notes = [md for md in blocks if re.match(r"\[\^[^\]]+\]: ", md)]
    assert len(refs) == 3 and len(set(refs)) == 2  # one note referred to twice
    assert len(notes) == 2
    assert {re.match(r"\[\^([^\]]+)\]", n).group(1) for n in notes} == set(refs)
    assert any("Called the Chattooga." in n for n in notes)
    assert any("*1900*" in n for n in notes)


def test_verse_line_numbers(tmp_path):
    unit = ingest(make_book(tmp_path / "b.epub", [("c", VERSE_BODY)])).units[0]
    assert _kinds(unit, "line_number") == ["2", "4"]
    assert _reads(unit, "Had ta'en his last leave of the weeping morn,")
    assert _reads(unit, "Hunting he loved, but love he laugh'd to scorn; Sick-thoughted Venus")
    assert not any(re.search(r"\b[24]\b", md) for _s, _e, md in unit.blocks[1:])


def test_ncx_page_list_marks_fragments(tmp_path):
    body = '<p>First part.</p><p id="p2">Second part.</p>'
    doc = ingest(make_book(tmp_path / "b.epub", [("c", body)],
                           ncx_pages=[("1", "c.xhtml"), ("2", "c.xhtml#p2"),
                                      ("3", "c.xhtml#gone")]))
    unit = doc.units[0]
    assert unit.page_marks == ((0, "1"), (unit.text.index("Second"), "2"))
    assert any("page-list entries point at no place" in w for w in doc.warnings)


def test_nav_page_list_marks_fragments(tmp_path):
    nav = (
        '<nav epub:type="toc"><ol><li><a href="c.xhtml">C</a></li></ol></nav>'
        '<nav epub:type="page-list"><ol><li><a href="c.xhtml#pg7">7</a></li>'
        '<li><a href="c.xhtml#pg8">8</a></li></ol></nav>'
    )
    body = (
        '<p>Words on seven<span id="pg7"/> and then</p>'
        '<p><span epub:type="pagebreak" id="pg8" title="8"/>eight.</p>'
    )
    unit = ingest(make_book(tmp_path / "b.epub", [("c", body)], nav_body=nav)).units[0]
    # the marker and the page list name the same page once
    assert [label for _o, label in unit.page_marks] == ["7", "8"]
    assert unit.text[dict((lb, o) for o, lb in unit.page_marks)["8"]:] == "eight."


# --- real books ----------------------------------------------------------------------------


def _nav_count(book, pattern: str, where: str) -> int:
    """How often ``pattern`` occurs in the book's documents whose name contains ``where``."""
    with zipfile.ZipFile(book) as zf:
        names = [n for n in zf.namelist() if n.endswith((".xhtml", ".html", ".xml"))]
        return sum(len(re.findall(pattern, zf.read(n).decode("utf-8", "replace")))
                   for n in names if where in n)


def test_georgia_note_refs_and_page_list():
    book = fixture_books() / "georgia-cfi.epub"
    doc = ingested(book)
    refs = sum(1 for u in doc.units for _s, _e, k in u.furniture if k == "note_ref")
    assert refs == _nav_count(book, r'epub:type="noteref"', "")
    # every page-list entry (EPUB CFIs here) becomes a page mark on a word of the text
    listed = _nav_count(book, r"<li><a href=\"[^\"]*epubcfi", "nav")
    marks = [(u, o, label) for u in doc.units for o, label in u.page_marks]
    assert len(marks) == listed > 0
    for unit, offset, _label in marks:
        assert 0 < offset < len(unit.text) and unit.text[offset - 1].isspace()
    assert [int(label) for _u, _o, label in marks] == sorted(int(lb) for *_, lb in marks)
    assert not any("page-list" in w for w in doc.warnings)


def test_alice_gutenberg_page_anchors_are_page_marks():
    book = fixture_books() / "alice-epub3-images.epub"
    doc = ingested(book)
    anchors = _nav_count(book, r'class=\s*"pageno"', "")
    marks = [label for u in doc.units for _o, label in u.page_marks]
    assert len(marks) == anchors > 0
    assert all(label.isdigit() for label in marks)
    assert [int(m) for m in marks] == sorted(int(m) for m in marks)


@pytest.mark.slow
def test_maths_superscripts_are_not_note_refs():
    doc = ingested(fixture_books() / "linear-algebra.epub")
    assert not any(k == "note_ref" for u in doc.units for _s, _e, k in u.furniture)


def test_notes_in_a_later_notes_file_are_footnotes(tmp_path):
    chapter = '<p>A claim<a epub:type="noteref" href="notes.xhtml#n1">1</a> and more.</p>'
    notes = ('<aside epub:type="endnote" id="n1"><p>The source.</p></aside>'
             '<aside epub:type="endnote" id="n2"><p>Unreferred.</p></aside>')
    doc = ingest(make_book(tmp_path / "b.epub", [("c", chapter), ("notes", notes)]))
    ref = re.search(r"\[\^([^\]]+)\]", doc.units[0].blocks[0][2]).group(1)
    assert [md for _s, _e, md in doc.units[1].blocks] == [f"[^{ref}]: The source.",
                                                           "Unreferred."]
    assert _kinds(doc.units[0], "note_ref") == ["1"]


def test_a_silent_marker_is_labelled_by_its_id(tmp_path):
    body = '<p>Before<span epub:type="pagebreak" id="page_27"/> after.</p>'
    unit = ingest(make_book(tmp_path / "b.epub", [("c", body)])).units[0]
    assert unit.page_marks == ((unit.text.index("after"), "27"),)
    assert unit.furniture == ()


def test_pandoc_style_notes(tmp_path):
    body = (
        '<p>Text<a href="#fn1" class="footnote-ref" id="fnref1" role="doc-noteref"><sup>1</sup>'
        '</a> goes on.</p><section class="footnotes" role="doc-endnotes"><ol>'
        '<li id="fn1"><p>The note. <a href="#fnref1" class="footnote-back" '
        'role="doc-backlink">↩</a></p></li></ol></section>'
    )
    unit = ingest(make_book(tmp_path / "b.epub", [("c", body)])).units[0]
    assert _kinds(unit, "note_ref") == ["1"]
    assert "↩" in unit.text  # the raw text keeps the back link
    blocks = [md for _s, _e, md in unit.blocks]
    label = re.search(r"\[\^([^\]]+)\]", blocks[0]).group(1)
    assert blocks[0] == f"Text[^{label}] goes on."
    assert f"[^{label}]: The note." in blocks[1] and "↩" not in blocks[1]


def test_gutenberg_style_notes_and_dangling_refs(tmp_path):
    body = (
        '<p>Words<a id="FNanchor_1" href="#Footnote_1" class="fnanchor">[1]</a> here and'
        '<sup><a href="#missing">2</a></sup> there.</p>'
        '<div class="footnote"><p><a id="Footnote_1" href="#FNanchor_1">[1]</a> The note.</p>'
        "</div>"
    )
    unit = ingest(make_book(tmp_path / "b.epub", [("c", body)])).units[0]
    assert _kinds(unit, "note_ref") == ["[1]", "2"]
    blocks = [md for _s, _e, md in unit.blocks]
    label = re.search(r"\[\^([^\]]+)\]", blocks[0]).group(1)
    # a reference to a note nowhere in the book is raised, not a broken footnote
    assert blocks == [f"Words[^{label}] here and² there.", f"[^{label}]: The note."]
