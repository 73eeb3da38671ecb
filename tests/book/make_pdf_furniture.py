"""PDFs with page furniture, contents pages, numbered headings and verse, built for tests.

Every generator writes to ``path`` and returns it (PyMuPDF, Helvetica, A4). Pages are given as
lists of body lines; each line is placed as it is (no wrapping), so a test knows where every
line lands.

Generators:

* :func:`make_furniture_pdf` — body pages under running heads and folios (head or foot), with
  optional front pages without furniture, an outline, page labels and metadata.
* :func:`make_verse_pdf` — verse lines with line numbers in the margin every few lines.
* :func:`make_titled_pdf` — a first page with a large-type title and no metadata title.
* :func:`make_styled_pdf` — lines of plain, bold and italic segments (emphasis, hyphenation).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

os.environ.setdefault("PYMUPDF_MESSAGE", "fd:2")

import pymupdf  # the message route above must be set before this import

__all__ = [
    "folio_text",
    "make_furniture_pdf",
    "make_styled_pdf",
    "make_titled_pdf",
    "make_verse_pdf",
]

_A4 = (595.0, 842.0)
_LEFT = 72.0
_TOP = 100.0
_LEAD = 15.0
_SIZE = 11.0

FolioStyle = Literal["plain", "dashes", "bar", "roman"]


def _roman(number: int) -> str:
    out = []
    for value, letters in ((1000, "m"), (900, "cm"), (500, "d"), (400, "cd"), (100, "c"),
                           (90, "xc"), (50, "l"), (40, "xl"), (10, "x"), (9, "ix"), (5, "v"),
                           (4, "iv"), (1, "i")):
        while number >= value:
            out.append(letters)
            number -= value
    return "".join(out)


def folio_text(number: int, style: FolioStyle, title: str = "") -> str:
    """The printed folio ``number`` in ``style`` (``bar``: ``"12 | Title"``)."""
    if style == "dashes":
        return f"- {number} -"
    if style == "bar":
        return f"{number} | {title}".rstrip(" |")
    if style == "roman":
        return _roman(number)
    return str(number)


def _line(page: Any, x: float, y: float, text: str, size: float = _SIZE) -> None:
    page.insert_text((x, y), text, fontsize=size, fontname="helv")


def make_furniture_pdf(
    path: Path,
    pages: Sequence[Sequence[str]],
    *,
    heads: Sequence[str] | None = ("A Book of Tests", "Chapter Title"),
    folio: Literal["head", "foot", "none"] = "foot",
    folio_style: FolioStyle = "plain",
    first_folio: int = 1,
    plain_pages: int = 0,
    bare: Sequence[int] = (),
    outline: Sequence[tuple[int, str, int]] | None = None,
    labels: Sequence[Mapping[str, Any]] | None = None,
    metadata: Mapping[str, str] | None = None,
    heading_size: float | None = None,
) -> Path:
    """Write body pages under running heads and folios.

    Args:
        pages: each page's body lines, placed from the top margin down.
        heads: running heads for even and odd pages (1-based page numbers, as printed: the
            even head is the book's title, the odd one the chapter's), set in the top band.
            None: no running heads.
        folio: where the printed page number sits: centred at the foot, at the outer corner
            of the head line, or nowhere.
        folio_style: how the number is printed (see :func:`folio_text`).
        first_folio: the printed number of the first page after ``plain_pages``.
        plain_pages: leading pages (title, front matter) printed without heads or folios.
        bare: further pages (0-based) printed without heads or folios (chapter openings);
            they still count in the numbering.
        outline: ``(level, title, page)`` entries, page 1-based.
        labels: PDF page-label rules (``Document.set_page_labels``).
        metadata: PDF metadata; none by default (no title).
        heading_size: when given, the first body line of every page is set in this size.
    """
    doc = pymupdf.open()
    width, height = _A4
    for index, lines in enumerate(pages):
        page = doc.new_page(width=width, height=height)
        y = _TOP
        for i, text in enumerate(lines):
            size = heading_size if heading_size and i == 0 else _SIZE
            _line(page, _LEFT, y, text, size)
            y += _LEAD if size == _SIZE else size * 1.6
        if index < plain_pages or index in bare:
            continue
        number = first_folio + index - plain_pages
        head = ""
        if heads:
            head = heads[0] if number % 2 == 0 else heads[1]
        if heads and folio != "head":
            _line(page, _LEFT if number % 2 == 0 else width - 200, 50, head, 9)
        if folio == "foot":
            text = folio_text(number, folio_style, head)
            _line(page, width / 2 - 10, height - 60, text, 9)
        elif folio == "head":
            text = folio_text(number, folio_style, head)
            if heads and folio_style != "bar":
                text = f"{text}    {head}" if number % 2 == 0 else f"{head}    {text}"
            _line(page, _LEFT if number % 2 == 0 else width - 250, 50, text, 9)
    if outline:
        doc.set_toc([list(item) for item in outline])
    if labels:
        doc.set_page_labels([dict(rule) for rule in labels])
    doc.set_metadata(dict(metadata or {}))
    doc.save(str(path))
    doc.close()
    return path


def make_verse_pdf(
    path: Path,
    pages: Sequence[Sequence[str]],
    *,
    every: int = 5,
    side: Literal["left", "right"] = "right",
    folios: bool = False,
) -> Path:
    """Write verse lines, numbered every ``every`` lines in the margin (numbering runs on).

    Args:
        pages: each page's verse lines.
        every: a number beside every n-th line (5 or 10 in most editions).
        side: the margin that holds the numbers.
        folios: also print a folio at the foot of each page.
    """
    doc = pymupdf.open()
    width, height = _A4
    count = 0
    for index, lines in enumerate(pages):
        page = doc.new_page(width=width, height=height)
        for i, text in enumerate(lines):
            y = _TOP + i * _LEAD
            _line(page, 110.0, y, text)
            count += 1
            if count % every == 0:
                _line(page, 470.0 if side == "right" else 60.0, y, str(count), 8)
        if folios:
            _line(page, width / 2 - 10, height - 60, str(index + 1), 9)
    doc.save(str(path))
    doc.close()
    return path


def make_titled_pdf(
    path: Path,
    title: Sequence[str],
    body: Sequence[Sequence[str]],
    *,
    title_size: float = 22.0,
    outline: Sequence[tuple[int, str, int]] | None = None,
    blank_first: bool = False,
) -> Path:
    """Write a PDF whose first text page opens with a large-type title and has no metadata.

    Args:
        title: the title's lines (set in ``title_size``, centred-ish at the top).
        body: body lines of each page (the first page's go under the title).
        outline: ``(level, title, page)`` entries.
        blank_first: put an empty page before the title page.
    """
    doc = pymupdf.open()
    width, height = _A4
    if blank_first:
        doc.new_page(width=width, height=height)
    for index, lines in enumerate(body):
        page = doc.new_page(width=width, height=height)
        y = _TOP
        if index == 0:
            for text in title:
                _line(page, 120.0, y, text, title_size)
                y += title_size * 1.4
            y += _LEAD
        for text in lines:
            _line(page, _LEFT, y, text)
            y += _LEAD
    if outline:
        doc.set_toc([list(item) for item in outline])
    doc.set_metadata({})
    doc.save(str(path))
    doc.close()
    return path


Segment = tuple[str, Literal["plain", "bold", "italic", "mono", "symbol"]]
# "symbol": PyMuPDF's built-in Droid Sans Fallback, for characters Latin-1 lacks (•).
_FONTS = {"plain": "helv", "bold": "hebo", "italic": "heit", "mono": "cour", "symbol": "japan"}


def make_styled_pdf(
    path: Path,
    pages: Sequence[Sequence[Sequence[Segment] | str]],
    *,
    outline: Sequence[tuple[int, str, int]] | None = None,
    gap_after: Sequence[int] = (),
) -> Path:
    """Write lines of plain, bold, italic (Helvetica), monospace (Courier) and symbol segments.

    Args:
        pages: each page's lines; a line is a string (plain) or ``(text, style)`` segments
            set one after another on the same baseline.
        outline: ``(level, title, page)`` entries.
        gap_after: line numbers (0-based, per page) followed by a blank line's worth of
            space (a paragraph gap, so MuPDF starts a new block).
    """
    doc = pymupdf.open()
    width, height = _A4
    for lines in pages:
        page = doc.new_page(width=width, height=height)
        y = _TOP
        for number, line in enumerate(lines):
            segments = [(line, "plain")] if isinstance(line, str) else line
            x = _LEFT
            for text, style in segments:
                font = _FONTS[style]
                page.insert_text((x, y), text, fontsize=_SIZE, fontname=font)
                x += pymupdf.get_text_length(text, fontname=font, fontsize=_SIZE)
            y += _LEAD * (2 if number in gap_after else 1)
    if outline:
        doc.set_toc([list(item) for item in outline])
    doc.save(str(path))
    doc.close()
    return path
