"""Search tokens: words, overlapping CJK bigrams, folding, run breaks."""

from __future__ import annotations

import pytest

from readingroom.book.search.fts5 import fts5_available
from readingroom.book.search.tokenize import RUN_BREAK, tokenize

needs_fts5 = pytest.mark.skipif(not fts5_available(), reason="this SQLite has no FTS5")


# --- tokenisation ------------------------------------------------------------------------


def test_tokenize_words_and_overlapping_bigrams():
    assert tokenize("Hello, World 42") == ["hello", "world", "42"]
    assert tokenize("有機交流") == ["有機", "機交", "交流"]
    assert tokenize("猫") == ["猫"]
    assert tokenize("猫 and 犬。") == ["猫", "and", "犬"]
    assert tokenize("東京tower") == ["東京", "tower"]


def test_tokenize_folds_width_radicals_ligatures_and_ideographic_space():
    assert tokenize("ＡＢＣ１２") == ["abc12"]
    assert tokenize("⼀⽊") == tokenize("一木") == ["一木"]
    assert tokenize("deﬁnition") == ["definition"]
    assert tokenize("全角\u3000スペース") == tokenize("全角スペース")
    assert tokenize("word\u3000other") == ["word", "other"]


def test_tokenize_never_yields_the_run_break():
    assert RUN_BREAK not in tokenize("東京。京都")
    assert tokenize("東京。京都") == ["東京", "京都"]
