"""PDFs with ruled tables, built for tests (PyMuPDF, Helvetica, A4).

:func:`make_table_pdf` writes pages of body lines; a page may also carry one ruled table (a
grid of drawn lines with each cell's text inside), placed below its lines and followed by
``after`` lines.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

os.environ.setdefault("PYMUPDF_MESSAGE", "fd:2")

import pymupdf  # the message route above must be set before this import

__all__ = ["TablePage", "make_table_pdf"]

_A4 = (595.0, 842.0)
_LEFT = 72.0
_TOP = 100.0
_LEAD = 15.0
_SIZE = 11.0
_ROW = 22.0
_COLUMN = 140.0


@dataclass(frozen=True)
class TablePage:
    """One page: ``before`` lines, an optional ruled ``table`` (rows of cells, the first the
    header), then ``after`` lines. ``ruled=False`` writes the cells without the grid."""

    before: Sequence[str]
    table: Sequence[Sequence[str]] = ()
    after: Sequence[str] = field(default_factory=tuple)
    ruled: bool = True


def make_table_pdf(path: Path, pages: Sequence[TablePage]) -> Path:
    """Write the pages to ``path`` and return it; cells are written row by row."""
    doc = pymupdf.open()
    for spec in pages:
        page = doc.new_page(width=_A4[0], height=_A4[1])
        y = _TOP
        for line in spec.before:
            page.insert_text((_LEFT, y), line, fontsize=_SIZE, fontname="helv")
            y += _LEAD
        if spec.table:
            top = y
            columns = max(len(row) for row in spec.table)
            for r, row in enumerate(spec.table):
                for c, cell in enumerate(row):
                    at = (_LEFT + c * _COLUMN + 6, top + r * _ROW + 15)
                    page.insert_text(at, cell, fontsize=_SIZE, fontname="helv")
            if spec.ruled:
                right = _LEFT + columns * _COLUMN
                bottom = top + len(spec.table) * _ROW
                for r in range(len(spec.table) + 1):
                    page.draw_line((_LEFT, top + r * _ROW), (right, top + r * _ROW))
                for c in range(columns + 1):
                    x = _LEFT + c * _COLUMN
                    page.draw_line((x, top), (x, bottom))
            y = top + len(spec.table) * _ROW + _LEAD + 10
        for line in spec.after:
            page.insert_text((_LEFT, y), line, fontsize=_SIZE, fontname="helv")
            y += _LEAD
    doc.save(path)
    doc.close()
    return path
