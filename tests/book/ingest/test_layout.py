"""Page geometry on hand-made boxes, without PyMuPDF: vertical columns and two-column pages."""

from __future__ import annotations

import subprocess
import sys

from readingroom.book.ingest.pdf.layout import Box, assemble_cjk_page, join_blocks, reading_order

EM = 10.0


def column(x: float, text: str, top: float = 0.0) -> list[Box]:
    """A vertical column of one-glyph lines, as MuPDF reports tategaki, starting at ``top``."""
    return [Box(x, top + i * EM, x + EM, top + (i + 1) * EM, ch, vertical=True)
            for i, ch in enumerate(text)]


def paragraph(x0: float, y0: float, x1: float, name: str) -> Box:
    """A paragraph block of three lines (long enough to count as a paragraph)."""
    return Box(x0, y0, x1, y0 + 90, f"{name} line one\n{name} line two\n{name} line three")


def test_vertical_columns_are_read_right_to_left():
    # Stream order left to right on purpose: the geometry, not the stream, decides.
    blocks = [column(70, "の文章"), column(90, "縦書き")]
    page = assemble_cjk_page(blocks, page_width=100)
    assert page.vertical
    assert page.text == "縦書きの文章"


def test_an_indented_column_starts_a_new_paragraph():
    blocks = [column(110, "一行目だ"), column(90, "続きです"), column(70, "次段落", top=EM)]
    page = assemble_cjk_page(blocks, page_width=130)
    assert page.text == "一行目だ続きです\n次段落"
    assert [text for text in page.text.split("\n")] == ["一行目だ続きです", "次段落"]


def test_a_column_stopping_short_ends_its_paragraph():
    blocks = [column(110, "終わり"), column(90, "次の段落です"), column(70, "続きの文章よ")]
    page = assemble_cjk_page(blocks, page_width=130)
    assert page.text == "終わり\n次の段落です続きの文章よ"


def test_vertical_ruby_beside_a_column_is_left_out():
    base = column(90, "漢字の読み方")
    ruby = [Box(100.5, 0, 104.5, 4, "か", vertical=True), Box(100.5, 5, 104.5, 9, "ん",
                                                                 vertical=True)]
    page = assemble_cjk_page([base + ruby, column(70, "続く文章だ")], page_width=110)
    assert page.text == "漢字の読み方続く文章だ"
    assert page.ruby == 2


def test_horizontal_cjk_lines_join_only_where_they_wrap():
    lines = [Box(0, 0, 200, EM, "これは横書きの文章で、右端まで"),
             Box(0, 2 * EM, 120, 3 * EM, "続いて折り返す。"),
             Box(0, 4 * EM, 200, 5 * EM, "次の段落です。")]
    page = assemble_cjk_page([lines], page_width=200)
    assert not page.vertical
    assert page.text.split("\n") == [
        "これは横書きの文章で、右端まで続いて折り返す。", "次の段落です。"]


def test_two_column_page_read_bottom_up_is_reordered_by_columns():
    left = [paragraph(50, y, 280, f"L{n}") for n, y in ((1, 0), (2, 100), (3, 200))]
    right = [paragraph(320, y, 550, f"R{n}") for n, y in ((1, 0), (2, 100), (3, 200))]
    heading = Box(50, -50, 550, -20, "A heading across both columns")
    stream = [heading, *reversed(left), *reversed(right)]
    ordered, reordered = reading_order(stream, page_width=600)
    assert reordered
    assert [b.text.split()[0] for b in ordered] == ["A", "L1", "L2", "L3", "R1", "R2", "R3"]


def test_a_full_width_block_between_bands_splits_the_columns():
    top = [paragraph(50, 0, 280, "L1"), paragraph(320, 0, 550, "R1")]
    rule = Box(50, 100, 550, 120, "Full-width text between the two bands of columns")
    bottom = [paragraph(50, 130, 280, "L2"), paragraph(320, 130, 550, "R2")]
    # Each column read bottom-up in the stream, so the page is re-ordered.
    stream = [bottom[0], top[0], bottom[1], top[1], rule,
              paragraph(50, 230, 280, "L3"), paragraph(50, 0, 280, "L0")]
    ordered, reordered = reading_order(stream, page_width=600)
    assert reordered
    names = [b.text.split()[0] for b in ordered]
    assert names.index("R1") < names.index("Full-width") < names.index("L2")


def test_stream_order_is_kept_when_it_reads_down_the_columns():
    stream = [paragraph(50, y, 280, f"L{y}") for y in (0, 100, 200)] + [
        paragraph(320, y, 550, f"R{y}") for y in (0, 100, 200)]
    ordered, reordered = reading_order(stream, page_width=600)
    assert not reordered and ordered == stream


def test_join_blocks_records_where_each_block_landed():
    a, b = Box(0, 0, 10, 10, "ab"), Box(0, 20, 10, 30, "cd")
    page = join_blocks([(a, ["ab"]), (b, ["cd", "ef"])])
    assert page.text == "ab\ncd\nef"
    assert page.pieces == [(0, 2, 0, 10), (3, 8, 20, 30)]


def test_layout_needs_no_pdf_library():
    probe = ("import sys, readingroom.book.ingest.pdf.layout; "
             "print('pymupdf' in sys.modules or 'fitz' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         timeout=60, check=True)
    assert out.stdout.strip() == "False"
