"""issue 21 §1/§2: tables without full rules (booktabs, or none at all), cells spanning lines,
merged cells; and the line structure of short-line text and one hyphenation rule in book.md.

Generated books (tests/book/make_pdf_classes.py). The table search runs under a generous
budget here (the budget itself is tested in test_pdf_tables.py), so a loaded machine cannot
turn a table into text.
"""

from __future__ import annotations

import pytest

from readingroom.book.ingest.pdf import read_pdf
from readingroom.book.ingest.pdf import reader as pdf_module
from readingroom.book.ingest.pdf import tables as pdf_tables
from readingroom.book.ingest.pdf.tables import TableBudget
from readingroom.book.records import build_book_text

from .. import make_pdf_classes as make


class _Generous(TableBudget):
    def __init__(self, share: float, first: float = 0.03) -> None:
        super().__init__(share, first=60.0)


@pytest.fixture(scope="module")
def generous():
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pdf_module, "TableBudget", _Generous)
        yield


@pytest.fixture(scope="module")
def tables(tmp_path_factory, generous):
    return read_pdf(make.tables_pdf(tmp_path_factory.mktemp("t") / "tables.pdf"))


def _tables(unit) -> list[str]:
    return [md for _s, _e, md in unit.blocks if md.startswith("| ")]


def _markdown(rows) -> str:
    lines = ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join([lines[0], "|" + " --- |" * len(rows[0]), *lines[1:]])


def test_a_booktabs_table_is_a_markdown_table_with_its_cells_verbatim(tables):
    unit = tables.units[0]
    assert _tables(unit) == [_markdown(make.BOOKTABS)]
    # the paragraphs around it stay paragraphs; the raw text is as extracted
    assert unit.blocks[0][2].startswith("The results of the three methods")
    assert unit.blocks[-1][2] == "The larger model is the most accurate but also the slowest one."
    assert "Method\nAccuracy\nTime (s)\nBaseline" in unit.text


def test_a_table_of_aligned_columns_without_any_rule_is_a_table(tables):
    assert _tables(tables.units[1]) == [_markdown(make.UNRULED)]


def test_a_header_cell_over_two_lines_is_one_cell(tables):
    rows = [[" ".join(cell) for cell in row] for row in make.MULTILINE]
    assert _tables(tables.units[2]) == [_markdown(rows)]
    # the raw text reads the header line by line across the row, and stays so
    assert "Setting\nLearning\nBatch\nrate\nsize" in tables.units[2].text


def test_each_table_block_covers_exactly_its_cells_raw_text(tables):
    assert sum(len(_tables(unit)) for unit in tables.units) == 3
    for unit in tables.units:
        for start, end, md in unit.blocks:
            if md.startswith("| "):
                cells = [c.strip() for line in md.split("\n")[2:] + md.split("\n")[:1]
                         for c in line.strip("|").split("|")]
                assert sorted(unit.text[start:end].split()) == sorted(
                    w for c in cells for w in c.split())
    view = build_book_text(tables)
    assert view.markdown_fallback_units == []


def test_a_merged_cell_repeats_its_text_where_it_spans(tmp_path, generous):
    doc = read_pdf(make.merged_cells_pdf(tmp_path / "m.pdf"))
    assert _tables(doc.units[0]) == [_markdown(pdf_tables.spanned(make.MERGED))]
    assert pdf_tables.spanned(make.MERGED)[0] == ["Results", "Results", "Year"]


def test_prose_in_two_columns_is_not_a_table():
    # words of two columns of prose: long segments side by side
    words = []
    for row in range(6):
        y = 100 + 13 * row
        for col, x in enumerate((72, 320)):
            text = f"column {col} line {row} of running prose that fills the measure"
            for k, word in enumerate(text.split()):
                words.append((x + 24 * k, y, x + 24 * k + 20, y + 10, word, col, row, k))
    assert pdf_tables.aligned_rows(words) is None


# --- line structure and hyphenation -----------------------------------------------------------


@pytest.fixture(scope="module")
def short_lines(tmp_path_factory):
    doc = read_pdf(make.short_lines_pdf(tmp_path_factory.mktemp("s") / "short.pdf"))
    return build_book_text(doc).markdown


def test_aphorisms_one_per_line_keep_their_lines(short_lines):
    for a, b in zip(make.APHORISMS, make.APHORISMS[1:], strict=False):
        assert f"{a}  \n{b}" in short_lines


def test_verse_lines_keep_their_lines_on_a_page_of_their_own(short_lines):
    for a, b in zip(make.VERSE, make.VERSE[1:], strict=False):
        assert f"{a}  \n{b}" in short_lines


def test_prose_is_still_joined_into_one_paragraph(short_lines):
    assert "measure of its lines: these lines run the" in short_lines.replace("\n", " ")


def test_one_hyphenation_rule_for_words_broken_at_a_line_end(tmp_path):
    md = build_book_text(read_pdf(make.hyphenation_pdf(tmp_path / "h.pdf"))).markdown
    flat = " ".join(md.split())
    assert "each single-document index" in flat  # the book prints the compound whole
    assert "says LOCATION in capitals" in flat  # a capitalised word broken: joined too
    assert "every example in this book" in flat
    assert "singledocument" not in flat and "LO-CATION" not in flat
