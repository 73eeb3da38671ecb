"""The Python BM25 backend: the same hits and scores as FTS5, and the fallback to it."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from readingroom.book.model import Record
from readingroom.book.search import index as index_module
from readingroom.book.search.fts5 import fts5_available
from readingroom.book.search.index import MAX_TOP_K, BookIndex, build_index
from readingroom.core.errors import Code, CoreError

from .corpus import LABELS, RECORDS, ids, rec, signature

needs_fts5 = pytest.mark.skipif(not fts5_available(), reason="this SQLite has no FTS5")


# --- engines ------------------------------------------------------------------------------

ENGINE_QUERIES = [
    ("electric", False, None), ("electric current theorem", False, None),
    ('"electric current"', False, None), ("banana electric", True, None), ("交流", False, None),
    ("有機交流", False, None), ("猫 electric", False, None), ("木", False, None),
    ("電燈 東京", False, None), ("electric", False, {"heading": "kitchen"}),
    ("electric", True, {"pages": "0-7"}), ('"東京、京都"', False, None),
]


@needs_fts5
def test_python_engine_gives_the_same_hits_as_fts5(built: Path, tmp_path: Path):
    py_built = tmp_path / "python.sqlite"
    stats = build_index(RECORDS, py_built, unit_labels=LABELS, engine="python")
    assert stats.engine == "python-bm25"
    with BookIndex.open(built) as fts, BookIndex.open(built, engine="python") as derived, \
            BookIndex.open(py_built) as stored:
        assert (fts.engine, derived.engine, stored.engine) == (
            "fts5", "python-bm25", "python-bm25")
        for query, strict, hints in ENGINE_QUERIES:
            expected = fts.search(query, strict=strict, hints=hints)
            assert expected.modes.lexical_engine == "fts5"
            for other in (derived, stored):
                got = other.search(query, strict=strict, hints=hints)
                assert got.modes.lexical_engine == "python-bm25"
                assert signature(got) == signature(expected), query
                assert got.total_matches == expected.total_matches


def _random_corpus(seed: int, n: int = 80) -> list[Record]:
    rng = random.Random(seed)
    latin = ["alpha", "beta", "gamma", "delta", "omega", "sigma", "tau", "rho"]
    cjk = ["電燈", "交流", "東京", "京都", "ああ", "あ", "猫", "有機", "機械", "大阪"]
    punct = [" ", "。", "、", " ", "\n", ", "]
    records = []
    for i in range(n):
        parts = []
        for _ in range(rng.randint(3, 40)):
            parts.append(rng.choice(latin + cjk + cjk))
            parts.append(rng.choice(punct) if rng.random() < 0.6 else "")
        records.append(rec(i, "".join(parts), (f"H{i % 7}",), i))
    return records


@needs_fts5
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_python_bm25_equals_fts5_bm25_on_a_random_corpus(tmp_path: Path, seed: int):
    records = _random_corpus(seed)
    path = tmp_path / "i.sqlite"
    build_index(records, path)
    queries = ["alpha", "ああ", "ああああ", "あ", "電燈交流", "東京都", "alpha beta 猫",
               '"alpha beta"', '"東京 alpha"', '"ああ、あ"', "京都大阪", "機", "omega 有機機械",
               '"猫 sigma"']
    with BookIndex.open(path) as fts, BookIndex.open(path, engine="python") as py:
        for query in queries:
            for strict in (False, True):
                a = fts.search(query, strict=strict, top_k=MAX_TOP_K)
                b = py.search(query, strict=strict, top_k=MAX_TOP_K)
                assert ids(b) == ids(a), query
                assert b.total_matches == a.total_matches
                assert [h.score for h in b.hits] == pytest.approx(
                    [h.score for h in a.hits], rel=1e-12)
                # The snippet finder agrees with the engine on every hit.
                for hit in a.hits:
                    assert hit.matched_terms, (query, hit)
                    if strict:
                        assert hit.matched_terms == [t.text for t in a.terms]


def test_auto_falls_back_to_python_bm25_without_fts5(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(index_module, "fts5_available", lambda: False)
    path = tmp_path / "i.sqlite"
    assert build_index(RECORDS, path).engine == "python-bm25"
    with BookIndex.open(path) as index:
        result = index.search("電燈")
        assert result.modes.lexical_engine == "python-bm25" and ids(result) == ["r0001"]
    with pytest.raises(CoreError) as err:
        build_index(RECORDS, tmp_path / "j.sqlite", engine="fts5")
    assert err.value.code is Code.CAPABILITY_UNAVAILABLE


@needs_fts5
def test_fts5_index_opened_where_fts5_is_missing_uses_python_bm25(
        built: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(index_module, "fts5_available", lambda: False)
    with BookIndex.open(built) as index:
        assert index.engine == "python-bm25"
        assert ids(index.search("有機交流")) == ["r0004"]
