"""PDF Markdown blocks: paragraphs, emphasis, headings, hyphenation, verse, furniture left out."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from readingroom.book.ingest import ingest
from readingroom.book.ingest.pdf.blocks import (
    emphasis_runs,
    font_headings,
    page_blocks,
    place_emphasis,
)
from readingroom.book.model import SourceDocument, SourceUnit

from ..conftest import fixture_books
from ..ingested import ingested
from ..make_pdf_furniture import make_furniture_pdf, make_styled_pdf, make_verse_pdf

STYLED = [
    [("A line with a ", "plain"), ("bold", "bold"), (" word and an ", "plain"),
     ("italic phrase", "italic"), (" in it, then an exam-", "plain")],
    "ple of hyphenation and a Schwarz-",
    "Weiß compound that keeps its hyphen, and the line runs on to the end.",
    "Short last line.",
    "A second paragraph starts here and runs on across the page width to the",
    "margin, and then it ends.",
]


def _letters(text: str) -> str:
    return re.sub(r"[\W_]+", "", text)


def _check_blocks(unit: SourceUnit) -> None:
    """Blocks are in order, inside the text, and show every letter of their raw spans."""
    pos = 0
    for start, end, markdown in unit.blocks:
        assert pos <= start <= end <= len(unit.text)
        raw = _letters(unit.text[start:end])
        shown = _letters(markdown)
        assert len(shown) >= 0.95 * len(raw), (unit.text[start:end], markdown)
        pos = end


def test_emphasis_paragraphs_and_hyphenation(tmp_path: Path):
    doc = ingest(make_styled_pdf(tmp_path / "s.pdf", [STYLED]))
    unit = doc.units[0]
    _check_blocks(unit)
    markdown = "\n\n".join(md for _s, _e, md in unit.blocks)
    assert "A line with a **bold** word and an *italic phrase* in it" in markdown
    assert "an example of hyphenation" in markdown
    assert "Schwarz-Weiß compound" in markdown
    assert "Short last line.\n\nA second paragraph" in markdown
    assert "exam-" in unit.text  # the raw text is untouched


def test_outline_entries_are_headings_of_their_level(tmp_path: Path):
    pages = [["1 Introduction", *STYLED[1:3]], ["1.1 Background", "Some words on the page."]]
    doc = ingest(make_styled_pdf(tmp_path / "s.pdf", pages, gap_after=(0,),
                                 outline=[(1, "Introduction", 1), (2, "Background", 2)]))
    assert doc.units[0].blocks[0][2] == "# 1 Introduction"
    assert doc.units[1].blocks[0][2] == "## 1.1 Background"


def test_running_heads_and_folios_are_left_out_of_the_blocks(tmp_path: Path):
    body = [[f"Page {p} line {i} of the running text, plain words." for i in range(8)]
            for p in range(4)]
    doc = ingest(make_furniture_pdf(tmp_path / "f.pdf", body))
    for unit in doc.units:
        _check_blocks(unit)
        shown = " ".join(md for _s, _e, md in unit.blocks)
        assert "Chapter Title" not in shown and "A Book of Tests" not in shown
        assert f"Page {unit.index} line 0" in shown
        for start, end, _kind in unit.furniture:
            assert not any(s < end and e > start for s, e, _md in unit.blocks)


def test_verse_keeps_its_lines(tmp_path: Path):
    verse = [[f"Verse line {n} of the poem, in measured words" for n in range(1, 13)]]
    doc = ingest(make_verse_pdf(tmp_path / "v.pdf", verse))
    unit = doc.units[0]
    _check_blocks(unit)
    markdown = "\n".join(md for _s, _e, md in unit.blocks)
    assert "Verse line 1 of the poem, in measured words  \nVerse line 2" in markdown


def test_markdown_syntax_in_the_text_is_escaped():
    text = "# not a heading\n1. not a list\n*stars* and _under_ scores"
    pieces = [(0, 15), (16, 29), (30, len(text))]
    markdown = [md for _s, _e, md in page_blocks(text, pieces, [[], [], []])]
    assert markdown == ["\\# not a heading", "1\\. not a list",
                        "\\*stars\\* and \\_under\\_ scores"]


def test_emphasis_runs_skip_maths_italics():
    xhtml = ("<p>Let<i> x</i><i> &#x2208;</i><i>X</i> be a<b> point</b> of"
             " <b><i>bold italics</i></b>.</p><p>plain</p>")
    runs = emphasis_runs(xhtml)
    assert [[(text.strip(), b, i) for _o, text, b, i in block] for block in runs] == [
        [("point", True, False), ("bold italics", True, True)], []]
    raw = "Let x ∈X be a point of\nbold italics."
    placed = place_emphasis(raw, runs[0])
    assert [raw[s:e] for s, e, _b, _i in placed] == ["point", "bold italics"]


def test_emphasis_that_cannot_be_placed_is_dropped():
    assert place_emphasis("other words", [(0, "missing", True, False)]) == []


def test_japanese_pages_have_no_blocks(tmp_path: Path):
    from ..make_books import make_japanese_pdf

    doc = ingest(make_japanese_pdf(tmp_path / "j.pdf", ["吾輩は猫である。名前はまだ無い。"],
                                   vertical=False))
    assert doc.units[0].blocks == ()


# --- the real books --------------------------------------------------------------------------


def _fixture(name: str) -> SourceDocument:
    return ingested(fixture_books() / name)


@pytest.mark.parametrize("name", ["geotopo-textbook-outline.pdf", "latex-4-pages-numbered.pdf"])
def test_fixture_blocks_cover_the_pages(name):
    doc = _fixture(name)
    with_blocks = [u for u in doc.units if u.blocks]
    assert len(with_blocks) >= 0.9 * len(doc.units)
    for unit in with_blocks:
        _check_blocks(unit)
        # Every letter outside furniture is inside some block.
        inside = sum(len(_letters(unit.text[s:e])) for s, e, _md in unit.blocks)
        hidden = sum(len(_letters(unit.text[s:e])) for s, e, _k in unit.furniture)
        assert inside + hidden >= 0.99 * len(_letters(unit.text))


def test_textbook_headings_and_emphasis():
    doc = _fixture("geotopo-textbook-outline.pdf")
    headings = [md for u in doc.units for _s, _e, md in u.blocks if md.startswith("#")]
    assert "# 1 Topologische Grundbegriﬀe" in headings
    assert any(h.startswith("## 1.1 ") for h in headings)
    bold = sum(md.count("**") for u in doc.units for _s, _e, md in u.blocks)
    assert bold >= 100
    # Maths italics are not emphasis: no one-letter "*x*".
    shown = "\n".join(md for u in doc.units for _s, _e, md in u.blocks)
    assert not re.search(r"(?<![*\\])\*[A-Za-z]\*(?!\*)", shown)


def test_without_an_outline_headings_come_from_type_that_stands_out(tmp_path: Path):
    body = [[f"Page {p} line {i} of the running text, plain words." for i in range(8)]
            for p in range(3)]
    pages = [["Chapter Heading Here", *lines] for lines in body]
    doc = ingest(make_furniture_pdf(tmp_path / "h.pdf", pages, heading_size=18, heads=None,
                                    folio="none"))
    firsts = [unit.blocks[0][2] for unit in doc.units]
    assert firsts == ["## Chapter Heading Here"] * 3
    # Type the size of the body's is no heading.
    doc = ingest(make_furniture_pdf(tmp_path / "p.pdf", pages, heading_size=11, heads=None,
                                    folio="none"))
    assert not any(md.startswith("#") for u in doc.units for _s, _e, md in u.blocks)


def test_font_headings_trust_mupdf_only_when_the_body_is_small():
    text = "Title\nA line\nof body\nOne-liner here"
    spans = [(0, 5), (6, 20), (21, 35)]
    # Most one-line blocks plain: MuPDF's <h2> is believed.
    page = (spans, [20.0, 24.0, 12.0], [2, 0, 0])
    assert font_headings({0: page}, {0: text}) == {0: {0: 2}}
    # Every one-line block tagged (a 12 pt body): only type 30 % taller than body lines.
    page = (spans, [13.0, 24.0, 13.0], [3, 0, 3])
    assert font_headings({0: page}, {0: text}) == {}


def test_a_contents_page_reads_one_entry_a_line():
    raw = "1\nTopologische Grundbegriffe\n2\n1.1\nRäume . . . . . . .\n2\n1.3\nStetigkeit\n" \
          ". . . . . . . .\n9\nIndex . . . . . 111"
    blocks = page_blocks(raw, [(0, len(raw))], [[]], contents=True)
    assert blocks[0][2].split("  \n") == [
        "1 Topologische Grundbegriffe 2", "1.1 Räume … 2", "1.3 Stetigkeit … 9", "Index … 111"]


def test_textbook_contents_page_blocks_list_its_entries():
    doc = _fixture("geotopo-textbook-outline.pdf")
    unit = next(u for u in doc.units if u.role == "contents")
    lines = [line for _s, _e, md in unit.blocks for line in md.split("  \n")]
    assert any(line.startswith("1.1 Topologische Räume") and line.endswith(" 2")
               for line in lines)


def test_bullets_are_list_items_and_monospace_is_code(tmp_path: Path):
    page = [
        "The options are these:",
        [("\u2022", "symbol"), (" the first option, short", "plain")],
        [("\u2022", "symbol"), (" the second option, also short", "plain")],
        "And the program reads:",
        [("int main(void) {", "mono")],
        [("    return 0;", "mono")],
        [("}", "mono")],
        "That is all there is to it.",
    ]
    doc = ingest(make_styled_pdf(tmp_path / "c.pdf", [page], gap_after=(0, 2, 3, 4, 5, 6)))
    unit = doc.units[0]
    _check_blocks(unit)
    shown = [md for _s, _e, md in unit.blocks]
    assert "- the first option, short\n- the second option, also short" in shown
    code = next(md for md in shown if md.startswith("```"))
    assert code.split("\n")[1:-1] == ["int main(void) {", "    return 0;", "}"]
    assert shown[-1] == "That is all there is to it."


def test_an_outline_entry_inside_a_block_starts_a_block_of_its_own():
    text = "end of the last section.\n2.2 Naming\nConsider this definition\nand more\nof it."
    at = text.index("2.2 Naming")
    blocks = page_blocks(text, [(0, len(text))], [[]], headings={at: 2})
    assert [(text[s:e], md) for s, e, md in blocks] == [
        ("end of the last section.", "end of the last section."),
        ("2.2 Naming", "## 2.2 Naming"),
        ("Consider this definition\nand more\nof it.", "Consider this definition and more of it."),
    ]
