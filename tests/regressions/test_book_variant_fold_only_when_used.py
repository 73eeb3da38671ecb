"""Regression (issue 21 §1): a kanji-variant fold is reported only where it was used.

Searching a book's own form (假定) answered ``folds: ["kanji_variant"]`` exactly as searching
the variant (仮定) did, so the answer could not tell which one matched; and a hit in the
chapter printing 仮定 said nothing when 假定 was typed. Now each hit names a fold only when
the typed form differs from the text's, the result's ``folds`` is the union of the hits', and
the query's own folding is ``query_folds``.
"""

from __future__ import annotations

import pytest
from tests.book.make_epub_round2 import make_japanese_book

from readingroom.book.service import BookService


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    folder = tmp_path_factory.mktemp("variant")
    service = BookService(folder / "data")
    service.init(make_japanese_book(folder / "ja.epub"), book_id="ja")
    return service


def _by_text(env):
    return {("假定" if "假定" in h["snippet"] else "仮定"): h["folds"] for h in env.items}


def test_the_books_own_form_reports_no_fold(service):
    env = service.search("ja", "假定")
    assert _by_text(env) == {"假定": [], "仮定": ["kanji_variant"]}
    assert env.data["folds"] == ["kanji_variant"]  # one hit needed it
    assert env.data["query_folds"] == ["kanji_variant"]  # the query itself was folded


def test_the_variant_reports_the_fold_where_it_differs(service):
    env = service.search("ja", "仮定")
    assert _by_text(env) == {"假定": ["kanji_variant"], "仮定": []}
    assert env.data["query_folds"] == []


def test_a_search_that_matches_only_as_typed_reports_nothing(service):
    env = service.search("ja", "假定の話である")
    assert [h["folds"] for h in env.items][:1] == [[]]
    assert env.data["folds"] == []


def test_locate_names_the_fold_per_candidate(service):
    env = service.locate("ja", text="假定の話")  # 假定の話である and 仮定の話もある
    assert env.data["status"] == "ambiguous"
    assert [c["folds"] for c in env.items] == [[], ["kanji_variant"]]
    env = service.locate("ja", text="假定の話である")
    assert env.data["status"] == "verified" and env.data["folds"] == []
    env = service.locate("ja", text="仮定の話である")
    assert env.data["status"] == "verified" and env.data["folds"] == ["kanji_variant"]
