"""Ruled PDF tables as Markdown tables in book.md; pages without a grid keep their blocks."""

from __future__ import annotations

import pymupdf
import pytest

from readingroom.book.ingest import ingest
from readingroom.book.ingest.pdf.reader import _extract_page, read_pdf
from readingroom.book.ingest.pdf.tables import (
    TableBudget,
    locate_table,
    merge_tables,
    page_tables,
    table_markdown,
)
from readingroom.book.records import build_book_text
from readingroom.book.service import BookService

from ..conftest import fixture_books
from ..make_pdf_tables import TablePage, make_table_pdf

TABLE = [["Fruit", "Season", "Price"],
         ["Apple", "Autumn", "1.20"],
         ["Pear | Quince", "Winter", "2.50"]]
PAGES = [
    TablePage(["The fruit we sell and its prices are in the table below, by season."],
              TABLE, ["The prices do not include the tax on fruit."]),
    TablePage(["A page with no table at all, only this line", "and this one."]),
    TablePage(["The same cells written without a grid."], TABLE, ruled=False),
]
MARKDOWN = ("| Fruit | Season | Price |\n| --- | --- | --- |\n| Apple | Autumn | 1.20 |\n"
            "| Pear \\| Quince | Winter | 2.50 |")


@pytest.fixture(scope="module")
def document(tmp_path_factory):
    return read_pdf(make_table_pdf(tmp_path_factory.mktemp("tables") / "t.pdf", PAGES))


def _check_blocks(text, blocks):
    pos = 0
    for start, end, _markdown in blocks:
        assert pos <= start < end <= len(text)
        pos = end


def test_a_ruled_table_is_one_markdown_table_block_over_its_cells(document):
    unit = document.units[0]
    _check_blocks(unit.text, unit.blocks)
    tables = [b for b in unit.blocks if b[2].startswith("| ")]
    assert [b[2] for b in tables] == [MARKDOWN]
    start, end, _ = tables[0]
    cells = " ".join(" ".join(row) for row in TABLE)
    assert unit.text[start:end].split() == cells.split()
    # the paragraphs around it are still blocks of their own
    assert unit.blocks[0][2].startswith("The fruit we sell")
    assert unit.blocks[-1][2] == "The prices do not include the tax on fruit."


def test_pages_without_a_grid_get_no_table(document):
    # (issue 21 §1: the same cells without a grid, units[2], stand in aligned columns and may
    # become a table once the budget allows; see test_pdf_text_tables.py)
    for unit in document.units[1:2]:
        assert unit.blocks and not any("| --- |" in b[2] for b in unit.blocks)


def test_book_md_shows_the_table_and_the_raw_text_is_unchanged(tmp_path, document):
    pdf = make_table_pdf(tmp_path / "t.pdf", PAGES)
    service = BookService(tmp_path / "data")
    service.init(pdf, book_id="tables")
    book_md = service._load("tables").pkg.file("book.md").read_text(encoding="utf-8")
    assert MARKDOWN in book_md
    # the ruled table; the gridless cells are one too when the budget reached their page
    # (issue 21 §1), never another table
    tables = [t for t in book_md.split("\n\n") if t.startswith("| ")]
    assert tables and all(t.strip() == MARKDOWN for t in tables)
    bt = build_book_text(document)
    assert MARKDOWN in bt.markdown and bt.markdown_fallback_units == []
    assert "Fruit\nSeason\nPrice" in document.units[0].text  # raw text as extracted


def test_the_table_search_prints_nothing_on_stdout(tmp_path, capfd):
    read_pdf(make_table_pdf(tmp_path / "t.pdf", PAGES[:1]))
    assert capfd.readouterr().out == ""


def test_cells_out_of_order_in_the_text_are_not_located():
    text = "Intro\nFruit\nApple\nSeason\nAutumn\nEnd"
    rows = [["Fruit", "Season"], ["Apple", "Autumn"]]
    assert locate_table(text, rows) is None
    text = "Intro\nFruit Season\nApple\nAutumn\nEnd"
    assert locate_table(text, rows) == (6, 31)
    assert text[6:31] == "Fruit Season\nApple\nAutumn"


def test_cell_text_is_escaped_and_kept_on_one_line():
    md = table_markdown([["a|b", "x\ny"], ["*c*", None]])
    assert md == "| a\\|b | x y |\n| --- | --- |\n| \\*c\\* |  |"


def test_a_table_straddled_by_a_block_is_left_out():
    blocks = ((0, 10, "p"), (11, 20, "q"), (21, 30, "r"))
    assert merge_tables(blocks, [(11, 30, "T")]) == ((0, 10, "p"), (11, 30, "T"))
    assert merge_tables(blocks, [(5, 20, "T")]) == blocks


@pytest.mark.slow
def test_the_textbook_ingests_with_no_markdown_fallback():
    path = fixture_books() / "geotopo-textbook-outline.pdf"
    doc = ingest(path)
    bt = build_book_text(doc)
    assert bt.markdown_fallback_units == []
    for unit in doc.units:
        _check_blocks(unit.text, unit.blocks)



def test_a_spent_budget_searches_no_page(tmp_path):
    path = make_table_pdf(tmp_path / "t.pdf", PAGES[:1])
    with pymupdf.open(path) as pdf:
        page = pdf[0]
        extracted = _extract_page(page, pymupdf.TEXTFLAGS_TEXT)
        text, pieces = extracted.text, extracted.pieces
        budget = TableBudget(0.1)
        assert [b[2] for b in page_tables(page, text, pieces, budget)] == [MARKDOWN]
        assert budget.left < 0.03  # the search was charged
        assert page_tables(page, text, pieces, TableBudget(0.1, first=0.0)) == ()


def test_pages_left_unsearched_by_a_spent_budget_are_named_in_a_warning(tmp_path, monkeypatch):
    import readingroom.book.ingest.pdf.reader as pdf_module

    monkeypatch.setattr(pdf_module, "TableBudget", lambda share: TableBudget(0.0, first=0.0))
    doc = read_pdf(make_table_pdf(tmp_path / "t.pdf", PAGES))
    assert not any("|" in md and "---" in md for u in doc.units for _s, _e, md in u.blocks)
    warning = next(w for w in doc.warnings if w.startswith("Ruled-table search stopped"))
    assert "not searched" in warning
