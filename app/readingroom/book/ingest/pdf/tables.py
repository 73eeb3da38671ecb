"""Tables of a PDF page as Markdown tables, each tied to the raw span of its cells.

Finding tables is dear (PyMuPDF's ``find_tables`` costs several plain extractions of a page), so
a page pays for it only when two cheap tests pass, and a document only up to a time budget
(:class:`TableBudget`):

1. its text blocks stand like table rows (:func:`looks_tabular`; free, from the blocks
   already read);
2. its vector drawings hold a ruled grid (:func:`ruled_area`) with words in half its cells;
   or, without a grid, its row-like blocks (:func:`row_pieces`) stand in aligned columns
   (:func:`aligned_rows`): a ``booktabs`` table (rules above, below and under the header,
   none between cells) or a table with no rule at all.

A ruled table (two rows and two columns at least, half its cells filled; PyMuPDF's
``find_tables``) is kept only when its cells' text, row by row, is one stretch of the page's
raw text give or take whitespace (:func:`locate_table`). A table of aligned columns is built
from the words' positions (``find_tables`` with text strategies splits words and takes the
paragraphs around a table in) and kept only when the raw span of its row blocks holds exactly
its cells' words, in whatever order the content stream wrote them (a header cell over two
lines, "Learning / rate", is read line by line across the row). Cells are verbatim; a cell
spanning columns repeats its text in each (Markdown has no column span). The raw text is
never changed.
"""

from __future__ import annotations

import re
import sys
import time
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Sequence
from itertools import pairwise
from typing import Any

from ...model import Block

__all__ = [
    "TableBudget",
    "aligned_rows",
    "locate_table",
    "looks_tabular",
    "merge_tables",
    "page_tables",
    "row_pieces",
    "ruled_area",
    "spanned",
    "table_markdown",
    "text_tables",
]

_MIN_RULE = 20.0
"""Shortest line (pt) that counts as a rule of a grid."""
_MAX_DRAWINGS = 3000
"""A page with more drawing paths is a figure, not a table: not searched."""
_ESCAPE = re.compile(r"([\\`*_<|])")
_TOKEN = re.compile(r"\S+")


class TableBudget:
    """What a document may spend looking for tables: a share of the time its pages took to
    read (plus a first 30 ms); while it is overspent, no page is searched."""

    def __init__(self, share: float, first: float = 0.03) -> None:
        self.share = share
        self.left = first

    def earn(self, started: float) -> None:
        """Credit the share of the time since ``started`` (a :func:`time.perf_counter` reading)
        spent reading a page."""
        self.left += self.share * (time.perf_counter() - started)

    def spend(self, started: float) -> None:
        """Charge the time since ``started`` (a :func:`time.perf_counter` reading)."""
        self.left -= time.perf_counter() - started


def looks_tabular(text: str, pieces: Sequence[tuple[int, int, float, float]]) -> bool:
    """Whether the page's text blocks stand like table rows: two or more rows of blocks side by
    side (same top, within 1 pt), or two or more blocks whose several lines stand side by side
    (MuPDF makes a row of cells one block: it holds several lines but is one line tall).

    Args:
        text: the page's raw text.
        pieces: ``(start, end, y0, y1)`` of the page's text blocks in ``text``.
    """
    if len(pieces) < 3:
        return False
    # The topmost and bottommost blocks are left out: a running head and its folio side by
    # side make such a row on every page.
    top = min(y0 for _s, _e, y0, _y1 in pieces)
    bottom = max(y0 for _s, _e, y0, _y1 in pieces)
    pieces = [p for p in pieces if top < p[2] < bottom]
    if len(pieces) < 2:
        return False
    line = min(y1 - y0 for _s, _e, y0, y1 in pieces)
    rows = sum(1 for s, e, y0, y1 in pieces
               if y1 - y0 <= 1.5 * line and text.count("\n", s, e) >= 1)
    if rows >= 2:
        return True
    rows = 0
    tops = sorted(y0 for _s, _e, y0, _y1 in pieces)
    run = 1
    for a, b in pairwise(tops):
        if b - a <= 1.0:
            run += 1
            if run == 2:
                rows += 1
                if rows >= 2:
                    return True
        else:
            run = 1
    return False


def ruled_area(page: Any) -> tuple[tuple[float, float, float, float], int] | None:
    """The rectangle of the page's likeliest ruled grid and its number of cells, or None.

    A grid is three or more horizontal rules of one width (at different heights) and three or
    more vertical rules of one height (at different places), each at least 20 pt long; a
    rectangle gives its edges. Rules of a figure rarely line up so.
    """
    drawings = page.get_cdrawings()
    if len(drawings) > _MAX_DRAWINGS:
        return None
    across: dict[tuple[int, int], set[int]] = defaultdict(set)  # x span → heights
    down: dict[tuple[int, int], set[int]] = defaultdict(set)  # y span → places
    for path in drawings:
        for item in path.get("items", ()):
            if item[0] == "l":
                (ax, ay), (bx, by) = item[1], item[2]
                if abs(ay - by) < 0.5 and abs(bx - ax) >= _MIN_RULE:
                    across[_span(ax, bx)].add(round(ay))
                elif abs(ax - bx) < 0.5 and abs(by - ay) >= _MIN_RULE:
                    down[_span(ay, by)].add(round(ax))
            elif item[0] == "re":
                x0, y0, x1, y1 = item[1][:4]
                if x1 - x0 >= _MIN_RULE:
                    across[_span(x0, x1)].update((round(y0), round(y1)))
                if y1 - y0 >= _MIN_RULE:
                    down[_span(y0, y1)].update((round(x0), round(x1)))
    if not across or not down:
        return None
    xs, heights = max(across.items(), key=lambda kv: len(kv[1]))
    ys, places = max(down.items(), key=lambda kv: len(kv[1]))
    if len(heights) < 3 or len(places) < 3:
        return None
    x0, x1 = min(xs[0] * 2, *places) - 2, max(xs[1] * 2, *places) + 2
    y0, y1 = min(ys[0] * 2, *heights) - 2, max(ys[1] * 2, *heights) + 2
    return (x0, y0, x1, y1), (len(heights) - 1) * (len(places) - 1)


def _span(a: float, b: float) -> tuple[int, int]:
    """A rule's extent, to 2 pt, as a key that rules of one grid share."""
    return round(min(a, b) / 2), round(max(a, b) / 2)


def _cell(value: str | None) -> str:
    return " ".join((value or "").split())


def spanned(rows: Sequence[Sequence[str | None]]) -> list[list[str | None]]:
    """Rows with each merged cell's text repeated where it spans (``find_tables`` gives None
    for the cells a merged cell covers): the cell to the left in the same row (a column
    span), else the cell above (a row span)."""
    out: list[list[str | None]] = []
    for r, row in enumerate(rows):
        cells = list(row)
        for c, cell in enumerate(cells):
            if cell is None:
                if c > 0 and cells[c - 1] is not None:
                    cells[c] = cells[c - 1]
                elif r > 0 and c < len(out[r - 1]):
                    cells[c] = out[r - 1][c]
        out.append(cells)
    return out


def table_markdown(rows: Sequence[Sequence[str | None]]) -> str:
    """A Markdown table, the first row its header; cell text on one line, ``|`` and Markdown
    syntax escaped."""
    width = max(len(row) for row in rows)
    lines = []
    for number, row in enumerate(rows):
        cells = [_ESCAPE.sub(r"\\\1", _cell(c)) for c in row]
        cells += [""] * (width - len(cells))
        lines.append("| " + " | ".join(cells) + " |")
        if number == 0:
            lines.append("|" + " --- |" * width)
    return "\n".join(lines)


def locate_table(text: str, rows: Sequence[Sequence[str | None]]) -> tuple[int, int] | None:
    """The raw span holding the cells' text row by row and nothing else (whitespace aside);
    None when the text does not hold them so."""
    wanted = "".join("".join((c or "").split()) for row in rows for c in row)
    if not wanted:
        return None
    starts: list[int] = []  # per token: its start in the compact text
    raw: list[int] = []  # per token: its start in the raw text
    compact: list[str] = []
    size = 0
    for match in _TOKEN.finditer(text):
        starts.append(size)
        raw.append(match.start())
        compact.append(match.group())
        size += len(match.group())
    at = "".join(compact).find(wanted)
    if at < 0:
        return None
    first = bisect_right(starts, at) - 1
    last = bisect_right(starts, at + len(wanted) - 1) - 1
    begin = raw[first] + (at - starts[first])
    end = raw[last] + (at + len(wanted) - starts[last])
    return begin, end


def page_tables(
    page: Any,
    text: str,
    pieces: Sequence[tuple[int, int, float, float]],
    budget: TableBudget,
) -> tuple[Block, ...]:
    """The page's ruled tables as Markdown blocks over raw spans of ``text`` (see the module
    docstring); empty when the page shows no grid, the budget is spent or nothing fits."""
    if budget.left <= 0 or not looks_tabular(text, pieces):
        return ()
    started = time.perf_counter()
    try:
        grid = ruled_area(page)
        if grid is None:
            budget.spend(started)
            started = time.perf_counter()
            return text_tables(page, text, pieces, budget)
        area, cells = grid
        if len(page.get_text("words", clip=area)) < cells / 2:
            return ()  # a grid without text in most cells: a figure
        _quiet()
        found = page.find_tables(clip=area, strategy="lines")
        blocks: list[Block] = []
        for table in found.tables:
            rows = table.extract()
            header = table.header
            if header.external and any(header.names):
                rows = [list(header.names), *rows]
            rows = [row for row in rows if any(_cell(c) for c in row)]
            if len(rows) < 2 or max(len(row) for row in rows) < 2:
                continue
            if 2 * sum(1 for row in rows for c in row if _cell(c)) < sum(map(len, rows)):
                continue  # mostly empty cells: a figure's grid
            span = locate_table(text, rows)
            if span is not None:
                blocks.append((span[0], span[1], table_markdown(spanned(rows))))
        return tuple(sorted(blocks))
    except Exception:  # a table search that fails leaves the page's blocks as they are
        return ()
    finally:
        budget.spend(started)


def _quiet() -> None:
    # find_tables prints a package suggestion on stdout, which may carry JSON-RPC.
    quiet = getattr(sys.modules.get("pymupdf"), "no_recommend_layout", None)
    if quiet is not None:
        quiet()


def merge_tables(blocks: Sequence[Block], tables: Sequence[Block]) -> tuple[Block, ...]:
    """``blocks`` with each table in place of the blocks inside its span.

    A table is left out when a block straddles its edge or it overlaps a table already placed,
    so the blocks stay ordered and non-overlapping.
    """
    out = list(blocks)
    placed: list[tuple[int, int]] = []
    for start, end, markdown in tables:
        if any(s < end and start < e for s, e in placed):
            continue
        if any(s < end and start < e and not (start <= s and e <= end) for s, e, _m in out):
            continue
        out = [b for b in out if not (start <= b[0] and b[1] <= end)]
        out.append((start, end, markdown))
        placed.append((start, end))
    out.sort(key=lambda b: b[0])
    return tuple(out)


# --- tables of aligned text columns (booktabs rules, or none) --------------------------------


def row_pieces(text: str, pieces: Sequence[tuple[int, int, float, float]]) -> list[list[int]]:
    """Runs of consecutive text blocks that stand like table rows: several lines side by side
    (a block of k lines much less than k lines tall). Each run of two or more is a candidate
    table (the numbers of its blocks)."""
    if not pieces:
        return []
    line = min(y1 - y0 for _s, _e, y0, y1 in pieces) or 1.0
    runs: list[list[int]] = []
    current: list[int] = []
    for n, (s, e, y0, y1) in enumerate(pieces):
        lines = text.count("\n", s, e) + 1
        if lines >= 2 and (y1 - y0) / lines < 0.6 * line:
            current.append(n)
            continue
        if len(current) >= 2:
            runs.append(current)
        current = []
    if len(current) >= 2:
        runs.append(current)
    return runs


def _segments(words: Sequence[tuple[Any, ...]]) -> list[tuple[float, float, float, float, str]]:
    """Words grouped into segments: runs on one MuPDF line without a gap of an em or more."""
    by_line: dict[tuple[int, int], list[tuple[Any, ...]]] = defaultdict(list)
    for w in words:
        by_line[(w[5], w[6])].append(w)
    out: list[tuple[float, float, float, float, str]] = []
    for line in by_line.values():
        line.sort(key=lambda w: w[0])
        current = [line[0]]
        for w in line[1:]:
            em = current[-1][3] - current[-1][1]
            if w[0] - current[-1][2] >= em:
                out.append(_segment(current))
                current = [w]
            else:
                current.append(w)
        out.append(_segment(current))
    return out


def _segment(words: Sequence[tuple[Any, ...]]) -> tuple[float, float, float, float, str]:
    return (min(w[0] for w in words), min(w[1] for w in words), max(w[2] for w in words),
            max(w[3] for w in words), " ".join(str(w[4]) for w in words))


def aligned_rows(words: Sequence[tuple[Any, ...]]) -> list[list[str]] | None:
    """The rows of a table of aligned text columns from its words (``get_text("words")``),
    or None when they do not stand in columns.

    Segments (words without a wide gap) are grouped into visual rows; the columns are the x
    extents of the segments of the rows with the most segments. A segment spanning several
    columns (a merged cell) repeats its text in each; a row with an empty first cell set closer
    to the row above than rows usually are continues that row (a cell spanning lines).
    """
    segments = sorted(_segments(words), key=lambda s: (s[1] + s[3]) / 2)
    rows: list[list[tuple[float, float, float, float, str]]] = []
    for seg in segments:
        middle = (seg[1] + seg[3]) / 2
        if rows and abs(middle - (rows[-1][0][1] + rows[-1][0][3]) / 2) <= 0.4 * (
                seg[3] - seg[1]):
            rows[-1].append(seg)
        else:
            rows.append([seg])
    if len(rows) < 3:
        return None
    for row in rows:
        row.sort(key=lambda s: s[0])
    width = max(len(row) for row in rows)
    full = [row for row in rows if len(row) == width]
    if width < 2 or len(full) < 2:
        return None
    columns = [(min(r[k][0] for r in full), max(r[k][2] for r in full)) for k in range(width)]
    if any(a[1] >= b[0] for a, b in pairwise(columns)):
        return None  # columns that overlap: not a table
    table: list[list[str]] = []
    tops: list[float] = []
    gaps = [b[0][1] - a[0][1] for a, b in pairwise(rows)]
    usual = sorted(gaps)[len(gaps) // 2] if gaps else 0.0
    for row, gap in zip(rows, [usual * 2, *gaps], strict=True):
        cells = [""] * width
        for x0, _y0, x1, _y1, words_text in row:
            hit = [k for k, (c0, c1) in enumerate(columns) if x0 < c1 and x1 > c0]
            if not hit:  # in a gap between columns: the column it starts after
                hit = [max([k for k, (c0, _c1) in enumerate(columns) if c0 <= x0] or [0])]
            for k in hit:
                cells[k] = f"{cells[k]} {words_text}".strip()
        if table and not cells[0] and gap < 0.9 * usual:
            table[-1] = [f"{a} {b}".strip() for a, b in zip(table[-1], cells, strict=True)]
            continue
        table.append(cells)
        tops.append(row[0][1])
    if len(table) < 3:
        return None
    lengths = sorted(len(c) for row in table for c in row if c)
    filled = len(lengths)
    if filled < 0.6 * width * len(table) or lengths[len(lengths) // 2] > 30 or lengths[-1] > 80:
        return None  # prose in columns, or a sparse figure
    return table


def text_tables(
    page: Any,
    text: str,
    pieces: Sequence[tuple[int, int, float, float]],
    budget: TableBudget,
) -> tuple[Block, ...]:
    """Tables of aligned text columns (booktabs rules or none) as Markdown blocks over raw
    spans of ``text``; each is kept only when the raw span of its row blocks holds exactly
    its cells' words (the raw text stays the truth, in whatever order it has them)."""
    if budget.left <= 0:
        return ()
    runs = row_pieces(text, pieces)
    if not runs:
        return ()
    started = time.perf_counter()
    try:
        blocks: list[Block] = []
        width = float(page.rect.width)
        for run in runs:
            first, last = pieces[run[0]], pieces[run[-1]]
            clip = (0.0, first[2] - 1, width, last[3] + 1)
            rows = aligned_rows(page.get_text("words", clip=clip))
            if rows is None:
                continue
            start, end = first[0], last[1]
            cells = sorted(w for row in rows for c in _unique(row) for w in c.split())
            if sorted(text[start:end].split()) != cells:
                continue
            blocks.append((start, end, table_markdown(rows)))
        return tuple(blocks)
    except Exception:  # a search that fails leaves the page's blocks as they are
        return ()
    finally:
        budget.spend(started)


def _unique(row: Sequence[str]) -> list[str]:
    """A row's cells without the repeats of a merged cell (each text once per run)."""
    out: list[str] = []
    for n, cell in enumerate(row):
        if cell and (n == 0 or cell != row[n - 1]):
            out.append(cell)
    return out
