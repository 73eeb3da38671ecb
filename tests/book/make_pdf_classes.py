"""PDFs of the book classes of issue 21, built for tests (PyMuPDF, Helvetica, A4).

Hand-made: each generator writes the smallest PDF that shows one class as the held-out books
show it (no real file of the fixture set has it), and returns its path. Text is placed line by
line, so a test knows where every word lands.

* :func:`numbered_headings_pdf` — LaTeX-style headings: the section number and the title are
  separate runs ("1", "Foo"), the outline says only "Foo".
* :func:`image_pages_pdf` — image-only pages among text pages, one with an outline entry.
* :func:`kerned_title_pdf` — no metadata title; the first line and a heading are set in large,
  tightly kerned type without space characters.
* :func:`tables_pdf` — a booktabs table (three horizontal rules, none between cells), a table
  of aligned columns without rules, and a booktabs table whose cells span two lines.
* :func:`merged_cells_pdf` — a ruled table whose first header cell spans two columns.
* :func:`note_markers_pdf` — superscript note markers after a number and after a word, their
  footnotes at the foot of the page (one written first in the content stream).
* :func:`unmapped_glyphs_pdf` — a font whose ToUnicode map sends one glyph to nothing.
* :func:`outline_dest_pdf` — outline entries whose titles differ from the printed headings,
  with ``/XYZ`` destinations; one points at the top of a page whose first line continues the
  previous page's sentence.
* :func:`paper_pdf` — a paper without an outline: numbered bold headings at body size.
* :func:`short_lines_pdf` — a page of aphorisms and a page of verse, one per line.
* :func:`stacked_entries_pdf` — two outline entries (a part, its first chapter) at one place.
* :func:`hyphenation_pdf` — words broken at line ends: a compound, an upper-case word.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

os.environ.setdefault("PYMUPDF_MESSAGE", "fd:2")

import pymupdf  # the message route above must be set before this import

__all__ = [
    "hyphenation_pdf",
    "image_pages_pdf",
    "kerned_title_pdf",
    "merged_cells_pdf",
    "note_markers_pdf",
    "numbered_headings_pdf",
    "outline_dest_pdf",
    "paper_pdf",
    "short_lines_pdf",
    "stacked_entries_pdf",
    "tables_pdf",
    "unmapped_glyphs_pdf",
]

_A4 = (595.0, 842.0)
_LEFT = 72.0
_BODY = 10.0
_LEAD = 13.0

BODY = [
    "This section explains the subject in some detail, with enough words that the",
    "paragraph wraps over several lines of body text, as a real paper would do it,",
    "and it ends with a short line.",
]


def _page(doc: pymupdf.Document) -> pymupdf.Page:
    return doc.new_page(width=_A4[0], height=_A4[1])


def _lines(page: pymupdf.Page, y: float, lines: Sequence[str], *, size: float = _BODY,
           font: str = "helv", x: float = _LEFT) -> float:
    for line in lines:
        page.insert_text((x, y), line, fontsize=size, fontname=font)
        y += size * 1.3
    return y


def _kerned(page: pymupdf.Page, x: float, y: float, words: Sequence[str], size: float,
            font: str = "hebo", gap: float = 0.12) -> None:
    """Words placed one by one with a gap of ``gap`` em and no space character between them
    (too narrow for MuPDF to see a space)."""
    for word in words:
        page.insert_text((x, y), word, fontsize=size, fontname=font)
        x += pymupdf.get_text_length(word, fontname=font, fontsize=size) + gap * size


def _goto(page: int, y: float) -> dict:
    """An outline destination: ``page`` (0-based) at ``y`` (top-down page space)."""
    return {"kind": pymupdf.LINK_GOTO, "page": page, "to": pymupdf.Point(_LEFT, y), "zoom": 0}


def numbered_headings_pdf(path: Path) -> Path:
    """Three pages headed "1 Foo", "4 Foo", "7 Foo" (number and title separate runs in bold
    14 pt), each with a paragraph; the outline entries say "Foo" and point at the headings."""
    doc = pymupdf.open()
    toc = []
    for n, number in enumerate(("1", "4", "7")):
        page = _page(doc)
        page.insert_text((_LEFT, 100), number, fontsize=14, fontname="hebo")
        page.insert_text((_LEFT + 20, 100), "Foo", fontsize=14, fontname="hebo")
        _lines(page, 125, [f"Section {number} says {'abc'[n]}{'xyz'[n]} first.", *BODY])
        toc.append([1, "Foo", n + 1, _goto(n, 86)])
    doc.set_toc(toc)
    doc.save(path)
    doc.close()
    return path


def _grey_image(page: pymupdf.Page, rect: pymupdf.Rect) -> None:
    pix = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 60, 90), 0)
    pix.clear_with(180)
    page.insert_image(rect, pixmap=pix)


def image_pages_pdf(path: Path) -> Path:
    """Text, two image-only pages (the second under an outline entry "Plate I"), text."""
    doc = pymupdf.open()
    page = _page(doc)
    _lines(page, 100, ["The first chapter tells the story of the river and the mill.",
                       "It goes on for a while before the plates."])
    for _ in range(2):
        _grey_image(_page(doc), pymupdf.Rect(72, 72, 523, 770))
    page = _page(doc)
    _lines(page, 100, ["The second chapter comes after the plates and goes on with it.",
                       "More text here."])
    doc.set_toc([[1, "The River", 1, _goto(0, 80)], [1, "Plate I", 3, _goto(2, 60)],
                 [1, "The Mill", 4, _goto(3, 80)]])
    doc.save(path)
    doc.close()
    return path


def kerned_title_pdf(path: Path) -> Path:
    """No metadata title; "Two-Column Document with Lorem Ipsum" in 24 pt bold and the heading
    "Results and Discussion" in 16 pt bold are set word by word without space characters."""
    doc = pymupdf.open()
    page = _page(doc)
    _kerned(page, _LEFT, 100, ["Two-Column", "Document", "with", "Lorem", "Ipsum"], 24)
    y = _lines(page, 140, [
        "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor",
        "incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis",
        "nostrud exercitation ullamco laboris nisi ut aliquip ex ea commodo consequat."])
    _kerned(page, _LEFT, y + 20, ["Results", "and", "Discussion"], 16)
    _lines(page, y + 45, [
        "Duis aute irure dolor in reprehenderit in voluptate velit esse cillum dolore eu",
        "fugiat nulla pariatur. Excepteur sint occaecat cupidatat non proident, sunt in",
        "culpa qui officia deserunt mollit anim id est laborum."])
    doc.set_metadata({})
    doc.save(path)
    doc.close()
    return path


BOOKTABS = [["Method", "Accuracy", "Time (s)"],
            ["Baseline", "71.2", "0.8"],
            ["Ours (small)", "78.9", "1.4"],
            ["Ours (large)", "83.5", "4.1"]]
UNRULED = [["Country", "Capital", "Population"],
           ["Norway", "Oslo", "5,550,203"],
           ["Portugal", "Lisbon", "10,467,366"],
           ["Peru", "Lima", "34,352,719"]]
MULTILINE = [[["Setting"], ["Learning", "rate"], ["Batch", "size"]],
             [["Warm-up"], ["0.001"], ["32"]],
             [["Main"], ["0.01"], ["256"]]]
"""A header row whose cells span two lines ("Learning / rate"), then one-line rows."""

_COLUMNS = (0.0, 150.0, 280.0)


def _cells(page: pymupdf.Page, top: float, rows: Sequence[Sequence[Sequence[str]]],
           lead: float = 14.0) -> float:
    """Rows of cells (each cell a list of lines) written row by row, line by line across the
    row (as LaTeX's stream has them); returns the y below the last row."""
    y = top
    for row in rows:
        height = max(len(cell) for cell in row)
        for k in range(height):
            for c, cell in enumerate(row):
                if k < len(cell):
                    page.insert_text((_LEFT + _COLUMNS[c], y + k * lead), cell[k],
                                     fontsize=_BODY, fontname="helv")
        y += height * lead + 4
    return y


def _rule(page: pymupdf.Page, y: float, width: float = 380.0, thick: float = 0.8) -> None:
    page.draw_line((_LEFT - 4, y), (_LEFT + width, y), width=thick)


def tables_pdf(path: Path) -> Path:
    """Page 0: a booktabs table (top, mid and bottom rules only) between paragraphs.
    Page 1: a table of aligned columns with no rule at all. Page 2: a booktabs table whose
    header cells span two lines."""
    doc = pymupdf.open()
    page = _page(doc)
    y = _lines(page, 100, ["The results of the three methods are compared in the table below,",
                           "with the time each one took on the test set."])
    top = y + 10
    _rule(page, top)
    _cells(page, top + 16, [[[c] for c in BOOKTABS[0]]])
    _rule(page, top + 24, thick=0.5)
    bottom = _cells(page, top + 40, [[[c] for c in row] for row in BOOKTABS[1:]])
    _rule(page, bottom - 6)
    _lines(page, bottom + 20, ["The larger model is the most accurate but also the slowest one."])

    page = _page(doc)
    y = _lines(page, 100, ["Three countries and their capitals are listed below for reference."])
    bottom = _cells(page, y + 16, [[[c] for c in row] for row in UNRULED])
    _lines(page, bottom + 16, ["The figures are from the last census of each country."])

    page = _page(doc)
    y = _lines(page, 100, ["The settings of the two training phases are these ones here."])
    top = y + 10
    _rule(page, top)
    head = _cells(page, top + 16, MULTILINE[:1])
    _rule(page, head - 8, thick=0.5)
    bottom = _cells(page, head + 8, MULTILINE[1:])
    _rule(page, bottom - 6)
    _lines(page, bottom + 20, ["Both phases use the same optimiser and the same data order."])
    doc.save(path)
    doc.close()
    return path


MERGED = [["Results", None, "Year"], ["Wins", "Losses", "2020"], ["12", "3", "2021"],
          ["9", "6", "2022"]]
"""None: the cell the merged header cell "Results" covers."""


def merged_cells_pdf(path: Path) -> Path:
    """A ruled grid (22 pt rows, 120 pt columns) whose header row has no rule between its
    first two cells: "Results" spans them."""
    doc = pymupdf.open()
    page = _page(doc)
    _lines(page, 100, ["A ruled table whose first header cell spans two columns:"])
    left, top, column, row = _LEFT, 120.0, 120.0, 22.0
    for r, cells in enumerate(MERGED):
        for c, cell in enumerate(cells):
            if cell:
                page.insert_text((left + c * column + 6, top + r * row + 15), cell,
                                 fontsize=_BODY, fontname="helv")
    bottom = top + len(MERGED) * row
    for r in range(len(MERGED) + 1):
        page.draw_line((left, top + r * row), (left + 3 * column, top + r * row))
    for c in range(4):
        x = left + c * column
        page.draw_line((x, top + row if c == 1 else top), (x, bottom))
    _lines(page, bottom + 20, ["The table ends above this line of text."])
    doc.save(path)
    doc.close()
    return path


def note_markers_pdf(path: Path) -> Path:
    """Body lines with superscript note markers (7 pt, raised 4 pt) after a number
    ("83,190,556²") and after a word ("census³"); their footnotes (8 pt) at the foot of the
    page, the second written before the body in the content stream."""
    doc = pymupdf.open()
    page = _page(doc)
    # Written first, read last: footnote 3 at the foot of the page.
    page.insert_text((_LEFT, 790), "3 The census is taken every ten years.", fontsize=8,
                     fontname="helv")

    def marked(y: float, before: str, marker: str, after: str) -> None:
        page.insert_text((_LEFT, y), before, fontsize=_BODY, fontname="helv")
        x = _LEFT + pymupdf.get_text_length(before, fontname="helv", fontsize=_BODY)
        page.insert_text((x + 0.5, y - 4), marker, fontsize=7, fontname="helv")
        x += pymupdf.get_text_length(marker, fontname="helv", fontsize=7) + 0.5
        page.insert_text((x, y), after, fontsize=_BODY, fontname="helv")

    _lines(page, 100, ["The population of the region grew quickly in the last century, and",
                       "by the time of the last count it had reached a high figure."])
    marked(126, "The population of the region was 83,190,556", "2", " in the year of the")
    marked(139, "last national census", "3", ", which is the figure we use in this book.")
    _lines(page, 152, ["The next chapter looks at how the figure was reached."])
    page.insert_text((_LEFT, 776), "2 Figure from the national office.", fontsize=8,
                     fontname="helv")
    doc.save(path)
    doc.close()
    return path


_UNMAPPED_CHAR = chr(0x24AF)
"""A character of PyMuPDF's built-in CJK font whose glyph id (945) reads as U+03B1 (α)."""
_UNMAPPED_GID = 945


def unmapped_glyphs_pdf(path: Path) -> Path:
    """Two pages in an embedded font whose ToUnicode map leaves glyph 945 unmapped, so MuPDF
    would emit it as "α" glued to the next word ("measuredαvalue")."""
    doc = pymupdf.open()
    font = pymupdf.Font("cjk")
    assert font.has_glyph(ord(_UNMAPPED_CHAR)) == _UNMAPPED_GID
    for text in (f"The measured{_UNMAPPED_CHAR}value was stable across all runs.",
                 f"A second page{_UNMAPPED_CHAR}holds the glyph once more."):
        page = _page(doc)
        page.insert_font(fontname="F0", fontbuffer=font.buffer)
        page.insert_text((_LEFT, 100), text, fontname="F0", fontsize=11)
        page.insert_text((_LEFT, 115), "Every other glyph in this font is mapped.",
                         fontname="F0", fontsize=11)
    doc.subset_fonts()
    done: set[int] = set()
    for xref in range(1, doc.xref_length()):
        kind, value = doc.xref_get_key(xref, "ToUnicode")
        if kind != "xref":
            continue
        stream = int(value.split()[0])
        if stream in done:
            continue
        done.add(stream)
        doc.update_stream(stream, _unmap(doc.xref_stream(stream).decode("latin-1"),
                                         _UNMAPPED_GID).encode("latin-1"))
    doc.save(path, garbage=3, deflate=True)
    doc.close()
    return path


def _unmap(cmap: str, gid: int) -> str:
    """The ToUnicode CMap without a mapping for ``gid`` (a bfrange holding it is split)."""
    out = []
    for line in cmap.split("\n"):
        m = re.fullmatch(r"<([0-9a-fA-F]{4})> <([0-9a-fA-F]{4})> <([0-9a-fA-F]{4})>",
                         line.strip())
        if m:
            lo, hi, dst = (int(g, 16) for g in m.groups())
            if lo <= gid <= hi:
                if lo < gid:
                    out.append(f"<{lo:04x}> <{gid - 1:04x}> <{dst:04x}>")
                if gid < hi:
                    out.append(f"<{gid + 1:04x}> <{hi:04x}> <{dst + gid + 1 - lo:04x}>")
                continue
        m = re.fullmatch(r"<([0-9a-fA-F]{4})> <[0-9a-fA-F]+>", line.strip())
        if m and int(m.group(1), 16) == gid:
            continue
        out.append(line)
    return "\n".join(out)


def outline_dest_pdf(path: Path) -> Path:
    """Page 0: the printed headings "Getting Started Quickly" and "Installing the Tools" with
    the outline entries "Introduction" and "Installation" pointing at them (``/XYZ``).
    Page 1: its first line continues page 0's last sentence; the entry "Usage" points at the
    top of the page, its printed heading "Using the Program" lower down."""
    doc = pymupdf.open()
    page = _page(doc)
    page.insert_text((_LEFT, 100), "Getting Started Quickly", fontsize=14, fontname="hebo")
    _lines(page, 122, ["The program reads a file and writes a report of what it found there.",
                       "It needs nothing more than a recent computer."])
    page.insert_text((_LEFT, 180), "Installing the Tools", fontsize=14, fontname="hebo")
    _lines(page, 202, ["Download the installer from the project page and run it; the tools",
                       "are then found in the folder that the installer names, and the"])
    page = _page(doc)
    _lines(page, 100, ["settings file sits next to them, where you may change it later.",
                       "Nothing else is needed."])
    page.insert_text((_LEFT, 160), "Using the Program", fontsize=14, fontname="hebo")
    _lines(page, 182, ["Start the program with the name of a file as its only argument."])
    doc.set_toc([[1, "Introduction", 1, _goto(0, 86)], [1, "Installation", 1, _goto(0, 166)],
                 [1, "Usage", 2, _goto(1, 40)]])
    doc.save(path)
    doc.close()
    return path


PAPER_HEADINGS = ["1 Background", "2 Method", "2.1 Basic Pattern Generation", "3 Results"]


def paper_pdf(path: Path) -> Path:
    """Two pages of a paper with no outline: numbered bold headings set at body size (and one
    bold line in the text that is not a heading), paragraphs between them."""
    doc = pymupdf.open()
    page = _page(doc)
    page.insert_text((_LEFT, 80), "A Study of Patterns", fontsize=18, fontname="hebo")
    y = 120.0
    for n, heading in enumerate(PAPER_HEADINGS):
        if n == 2:
            page = _page(doc)
            y = 100.0
        page.insert_text((_LEFT, y), heading, fontsize=_BODY, fontname="hebo")
        y = _lines(page, y + 16, [f"Paragraph {n} of the paper says {'pqrs'[n]}{'klmn'[n]}.",
                                  *BODY]) + 12
    page.insert_text((_LEFT, y), "Note well.", fontsize=_BODY, fontname="hebo")
    _lines(page, y + 14, ["This line follows a bold remark that is no heading."])
    doc.save(path)
    doc.close()
    return path


APHORISMS = [
    "Brevity is the soul of wit.",
    "Who knows most, says least.",
    "A word to the wise is enough, and often more than enough for a fool.",
    "Silence is the fence around wisdom.",
    "Small strokes fell great oaks.",
    "He that lies down with dogs shall rise up with fleas.",
]
VERSE = [
    "The woods are lovely, dark and deep",
    "And the river runs below the hill",
    "Where the miller sleeps beside his wheel",
    "And the night is long and still",
]


def short_lines_pdf(path: Path) -> Path:
    """A page of prose, a page of aphorisms (one per line) and a page of verse lines."""
    doc = pymupdf.open()
    _lines(_page(doc), 100, [
        "A page of plain prose comes first, so that the book has a measure of its lines:",
        "these lines run the full width of the text block, as wrapped prose always does,",
        "and they are joined into one paragraph in the Markdown view of the book."])
    _lines(_page(doc), 100, APHORISMS)
    _lines(_page(doc), 100, VERSE)
    doc.save(path)
    doc.close()
    return path


def hyphenation_pdf(path: Path) -> Path:
    """Lines broken after a hyphen: "single-⏎document" (a compound the book also prints whole,
    "single-document"), "LO-⏎CATION" (upper case), "exam-⏎ple" (a word)."""
    doc = pymupdf.open()
    _lines(_page(doc), 100, [
        "The tool builds one single-document index for every file it reads, and a",
        "second index for the whole library; each single-",
        "document index is small. The heading of the first column says LO-",
        "CATION in capitals, as the old maps do, and every exam-",
        "ple in this book uses such a map of the old town and its streets and roads.",
    ])
    doc.save(path)
    doc.close()
    return path


def stacked_entries_pdf(path: Path) -> Path:
    """Two pages; the outline's "Part One" (not printed) and "1 Beginnings" (printed) both
    point at the chapter heading of page 1."""
    doc = pymupdf.open()
    _lines(_page(doc), 100, ["A page of front matter comes before the first part of the book."])
    page = _page(doc)
    page.insert_text((_LEFT, 100), "1 Beginnings", fontsize=14, fontname="hebo")
    _lines(page, 122, ["The first chapter begins with the river and the old mill by it."])
    doc.set_toc([[1, "Part One", 2, _goto(1, 86)], [2, "1 Beginnings", 2, _goto(1, 86)]])
    doc.save(path)
    doc.close()
    return path
