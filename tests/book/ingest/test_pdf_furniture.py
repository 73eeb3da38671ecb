"""PDF page furniture, printed page numbers, contents pages, section numbers and the title."""

from __future__ import annotations

from pathlib import Path

import pytest

from readingroom.book.furniture import mask_furniture
from readingroom.book.ingest import ingest
from readingroom.book.ingest.pdf.contents import ContentsJudge, outline_key
from readingroom.book.ingest.pdf.furniture import (
    Folio,
    band_lines,
    find_furniture,
    infer_labels,
    parse_folio,
    verse_line_numbers,
)
from readingroom.book.ingest.pdf.layout import PageText
from readingroom.book.model import SourceDocument
from readingroom.book.text import normalise

from ..conftest import fixture_books
from ..ingested import ingested
from ..make_books import make_pdf
from ..make_pdf_furniture import make_furniture_pdf, make_titled_pdf, make_verse_pdf

BODY = [[f"Page {p} line {i} of the running text, plain words." for i in range(8)]
        for p in range(6)]


def _furniture(doc: SourceDocument, index: int) -> list[tuple[str, str]]:
    unit = doc.units[index]
    return [(kind, unit.text[s:e]) for s, e, kind in unit.furniture]


def _reads(doc: SourceDocument) -> str:
    """The book as a reader sees it: pages joined, furniture stepped over, normalised."""
    return normalise("\n".join(mask_furniture(u.text, u.furniture) for u in doc.units))


# --- running heads and folios ----------------------------------------------------------------


@pytest.mark.parametrize("place", ["foot", "head"])
def test_running_heads_and_folios_are_marked_on_every_page(tmp_path: Path, place):
    doc = ingest(make_furniture_pdf(tmp_path / "b.pdf", BODY, folio=place))
    for index, unit in enumerate(doc.units):
        found = _furniture(doc, index)
        assert ("folio", str(index + 1)) in found
        head = "A Book of Tests" if (index + 1) % 2 == 0 else "Chapter Title"
        assert ("running_head", head) in found
        # The body is never furniture.
        assert not any("running text" in text for _kind, text in found)
        assert unit.label == str(index + 1)
        assert unit.label_inferred is True
    assert any("inferred from the folios" in w for w in doc.warnings)


@pytest.mark.parametrize(
    ("style", "printed"),
    [("dashes", "- 3 -"), ("bar", "3"), ("roman", "iii"), ("plain", "3")],
)
def test_decorated_and_roman_folios_give_the_printed_number(tmp_path: Path, style, printed):
    place = "head" if style == "bar" else "foot"
    doc = ingest(make_furniture_pdf(tmp_path / "b.pdf", BODY, folio=place, folio_style=style))
    unit = doc.units[2]
    assert ("folio", printed) in _furniture(doc, 2)
    assert unit.label == ("iii" if style == "roman" else "3")
    if style == "bar":
        # "3 | Chapter Title": the number is the folio, the rest the running head.
        assert ("running_head", "| Chapter Title") in _furniture(doc, 2)


def test_inferred_labels_fill_chapter_openings_and_skip_an_unnumbered_title_page(tmp_path):
    path = make_furniture_pdf(tmp_path / "b.pdf", BODY, plain_pages=1, bare=(3,),
                              first_folio=1)
    doc = ingest(path)
    assert [u.label for u in doc.units] == [None, "1", "2", "3", "4", "5"]
    assert doc.units[0].label_inferred is False
    assert doc.units[3].label_inferred is True  # a page without a folio, between two
    assert doc.units[3].furniture == ()
    assert doc.units[0].furniture == ()


def test_pdf_page_labels_win_over_folios(tmp_path):
    labels = [{"startpage": 0, "prefix": "", "style": "D", "firstpagenum": 10}]
    doc = ingest(make_furniture_pdf(tmp_path / "b.pdf", BODY, labels=labels))
    assert [u.label for u in doc.units] == [str(10 + i) for i in range(6)]
    assert not any(u.label_inferred for u in doc.units)
    # Furniture is still marked (the printed folios disagree with the labels here).
    assert all(u.furniture for u in doc.units)


def test_a_single_page_marks_nothing(tmp_path):
    doc = ingest(make_furniture_pdf(tmp_path / "b.pdf", BODY[:1]))
    assert doc.units[0].furniture == ()
    assert doc.units[0].label is None


def test_a_number_in_the_middle_of_a_page_is_not_a_folio(tmp_path):
    # Every page has a line that is only a number, rising with the page, in mid-page.
    pages = [[*lines[:4], str(index + 1), *lines[4:]] for index, lines in enumerate(BODY)]
    doc = ingest(make_furniture_pdf(tmp_path / "b.pdf", pages, heads=None, folio="none"))
    assert all(u.furniture == () for u in doc.units)
    assert all(u.label is None for u in doc.units)


def test_raw_text_keeps_the_furniture(tmp_path):
    doc = ingest(make_furniture_pdf(tmp_path / "b.pdf", BODY))
    for unit in doc.units:
        for start, end, _kind in unit.furniture:
            assert unit.text[start:end].strip()
        assert "Chapter Title" in unit.text or "A Book of Tests" in unit.text


def test_a_sentence_across_a_page_break_reads_without_the_folio(tmp_path):
    pages = [
        [*BODY[0][:7], "The sentence that a reader quotes runs to the foot of"],
        ["the page and on to the next one, where it ends.", *BODY[1][1:]],
        BODY[2],
        BODY[3],
    ]
    doc = ingest(make_furniture_pdf(tmp_path / "b.pdf", pages))
    quote = normalise("runs to the foot of the page and on to the next one")
    assert quote in _reads(doc)
    raw = normalise("\n".join(u.text for u in doc.units))
    assert quote not in raw  # the folio and the running head sit between its words


# --- verse line numbers ----------------------------------------------------------------------


VERSE = [
    [f"Verse line {n} of the poem, in measured words" for n in range(1, 13)],
    [f"Verse line {n} of the poem, in measured words" for n in range(13, 25)],
]


@pytest.mark.parametrize("side", ["right", "left"])
def test_verse_line_numbers_are_furniture(tmp_path: Path, side):
    doc = ingest(make_verse_pdf(tmp_path / "v.pdf", VERSE, side=side, folios=True))
    numbers = [text for u in doc.units for kind, text in _furniture(doc, u.index)
               if kind == "line_number"]
    assert numbers == ["5", "10", "15", "20"]
    folios = [text for u in doc.units for kind, text in _furniture(doc, u.index)
              if kind == "folio"]
    assert folios == ["1", "2"]
    quote = normalise("measured words Verse line 11 of the poem")
    assert quote in _reads(doc)


def test_numbers_in_tables_and_figures_are_not_line_numbers():
    # Axis labels (one per line) and a list of values beside their labels.
    texts = [
        (0, "Figure\n-4\n-2\n2\n4\n6\n8\nThe axis", ()),
        (1, "Apples\n5\nPears\n10\nPlums\n15\nFigs\n20", ()),
        (2, "Results\n6\nmore text\nand\n9\nthen\n11\nx\ny\n14", ()),
    ]
    assert verse_line_numbers(texts) == {}


def test_verse_numbers_chain_across_pages():
    lines = "\n".join(f"line {n}" for n in range(1, 6))
    texts = [
        (0, lines + "\n5\n" + lines.replace("line", "row"), ()),
        (1, "\n".join(f"v {n}" for n in range(5)) + "\n15", ()),
    ]
    # 5 lines, "5", 5 lines | 5 lines, "15": 10 lines between 5 and 15.
    found = verse_line_numbers(texts)
    assert [texts[i][1][s:e] for i, spans in found.items() for s, e, _k in spans] == ["5", "15"]


# --- the pure parts --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "value", "bare"),
    [("12", 12, True), ("- 12 -", 12, True), ("[12]", 12, True), ("xii", 12, True),
     ("XIV", 14, True), ("12 | Chapter One", 12, False), ("Chapter One    12", 12, False),
     ("Page 12 of 40", 12, True), ("Seite 12", 12, True), ("12 / 40", 12, True)],
)
def test_parse_folio(line, value, bare):
    folio, is_bare = parse_folio(line)
    assert (folio.value, is_bare) == (value, bare)


@pytest.mark.parametrize("line", ["1.1. TOPOLOGISCHE RÄUME", "Chapter One", "mix", "0", "iiii",
                                  "2Footnote text", "Chapter Civic"])
def test_parse_folio_refuses_what_is_not_a_page_number(line):
    assert parse_folio(line) is None


def test_band_lines_need_a_gap_from_the_body():
    text = "Header\nBody one\nBody two\nFooter 3"
    pieces = [(0, 6, 40, 50), (7, 24, 100, 700), (25, 33, 780, 790)]
    found = band_lines(PageText(text, pieces), 842)
    assert [(line.band, line.text) for line in found] == [("head", "Header"), ("foot", "Footer 3")]
    # A heading set close above the body is not in a band.
    tight = [(0, 6, 90, 99), (7, 24, 100, 700), (25, 33, 701, 710)]
    assert band_lines(PageText(text, tight), 842) == []


def test_infer_labels_fills_gaps_and_runs_on():
    folios = {1: Folio(1, False), 2: Folio(2, False), 4: Folio(4, False)}
    assert infer_labels(folios, 6) == {1: "1", 2: "2", 3: "3", 4: "4", 5: "5"}
    roman = {0: Folio(1, True), 1: Folio(2, True), 2: Folio(1, False), 3: Folio(2, False)}
    assert infer_labels(roman, 4) == {0: "i", 1: "ii", 2: "1", 3: "2"}


def test_find_furniture_needs_evidence_on_several_pages():
    def page(number: int) -> PageText:
        return PageText(f"Body text\n{number}", [(0, 9, 100, 700), (10, 10 + len(str(number)),
                                                                   780, 790)])

    bands = {i: band_lines(page(i + 1), 842) for i in range(2)}
    assert find_furniture(bands, 1) == ({}, {})
    spans, folios = find_furniture(bands, 2)
    assert sorted(spans) == [0, 1]
    assert sorted(folios) == [0, 1]
    # Numbers that do not rise with the page are not folios.
    bands = {i: band_lines(page(7), 842) for i in range(5)}
    assert find_furniture(bands, 5)[1] == {}


# --- contents pages --------------------------------------------------------------------------

CONTENTS = [
    "Contents",
    "1 Introduction . . . . . . . . . . . . 3",
    "2 Methods of the Work . . . . . . . . . 4",
    "2.1 A First Method . . . . . . . . . . 4",
    "3 Results . . . . . . . . . . . . . . . 5",
    "Index . . . . . . . . . . . . . . . . . 6",
]
OUTLINE = [(1, "Contents", 2), (1, "Introduction", 3), (1, "Methods of the Work", 4),
           (2, "A First Method", 4), (1, "Results", 5), (1, "Index", 6)]


def _book_with_contents(tmp_path: Path, contents: list[str], outline=OUTLINE) -> SourceDocument:
    pages = [
        ["A Book of Tests", "by Ann Author"],
        contents,
        ["1 Introduction", *BODY[0][1:]],
        ["2 Methods of the Work", *BODY[1][1:4], "2.1 A First Method", *BODY[1][4:]],
        ["3 Results", *BODY[2][1:]],
        ["Index", "alpha, 3", "beta, 4, 5", "gamma, 5", "delta, 6"],
    ]
    return ingest(make_furniture_pdf(tmp_path / "c.pdf", pages, outline=outline, plain_pages=1))


def test_a_printed_contents_page_is_a_contents_unit(tmp_path):
    doc = _book_with_contents(tmp_path, CONTENTS)
    assert [u.role for u in doc.units] == ["body", "contents", "body", "body", "body", "body"]


def test_a_contents_page_without_a_heading_is_told_by_the_outline(tmp_path):
    doc = _book_with_contents(tmp_path, CONTENTS[1:])
    assert doc.units[1].role == "contents"


def test_a_contents_heading_without_an_outline_is_enough(tmp_path):
    doc = _book_with_contents(tmp_path, CONTENTS, outline=None)
    assert doc.units[1].role == "contents"
    assert [u.role for u in doc.units].count("contents") == 1


def test_a_page_with_a_few_numbered_lines_is_not_contents(tmp_path):
    table = ["Yearly figures", "The harvest was counted each year as follows.",
             "Wheat grown in the north 1998", "Barley grown in the south 1994",
             "Oats grown in the east 2001", "and the rest of the page is prose, as the",
             "chapter goes on to explain at some length."]
    doc = _book_with_contents(tmp_path, table)
    assert doc.units[1].role == "body"


def test_contents_judge_follows_a_contents_list_onto_the_next_page():
    judge = ContentsJudge(["1 Einleitung", "2 Grundlagen", "3 Ergebnisse", "Register"])
    first = "Inhaltsverzeichnis\n1\nEinleitung\n. . . . . . . .\n1\n2\nGrundlagen\n4\n3\n" \
            "Ergebnisse . . . . . .\n9"
    assert judge.judge(first)
    assert judge.judge("Register\n111")
    assert not judge.judge("1 Einleitung\nDies ist der erste Satz des Buches, der weitergeht.\n"
                           "Und noch einer.\nUnd ein dritter Satz.")


def test_outline_key_drops_section_numbers():
    assert outline_key("1.2 Metrische Räume") == outline_key("Metrische Räume")
    assert outline_key("Chapter 3: The End") == outline_key("The End")


# --- section numbers stay with their headings ------------------------------------------------


def test_outline_offsets_point_at_the_section_number(tmp_path):
    pages = [
        ["1 Introduction", *BODY[0][1:]],
        [*BODY[1][:3], "1.2 A Closer Look", *BODY[1][3:]],
        [*BODY[2][:2], "Chapter 3 The Harder Part", *BODY[2][2:]],
        [*BODY[3][:2], "IV. Appendix Matters", *BODY[3][2:]],
    ]
    outline = [(1, "Introduction", 1), (2, "A Closer Look", 2), (1, "The Harder Part", 3),
               (1, "Appendix Matters", 4)]
    doc = ingest(make_furniture_pdf(tmp_path / "s.pdf", pages, outline=outline, heads=None))
    starts = [doc.units[e.unit_index].text[e.char_offset:].split("\n")[0] for e in doc.toc]
    assert starts == ["1 Introduction", "1.2 A Closer Look", "Chapter 3 The Harder Part",
                      "IV. Appendix Matters"]


def test_a_chapter_number_on_the_line_above_belongs_to_the_heading(tmp_path):
    pages = [["7", "The Seventh Chapter", *BODY[0][1:]], BODY[1]]
    path = make_furniture_pdf(tmp_path / "s.pdf", pages, heading_size=24,
                              outline=[(1, "The Seventh Chapter", 1)], heads=None, folio="none")
    doc = ingest(path)
    entry = doc.toc[0]
    assert doc.units[0].text[entry.char_offset:].startswith("7\nThe Seventh Chapter")


def test_a_word_before_the_title_is_not_a_section_number(tmp_path):
    pages = [[*BODY[0][:2], "See Introduction", *BODY[0][2:]]]
    doc = ingest(make_pdf(tmp_path / "s.pdf", ["\n".join(pages[0])],
                          outline=[(1, "Introduction", 1)]))
    entry = doc.toc[0]
    assert doc.units[0].text[entry.char_offset:].startswith("Introduction")


# --- the title of a PDF without metadata -----------------------------------------------------


def test_title_comes_from_the_largest_type_on_the_first_text_page(tmp_path):
    path = make_titled_pdf(tmp_path / "untitled-scan-0042.pdf", ["On the Shape", "of Things"],
                           [BODY[0], BODY[1]], blank_first=True)
    assert ingest(path).title == "On the Shape of Things"


def test_title_comes_from_the_first_outline_entry_when_no_type_stands_out(tmp_path):
    path = make_furniture_pdf(tmp_path / "x.pdf", BODY[:2], heads=None, folio="none",
                              outline=[(1, "A Proper Beginning", 1), (1, "Later", 2)])
    assert ingest(path).title == "A Proper Beginning"


def test_without_heading_or_metadata_there_is_no_title(tmp_path):
    path = make_furniture_pdf(tmp_path / "x.pdf", BODY[:2], heads=None, folio="none")
    assert ingest(path).title is None


@pytest.mark.parametrize("junk", ["Microsoft Word - draft7.docx", "untitled", "paper.tex"])
def test_a_file_name_in_the_metadata_is_not_a_title(tmp_path, junk):
    path = make_pdf(tmp_path / "x.pdf", ["Real Title Here\nbody"], metadata={"title": junk},
                    outline=[(1, "Real Title Here", 1)])
    assert ingest(path).title == "Real Title Here"


# --- the real fixture books ------------------------------------------------------------------


def _fixture(name: str) -> SourceDocument:
    return ingested(fixture_books() / name)


def test_latex_folios_at_the_foot_are_furniture_and_labels():
    doc = _fixture("latex-4-pages-numbered.pdf")
    assert [u.label for u in doc.units] == ["1", "2", "3", "4"]
    assert all(u.label_inferred for u in doc.units)
    for unit in doc.units:
        assert [(k, unit.text[s:e]) for s, e, k in unit.furniture] == [
            ("folio", unit.label)]
        # The folio is the last line of the page's text.
        assert unit.text.rstrip().endswith(unit.label)


def test_latex_sentence_across_pages_reads_without_the_folio():
    doc = _fixture("latex-4-pages-numbered.pdf")
    first, second = doc.units[0], doc.units[1]
    tail = first.text[: first.furniture[0][0]].rstrip().split("\n")[-1].split()[-4:]
    head = second.text.split("\n")[0].split()[:4]
    quote = normalise(" ".join(tail + head))
    assert quote in _reads(doc)


@pytest.mark.slow
def test_textbook_labels_come_from_the_pdf_and_furniture_is_found():
    doc = _fixture("geotopo-textbook-outline.pdf")
    assert doc.units[5].label == "3"
    assert not any(u.label_inferred for u in doc.units)
    with_head = [u for u in doc.units if any(k == "running_head" for _s, _e, k in u.furniture)]
    with_folio = [u for u in doc.units if any(k == "folio" for _s, _e, k in u.furniture)]
    assert len(with_head) >= 0.7 * len(doc.units)
    assert len(with_folio) >= 0.7 * len(doc.units)
    for unit in with_folio:
        folio = next(unit.text[s:e] for s, e, k in unit.furniture if k == "folio")
        assert folio == unit.label  # the printed number agrees with the PDF's labels
    # Maths (axis labels, indices) is never taken for verse line numbers.
    assert not any(k == "line_number" for u in doc.units for _s, _e, k in u.furniture)


def test_textbook_printed_contents_is_a_contents_unit():
    doc = _fixture("geotopo-textbook-outline.pdf")
    contents = [u.index for u in doc.units if u.role == "contents"]
    assert contents and len(contents) <= 3
    first = doc.units[contents[0]]
    # It lists the outline's titles; the chapters themselves are body.
    assert normalise(doc.toc[1].title) in normalise(first.text)
    assert all(doc.units[e.unit_index].role == "body" for e in doc.toc[:5])


def test_textbook_outline_entries_land_on_headings_not_running_heads():
    doc = _fixture("geotopo-textbook-outline.pdf")
    placed = 0
    for entry in doc.toc:
        unit = doc.units[entry.unit_index]
        if normalise(unit.text[entry.char_offset:]).startswith(normalise(entry.title)):
            placed += 1
            assert not any(s <= entry.char_offset < e for s, e, _k in unit.furniture)
    assert placed >= 0.8 * len(doc.toc)


def test_title_skips_a_contents_entry_at_the_head_of_the_outline(tmp_path):
    doc = _book_with_contents(tmp_path, CONTENTS)
    assert doc.title == "Introduction"


# --- what a reader sees through the service --------------------------------------------------


def test_a_quote_across_a_folio_and_a_numbered_verse_line_verifies(tmp_path):
    from readingroom.book.service import BookService

    pages = [
        [*BODY[0][:7], "The sentence that a reader quotes runs to the foot of"],
        ["the page and on to the next one, where it ends.", *BODY[1][1:]],
        BODY[2],
        BODY[3],
    ]
    service = BookService(tmp_path / "data")
    service.init(make_furniture_pdf(tmp_path / "b.pdf", pages), book_id="prose")
    found = service.locate("prose", text="runs to the foot of the page and on to the next one")
    assert found.data["status"] == "verified"
    service.init(make_verse_pdf(tmp_path / "v.pdf", VERSE, folios=True), book_id="verse")
    found = service.locate("verse", text="Verse line 10 of the poem, in measured words Verse "
                                         "line 11")
    assert found.data["status"] == "verified"


def test_a_contents_page_is_left_out_of_search(tmp_path):
    from readingroom.book.service import BookService

    service = BookService(tmp_path / "data")
    pages = [["A Book of Tests", "by Ann Author"], CONTENTS,
             ["1 Introduction", *BODY[0][1:]], ["2 Methods of the Work", *BODY[1][1:]],
             ["3 Results", *BODY[2][1:]], ["Index", "alpha, 3", "beta, 4, 5", "gamma, 5"]]
    service.init(make_furniture_pdf(tmp_path / "c.pdf", pages, outline=OUTLINE, plain_pages=1),
                 book_id="c")
    result = service.search("c", "Methods of the Work")
    assert result.data["contents_left_out"] >= 1


def test_page_labels_written_as_hex_strings_are_decoded(tmp_path):
    # Some producers write each label as a hex UTF-16 prefix; MuPDF hands it back undecoded.
    labels = [{"startpage": i, "prefix": f"<FEFF00{0x31 + i:02X}>", "firstpagenum": 1}
              for i in range(3)]
    doc = ingest(make_pdf(tmp_path / "h.pdf", ["one", "two", "three"], labels=labels))
    assert [u.label for u in doc.units] == ["1", "2", "3"]


def test_a_label_word_before_a_lettered_title_belongs_to_the_heading(tmp_path):
    pages = [[*BODY[0][:2], "Appendix A Copying Information", *BODY[0][2:]]]
    doc = ingest(make_furniture_pdf(tmp_path / "a.pdf", pages, heads=None, folio="none",
                                    outline=[(1, "A Copying Information", 1)]))
    entry = doc.toc[0]
    assert doc.units[0].text[entry.char_offset:].startswith("Appendix A Copying Information")
