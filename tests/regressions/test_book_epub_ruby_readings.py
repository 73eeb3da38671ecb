"""Regression (issue 21 §2): ruby (furigana) readings.

Keeping ``<rt>`` out of the raw text is right, but the readings were lost entirely (a gikun
reading such as 寛容《くつろげ》 is then misread). Now book.md shows them in Aozora Bunko's
notation (``寛容《くつろげ》て``), the index has them (a search for the reading finds the
word), and locate accepts a quote typed with ``《…》`` or ``（かな）`` readings after kanji,
naming the ``ruby`` fold. The raw text, the truth, still has no readings.
"""

from __future__ import annotations

import json

import pytest
from tests.book.make_epub_round2 import make_ruby_book

from readingroom.book.service import BookService


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ruby")
    service = BookService(folder / "data")
    service.init(make_ruby_book(folder / "r.epub"), book_id="r")
    return service


def test_book_md_shows_the_readings(service):
    md = service.registry.get("r").file("book.md").read_text(encoding="utf-8")
    assert "人の世は寛容《くつろげ》て住みよくない" in md
    assert "漢字《かんじ》の読み" in md


def test_the_raw_text_keeps_only_the_bases(service):
    units = service.registry.get("r").file("units.jsonl").read_text(encoding="utf-8")
    text = "".join(json.loads(line)["text"] for line in units.splitlines())
    assert "寛容て住みよくない" in text and "くつろげ" not in text and "（" not in text


@pytest.mark.parametrize("reading", ["くつろげ", "かんじ"])
def test_a_search_for_the_reading_finds_the_word(service, reading):
    assert service.search("r", reading).items


@pytest.mark.parametrize("quote", ["人の世は寛容《くつろげ》て住みよく",
                                   "寛容（くつろげ）て住みよく", "漢《かん》字《じ》の読み",
                                   "寛容(くつろげ)て"])
def test_locate_accepts_typed_readings_and_names_the_fold(service, quote):
    env = service.locate("r", text=quote)
    assert env.data["status"] == "verified", (quote, env.data)
    assert "ruby" in env.data["folds"]


def test_a_quote_without_readings_needs_no_ruby_fold(service):
    env = service.locate("r", text="人の世は寛容て住みよく")
    assert env.data["status"] == "verified" and env.data["folds"] == []
