"""On real books: a quote typed as the reader sees it verifies past the book's furniture.

For every folio at a page break (the LaTeX paper) and every note marker (the EPUB with note
references), the words either side, with the furniture left out, are typed as a quote; it
must verify, span the furniture's unit(s) and name what it stepped over. The furniture comes
from the ingesters; a book whose ingest marks none is skipped, saying so.
"""

from __future__ import annotations

import re

import pytest

from readingroom.book.ingest.epub import read_epub
from readingroom.book.ingest.pdf import read_pdf
from readingroom.book.locate import SourceText, check_locator

from .conftest import fixture_books

WORDS = 4


def clean(text: str, furniture) -> tuple[str, list[int]]:
    """``text`` without its furniture, and for each clean position its raw offset."""
    keep = [True] * len(text)
    for s, e, _ in furniture:
        keep[s:e] = [False] * (e - s)
    pos = [i for i, k in enumerate(keep) if k]
    return "".join(text[i] for i in pos), pos


def window(text: str, cut: int) -> str:
    """``WORDS`` whitespace-separated words either side of ``cut`` in ``text``."""
    starts = [m.start() for m in re.finditer(r"\S+", text[:cut])]
    ends = [m.end() + cut for m in re.finditer(r"\S+", text[cut:])]
    if len(starts) < WORDS or len(ends) < WORDS:
        return ""
    return text[starts[-WORDS]:ends[WORDS - 1]]


def source_of(doc) -> SourceText:
    return SourceText(doc.units, book_id="real", version=1, source_sha256="0" * 64)


def test_a_quote_across_every_folio_of_the_latex_paper_verifies():
    doc = read_pdf(fixture_books() / "latex-4-pages-numbered.pdf")
    if not any(kind == "folio" for u in doc.units for *_, kind in u.furniture):
        pytest.skip("the PDF ingest marks no folios on this book yet")
    source = source_of(doc)
    checked = 0
    for page, nxt in zip(doc.units, doc.units[1:], strict=False):
        if not any(kind == "folio" for *_, kind in page.furniture):
            continue
        a, _ = clean(page.text, page.furniture)
        b, _ = clean(nxt.text, nxt.furniture)
        quote = window(a.rstrip() + "\n" + b.lstrip(), len(a.rstrip()))
        _, spans = source.find(quote)
        across = [s for s in spans if (s[0][0], s[1][0]) == (page.index, nxt.index)]
        assert len(across) == 1, quote
        loc = source.locator(*across[0])
        assert check_locator(loc, source) == across[0]
        assert "folio" in [s["kind"] for s in loc.stepped_over]
        assert loc.page_label and loc.page_end_label and loc.page_label != loc.page_end_label
        checked += 1
    assert checked == len(doc.units) - 1


def test_a_quote_past_every_note_marker_of_the_epub_verifies():
    doc = read_epub(fixture_books() / "georgia-cfi.epub")
    marked = [(u, s, e) for u in doc.units for s, e, kind in u.furniture if kind == "note_ref"]
    if not marked:
        pytest.skip("the EPUB ingest marks no note references on this book yet")
    source = source_of(doc)
    for unit, s, e in marked:
        text, pos = clean(unit.text, unit.furniture)
        cut = next((i for i, raw in enumerate(pos) if raw >= e), len(text))
        quote = window(text, cut)
        if not quote:
            continue
        _, spans = source.find(quote)
        hits = [sp for sp in spans if sp[0][0] == unit.index and sp[0][1] < s and sp[1][1] >= e]
        assert len(hits) == 1, quote
        loc = source.locator(*hits[0])
        assert check_locator(loc, source) == hits[0]
        assert {"kind": "note_ref", "text": unit.text[s:e], "unit_index": unit.index} in \
            loc.stepped_over
        before = [label for off, label in unit.page_marks if off <= loc.char_start]
        assert loc.page_label == (before[-1] if before else None)
