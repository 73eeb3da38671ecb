"""Snippets: controls stripped, whitespace collapsed, cut around the first match."""

from __future__ import annotations

from pathlib import Path

import pytest

from readingroom.book.search.fts5 import fts5_available
from readingroom.book.search.index import BookIndex, build_index

from .corpus import rec

needs_fts5 = pytest.mark.skipif(not fts5_available(), reason="this SQLite has no FTS5")


# --- snippets -----------------------------------------------------------------------------


def test_snippet_strips_controls_and_collapses_whitespace(ix: BookIndex):
    snippet = ix.search("everything").hits[0].snippet
    assert snippet == "Hidden bidi text about the theorem of «everything»."


def test_snippet_is_cut_around_the_first_match(tmp_path: Path):
    text = " ".join(f"word{i}" for i in range(200)) + " needle " + " ".join(
        f"tail{i}" for i in range(200))
    path = tmp_path / "i.sqlite"
    build_index([rec(0, text, ("H",), 0)], path)
    with BookIndex.open(path) as index:
        snippet = index.search("needle").hits[0].snippet
    assert snippet.startswith("…") and snippet.endswith("…")
    assert "«needle»" in snippet and 150 <= len(snippet) <= 260


def test_snippet_joins_japanese_lines(ix: BookIndex):
    hit = next(h for h in ix.search("交流").hits if h.record_id == "r0001")
    snippet = hit.snippet
    assert "\n" not in snippet and "人々は«交流»" in snippet
