"""The Markdown view of every real fixture book keeps the invariants of issue 11 §5.

Behaviour, not magic strings: records cover the raw text once, furniture offsets are exact,
the rendered structure is used (little or no fallback), no heading is written twice, CJK text
is never soft-wrapped, image-only pages have placeholders and contents records sit on
contents units only.
"""

from __future__ import annotations

import re
from itertools import pairwise
from pathlib import Path

import pytest

from readingroom.book.records import MAX_RECORD_CHARS, build_book_text
from readingroom.book.text import is_cjk
from readingroom.book.view import NO_TEXT_LAYER

from ..conftest import samples_dir
from .conftest import fixture_books
from .ingested import ingested

# Reads the big real sample books (linear-algebra.epub and the like): left out of the quick tier.
pytestmark = pytest.mark.slow


def _books() -> list[Path]:
    folder = samples_dir() / "books"
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.glob("*") if p.suffix.lower() in (".pdf", ".epub"))


@pytest.fixture(scope="module", params=_books() or [None],
                ids=lambda p: p.name if p else "no-books")
def book(request):
    if request.param is None:
        fixture_books()  # skips (or fails when samples are required)
    doc = ingested(request.param, allow_image_only=True)
    return doc, build_book_text(doc)


def _key(text: str) -> str:
    return re.sub(r"\W+", "", text.lstrip("#").casefold())


def test_records_cover_the_raw_text_once_with_exact_furniture(book):
    doc, bt = book
    units = doc.units
    spans = [((r.unit_start, r.char_start), (r.unit_end, r.char_end)) for r in bt.records]
    assert spans[0][0] == (0, 0)
    last = len(units) - 1
    assert spans[-1][1] == (last, len(units[last].text))
    for (_, end), (start, _) in pairwise(spans):
        assert end <= start
        between = [units[u].text for u in range(end[0] + 1, start[0])]
        assert end == start or (start[1] == 0 and end[1] == len(units[end[0]].text)
                                and not "".join(between).strip())
    for r in bt.records:
        slices = [(u, r.char_start if u == r.unit_start else 0,
                   r.char_end if u == r.unit_end else len(units[u].text))
                  for u in range(r.unit_start, r.unit_end + 1)]
        assert len(r.text) <= MAX_RECORD_CHARS + len(slices)
        expected = [units[u].text[max(s, a):min(e, b)] for u, a, b in slices
                    for s, e, _ in units[u].furniture if s < b and e > a]
        assert [r.text[s:e] for s, e, _ in r.furniture] == expected


def test_the_rendered_structure_is_used(book):
    doc, bt = book
    structured = [u for u in doc.units if u.blocks or u.markdown is not None]
    assert len(bt.markdown_fallback_units) <= len(structured) // 10


def test_no_heading_is_written_twice_in_a_row(book):
    _, bt = book
    lines = bt.markdown.splitlines()
    heads = [(i, line) for i, line in enumerate(lines) if line.startswith("#") and i > 0]
    for k, (i, a) in enumerate(heads):
        for j, b in heads[k + 1:k + 3]:  # the next heading, or the one after a label heading
            between = lines[i + 1:j]
            no_text = all(not x.strip() or x.startswith(("#", "![", "<!--")) for x in between)
            assert not (no_text and _key(a) == _key(b) and _key(a)), (i, a, b)
    for i, line in heads:
        following = next((x for x in lines[i + 1:i + 4] if x.strip()), "")
        assert not _key(line) or _key(following) != _key(line), (i, line, following)


def test_cjk_text_is_never_soft_wrapped(book):
    _, bt = book
    for a, b in pairwise(bt.markdown.splitlines()):
        assert not (a and b and is_cjk(a[-1]) and is_cjk(b[0])), (a[-10:], b[:10])


def test_image_only_pages_have_placeholders_and_contents_records_their_units(book):
    doc, bt = book
    for u in doc.units:
        if u.kind == "pdf_page" and not u.has_text_layer and not u.text.strip():
            assert f"*[Page index {u.index}" in bt.markdown and NO_TEXT_LAYER in bt.markdown
            assert any(r.unit_start == r.unit_end == u.index and r.text == ""
                       for r in bt.records)
    for r in bt.records:
        roles = {doc.units[u].role for u in range(r.unit_start, r.unit_end + 1)
                 if doc.units[u].text.strip()}
        if r.role == "contents":
            assert roles <= {"contents"}
        else:
            assert "contents" not in roles or not r.text.strip()
