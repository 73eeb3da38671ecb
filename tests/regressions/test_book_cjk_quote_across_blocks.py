"""Regression (issue 21 §2): a Japanese quote across a paragraph, block or spine boundary.

Whitespace between two CJK characters was dropped for matching, but not after CJK punctuation:
a quote of two paragraphs (…住みにくい。住みにくさが…), a sentence running into a verse block
after 」, or across a spine item after ．was ``not_found`` unless the user typed a space after
the punctuation. CJK and full-width punctuation (judged before NFKC, which turns ．into ``.``)
now count as CJK for that join, in the one fold search and locate share.
"""

from __future__ import annotations

import pytest
from tests.book.make_epub_round2 import make_japanese_book

from readingroom.book.service import BookService
from readingroom.book.text import normalise


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cjkjoin")
    service = BookService(folder / "data")
    service.init(make_japanese_book(folder / "ja.epub"), book_id="ja")
    return service


@pytest.mark.parametrize("quote", [
    "住みにくい。住みにくさが高じると",          # two paragraphs, after 。
    "彼は「そうか」春の野に",                   # into a verse block, after 」
    "一夜寝にける．次の章の始まり",              # across the spine, after ．
    "住みにくい。 住みにくさが",                # typed with the space: still found
])
def test_quote_across_a_boundary_after_cjk_punctuation_verifies(service, quote):
    env = service.locate("ja", text=quote)
    assert env.data["status"] == "verified", (quote, env.data)


def test_search_finds_the_quoted_phrase_across_paragraphs(service):
    env = service.search("ja", '"住みにくい。住みにくさが"')
    assert env.items and "住みにくさ" in env.items[0]["snippet"]


def test_the_join_is_only_between_cjk_like_characters():
    assert normalise("住みにくい。\n住みにくさ") == "住みにくい。住みにくさ"
    assert normalise("終わり．\n次") == "終わり.次"
    assert normalise("「あ」 and more") == "「あ」 and more"  # Latin after 」 keeps its space
    assert normalise("word. (see)") == "word. (see)"  # ASCII punctuation: no join
    assert normalise("ＡＢＣ ＤＥＦ") == "abc def"  # full-width letters are not punctuation
