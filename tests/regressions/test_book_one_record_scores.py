"""Regression (issue 21 §2, small ones): scores of a one-record book do not read "no match".

In a book of one or two records BM25 cannot tell records apart and every score rounds to 0:
the command line printed ``0.000`` beside every hit, which reads as "no match". Hits now carry
their ``rank``, and the command line prints the rank (and the score only when it says
something).
"""

from __future__ import annotations

import pytest
from tests.book.make_epub_classes import make_book

from readingroom.book.commands.cli import render_text
from readingroom.book.service import BookService


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    folder = tmp_path_factory.mktemp("one")
    service = BookService(folder / "data")
    book = make_book(folder / "one.epub",
                     [("one", "<h1>Only</h1><p>The lighthouse keeper trimmed the wick.</p>")])
    service.init(book, book_id="one")
    return service


def test_hits_carry_their_rank(service):
    env = service.search("one", "lighthouse")
    assert [h["rank"] for h in env.items] == list(range(1, len(env.items) + 1))
    assert env.items and round(env.items[0]["score"], 3) == 0.0  # the class: BM25 says ~0


def test_the_command_line_shows_the_rank_not_a_zero_score(service):
    text = render_text(service.search("one", "lighthouse"))
    hit_lines = [line for line in text.splitlines() if "r000" in line]
    assert hit_lines and hit_lines[0].lstrip().startswith("1. r000")
    assert "0.000" not in text
