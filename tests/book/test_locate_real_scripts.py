"""On real books: a quote typed as a reader types it verifies where it was taken from.

Passages with typographic punctuation (’ “ ” — – … NBSP) are typed with the keyboard's plain
forms (' " -- - ... space); passages of the Arabic book that carry harakat are typed without
them (marks and tatweel left out, hamza-seated alef as bare alef). Each must verify at the
place it was taken from, and locate must say which fold made the match.
"""

from __future__ import annotations

import re
import unicodedata

import pytest

from readingroom.book.ingest.epub import read_epub
from readingroom.book.ingest.pdf import read_pdf
from readingroom.book.locate import SourceText, check_locator

from .conftest import fixture_books

ARABIC_MARKS = re.compile("[\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06ed\u0640]")


def plain_typed(text: str) -> str:
    """How a reader types Arabic: no harakat, no tatweel, bare alef."""
    text = unicodedata.normalize("NFC", text)
    return ARABIC_MARKS.sub("", text).translate(str.maketrans("أإآ", "ااا"))


def test_arabic_typed_without_diacritics_verifies_where_it_was_taken():
    doc = read_epub(fixture_books() / "regime-anticancer-arabic.epub")
    source = SourceText(doc.units, book_id="ar", version=1, source_sha256="0" * 64)
    checked = 0
    for unit in doc.units:
        for m in re.finditer(r"\S+(?:[ ]\S+){5}", unit.text):
            passage = m.group()
            if not ARABIC_MARKS.search(passage) or checked >= 25:
                continue
            typed = plain_typed(passage)
            _, spans = source.find(typed)
            assert ((unit.index, m.start()), (unit.index, m.end())) in spans, typed
            assert "diacritics" in source.match_folds(typed, spans)
            span = spans[0]
            assert check_locator(source.locator(*span), source) == span
            checked += 1
    assert checked >= 10


TYPOGRAPHIC = re.compile("[\u2018\u2019\u201c\u201d\u2014\u2013\u2026\u00a0]")
KEYBOARD = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"',
                          "\u2014": " -- ", "\u2013": "-", "\u2026": "...", "\u00a0": " "})


@pytest.mark.slow
@pytest.mark.parametrize("name", ["alice-epub3-images.epub", "epub30-spec.epub",
                                  "latex-4-pages-numbered.pdf"])
def test_plain_punctuation_verifies_against_typographic(name):
    path = fixture_books() / name
    doc = read_pdf(path) if name.endswith(".pdf") else read_epub(path)
    source = SourceText(doc.units, book_id="b", version=1, source_sha256="0" * 64)
    checked = 0
    for unit in doc.units:
        for m in re.finditer(r"\S+(?:[ ]\S+){5}", unit.text):
            if not TYPOGRAPHIC.search(m.group()) or checked >= 40:
                continue
            typed = m.group().translate(KEYBOARD)
            _, spans = source.find(typed)
            assert ((unit.index, m.start()), (unit.index, m.end())) in spans, typed
            assert set(source.match_folds(typed, spans)) & {"punctuation", "space"}
            checked += 1
    assert checked >= 3
