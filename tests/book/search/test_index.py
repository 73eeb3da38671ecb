"""The search index: CJK-aware query semantics, hints, hostile queries, files, threads."""

from __future__ import annotations

import importlib
import sqlite3
import threading
from pathlib import Path

import pytest

from readingroom.book.search.fts5 import fts5_available
from readingroom.book.search.index import (
    HINT_KEYS,
    MAX_TOP_K,
    BookIndex,
    build_index,
    index_locked,
)
from readingroom.book.search.results import HINT_BOOST, SearchResult
from readingroom.core.errors import Code, CoreError

from .corpus import LABELS, RECORDS, ids, signature

needs_fts5 = pytest.mark.skipif(not fts5_available(), reason="this SQLite has no FTS5")


# --- CJK and normalisation in search ----------------------------------------------------


def test_two_character_word_inside_a_long_run_is_found(ix: BookIndex):
    result = ix.search("電燈")
    assert ids(result) == ["r0001"]
    assert result.terms[0].kind == "cjk_phrase"
    assert "«電燈»" in result.hits[0].snippet


def test_why_not_trigram_it_misses_two_character_words():
    """Research §3: SQLite's trigram tokenizer cannot find 電燈 in 古い電燈の下で."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='trigram')")
    except sqlite3.OperationalError:
        pytest.skip("no FTS5 trigram tokenizer here")
    conn.execute("INSERT INTO t VALUES ('古い電燈の下で')")
    assert conn.execute("SELECT count(*) FROM t WHERE t MATCH '\"電燈\"'").fetchone()[0] == 0
    assert conn.execute("SELECT count(*) FROM t WHERE t MATCH '\"電燈の\"'").fetchone()[0] == 1


def test_japanese_line_break_inside_a_run_is_joined(ix: BookIndex):
    assert ids(ix.search("人々は交流")) == ["r0001"]


def test_full_width_query_and_text(ix: BookIndex):
    assert ids(ix.search("abc")) == ["r0002"]
    assert ids(ix.search("ＡＢＣ")) == ["r0002"]
    assert "«ＡＢＣ»" in ix.search("abc").hits[0].snippet


def test_kangxi_radicals_match_unified_ideographs(ix: BookIndex):
    assert ids(ix.search("一つの木")) == ["r0003"]
    assert ids(ix.search("⼀つ")) == ["r0003"]


def test_ideographic_space_between_cjk_is_dropped_in_text(ix: BookIndex):
    result = ix.search("全角スペース")
    assert ids(result) == ["r0002"] and "«全角スペース»" in result.hits[0].snippet
    assert ids(ix.search('"全角　スペース"')) == ["r0002"]


def test_whitespace_separates_cjk_terms_in_a_query(ix: BookIndex):
    result = ix.search("全角　スペース")
    assert [(t.text, t.kind) for t in result.terms] == [
        ("全角", "cjk_phrase"), ("スペース", "cjk_phrase")]
    assert ids(result) == ["r0002"]
    assert [t.text for t in ix.search("東京 交流").terms] == ["東京", "交流"]
    assert [t.text for t in ix.search('"東京 交流"').terms] == ["東京交流"]


def test_ligature_found_by_plain_spelling(ix: BookIndex):
    result = ix.search("definition")
    assert ids(result) == ["r0000"]
    assert "«deﬁnition»" in result.hits[0].snippet


def test_one_character_cjk_query(ix: BookIndex):
    result = ix.search("猫")
    assert ids(result) == ["r0004"]
    assert [t.kind for t in result.terms] == ["cjk_char"]
    # 木 sits inside the run つの木; only the unigram column can find it.
    assert ids(ix.search("木")) == ["r0003"]


def test_cjk_run_is_a_contiguous_phrase(ix: BookIndex):
    assert ids(ix.search("有機交流")) == ["r0004"]
    assert set(ids(ix.search("交流"))) == {"r0001", "r0004", "r0005"}


def test_bigram_phrase_never_bridges_punctuation(ix: BookIndex):
    assert ix.search("東京都").hits == []
    assert ids(ix.search('"東京、京都"')) == ["r0005"]
    assert ids(ix.search("京都")) == ["r0005"]


# --- phrases, strict, ranking -------------------------------------------------------------


def test_quoted_phrase_needs_adjacent_words_in_order(ix: BookIndex):
    result = ix.search('"electric current"')
    assert [t.kind for t in result.terms] == ["phrase"]
    assert set(ids(result)) == {"r0000", "r0008"}
    assert "r0006" not in ids(result)  # "current electric" is the wrong order
    assert "«electric current»" in result.hits[0].snippet


def test_default_ors_terms_and_ranks_records_with_more_terms_higher(ix: BookIndex):
    result = ix.search("banana electric")
    assert set(ids(result)) == {"r0000", "r0006", "r0008"}
    assert ids(result)[0] == "r0008"
    assert result.hits[0].matched_terms == ["banana", "electric"]
    assert result.total_matches == 3


def test_strict_requires_every_term_and_phrase(ix: BookIndex):
    assert ids(ix.search("banana electric", strict=True)) == ["r0008"]
    assert ix.search("banana electric fence", strict=True).hits == []
    assert ids(ix.search('theorem "electric current"', strict=True)) == ["r0000"]
    assert ix.search("有機交流 猫", strict=True).hits[0].record_id == "r0004"


def test_scores_are_positive_and_descending(ix: BookIndex):
    hits = ix.search("electric current theorem").hits
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True) and all(s > 0 for s in scores)


def test_hit_fields(ix: BookIndex):
    result = ix.search("猫")
    hit = result.hits[0]
    assert hit.heading_path == ["Part II", "Animals"]
    assert (hit.unit_start, hit.unit_end, hit.page_labels) == (4, 5, ["3", "4"])
    assert hit.matched_by == ["lexical"]
    assert result.modes.model_dump() == {"lexical": "ok", "lexical_engine": ix.engine,
                                         "semantic": "off", "rerank": "off"}
    assert SearchResult.model_validate_json(result.model_dump_json()) == result


# --- hints --------------------------------------------------------------------------------


def test_heading_hint_boosts(ix: BookIndex):
    plain = ix.search("electric")
    boosted = ix.search("electric", hints={"heading": "KITCHEN"})
    assert ids(plain) == ["r0006", "r0000", "r0008"]
    assert ids(boosted) == ["r0008", "r0006", "r0000"]
    assert boosted.hits[0].score == pytest.approx(plain.hits[2].score * HINT_BOOST, abs=1e-3)
    assert boosted.total_matches == plain.total_matches
    applied = boosted.hints_applied[0]
    assert (applied.key, applied.value, applied.applied_as, applied.records) == (
        "heading", "KITCHEN", "boost", 1)


def test_heading_hint_narrows_when_strict(ix: BookIndex):
    result = ix.search("electric", strict=True, hints={"heading": "Electricity"})
    assert set(ids(result)) == {"r0000", "r0006"}
    assert result.hints_applied[0].applied_as == "narrow"


def test_chapter_hint_looks_at_the_top_level_heading(ix: BookIndex):
    result = ix.search("electric", strict=True, hints={"chapter": "part iii"})
    assert ids(result) == ["r0008"]
    assert ix.search("電燈", strict=True, hints={"chapter": "電燈"}).hits == []
    assert ids(ix.search("電燈", strict=True, hints={"chapter": "東京"})) == ["r0001"]


def test_page_hints_narrow_to_overlapping_records(ix: BookIndex):
    assert ids(ix.search("electric", hints={"page": "7"})) == ["r0006"]
    assert set(ids(ix.search("electric", hints={"pages": "0-6"}))) == {"r0000", "r0006"}
    assert set(ids(ix.search("交流", hints={"page": "5"}))) == {"r0004", "r0005"}
    result = ix.search("electric", hints={"pages": "100-200"})
    assert result.hits == [] and result.total_matches == 0
    assert result.hints_applied[0].applied_as == "narrow"


def test_label_hint_narrows_to_printed_page(ix: BookIndex):
    assert ids(ix.search("electric", hints={"label": "i"})) == ["r0000"]
    assert ids(ix.search("electric", hints={"label": "8"})) == ["r0008"]
    assert ix.search("electric", hints={"label": "7"}).hits == []
    assert ids(ix.search("電燈", hints={"label": "II"})) == ["r0001"]  # labels fold case


@pytest.mark.parametrize("hints", [
    {"section": "x"}, {"page": "x"}, {"page": "1-3"}, {"pages": "5-2"}, {"pages": "a-b"},
    {"heading": "  "},
])
def test_bad_hints_are_invalid_arguments(ix: BookIndex, hints: dict[str, str]):
    with pytest.raises(CoreError) as err:
        ix.search("electric", hints=hints)
    assert err.value.code is Code.INVALID_ARGUMENT
    assert err.value.details["allowed"] == list(HINT_KEYS)


# --- invalid and hostile queries ----------------------------------------------------------


@pytest.mark.parametrize("query", ["", "   ", "\u3000"])
def test_empty_query_is_invalid(ix: BookIndex, query: str):
    with pytest.raises(CoreError) as err:
        ix.search(query)
    assert err.value.code is Code.INVALID_ARGUMENT


@pytest.mark.parametrize("query", ["*", "^", "(", ".*[(", "?!", "「」", '""', "-", "'"])
def test_query_without_tokens_is_invalid(ix: BookIndex, query: str):
    with pytest.raises(CoreError) as err:
        ix.search(query)
    assert err.value.code is Code.INVALID_ARGUMENT
    assert err.value.details["reason"] == "no_tokens"


@pytest.mark.parametrize("top_k", [0, -1, MAX_TOP_K + 1])
def test_top_k_out_of_range(ix: BookIndex, top_k: int):
    with pytest.raises(CoreError) as err:
        ix.search("electric", top_k=top_k)
    assert err.value.code is Code.INVALID_ARGUMENT


def test_too_long_query_is_invalid(ix: BookIndex):
    with pytest.raises(CoreError):
        ix.search("a " * 600)


@pytest.mark.parametrize("query,terms", [
    ("a OR b", ["a", "or", "b"]),
    ("electric NOT current", ["electric", "not", "current"]),
    ("NEAR(electric current)", ["near", "electric", "current"]),
    ('"unbalanced', ["unbalanced"]),
    ('theorem "electric', ["theorem", "electric"]),
    ("body:electric", ["body", "electric"]),
    ("chars : 猫", ["chars", "猫"]),
    ("{body chars}: electric", ["body", "chars", "electric"]),
    ("electric*", ["electric"]),
    ("^electric", ["electric"]),
    ("-electric", ["electric"]),
    ("AND", ["and"]),
    ("electric + current", ["electric", "current"]),
    ("'; DROP TABLE records; --", ["drop", "table", "records"]),
    ('electric"; DELETE FROM fts; --', ["electric", "delete", "from", "fts"]),
    ('electric "; DELETE FROM fts; --"', ["electric", "delete from fts"]),
    ("a.*[(b", ["a", "b"]),
    ("(electric) [current] {theorem}", ["electric", "current", "theorem"]),
    ("\\electric\\", ["electric"]),
    ("rank MATCH bm25(fts)", ["rank", "match", "bm25", "fts"]),
])
def test_hostile_queries_are_only_their_tokens(ix: BookIndex, query: str, terms: list[str]):
    result = ix.search(query)
    assert [t.text for t in result.terms] == terms
    for hit in result.hits:
        assert hit.matched_terms, hit
    strict = ix.search(query, strict=True)
    for hit in strict.hits:
        assert hit.matched_terms == terms
    # Term order only changes the phrase boost, never what matches.
    assert set(ids(ix.search("electric current"))) == set(ids(ix.search("current electric")))


def test_hostile_query_results_are_what_the_tokens_say(ix: BookIndex):
    assert ids(ix.search("electric OR banana", strict=True)) == []  # "or" is a word here
    assert ids(ix.search("NEAR(banana bread)", strict=True)) == []
    assert ids(ix.search('"banana bread"')) == ["r0008"]
    assert ids(ix.search("(banana) [bread]", strict=True)) == ["r0008"]
    assert ix.record_count == len(RECORDS)  # the DROP/DELETE queries changed nothing


def test_open_missing_or_foreign_file(tmp_path: Path):
    with pytest.raises(CoreError) as err:
        BookIndex.open(tmp_path / "absent.sqlite")
    assert err.value.code is Code.NOT_FOUND
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"not a database at all" * 100)
    with pytest.raises(CoreError) as err:
        BookIndex.open(junk)
    assert err.value.code is Code.INTERNAL_ERROR


def test_an_index_another_program_holds_locked_is_busy_not_damaged(tmp_path: Path, monkeypatch):
    path = tmp_path / "held.sqlite"
    build_index(RECORDS, path)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    connect = sqlite3.connect
    # SQLite's busy wait (5 s by default) would only delay the same answer.
    monkeypatch.setattr(sqlite3, "connect", lambda *a, **k: connect(*a, **{**k, "timeout": 0}))
    with pytest.raises(CoreError) as err:
        BookIndex.open(path)
    assert err.value.code is Code.BOOK_BUSY and err.value.details == {"path": str(path)}
    holder.execute("ROLLBACK")
    with BookIndex.open(path) as index:
        assert index.record_count == len(RECORDS)
    holder.close()


def test_index_locked_tells_a_held_lock_from_a_damaged_file(tmp_path: Path):
    path = tmp_path / "i.sqlite"
    build_index(RECORDS[:1], path)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    with pytest.raises(sqlite3.OperationalError) as held:
        sqlite3.connect(path, timeout=0).execute("SELECT count(*) FROM meta").fetchone()
    holder.execute("ROLLBACK")
    holder.close()
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"not a database at all" * 100)
    with pytest.raises(sqlite3.DatabaseError) as damaged:
        sqlite3.connect(junk).execute("SELECT count(*) FROM meta").fetchone()
    assert index_locked(held.value) and not index_locked(damaged.value)


def test_an_index_of_an_older_format_says_so_and_how_to_rebuild(tmp_path: Path):
    path = tmp_path / "old.sqlite"
    build_index(RECORDS, path)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE meta SET value = '1' WHERE key = 'format'")
    conn.close()
    with pytest.raises(CoreError) as err:
        BookIndex.open(path)
    assert err.value.code is Code.INTERNAL_ERROR
    assert "older book-agent" in err.value.message
    assert err.value.details["index_format"] == "1"
    assert "--replace" in (err.value.remediation or "")


def test_build_replaces_an_existing_file_and_reports_stats(tmp_path: Path):
    path = tmp_path / "i.sqlite"
    path.write_bytes(b"old")
    stats = build_index(RECORDS[:2], path, unit_labels=LABELS)
    assert stats.records == 2 and stats.bytes == path.stat().st_size
    assert stats.cjk_chars == len("古い電燈の下で東京の人々は交流について語った")
    with BookIndex.open(path) as index:
        assert index.record_count == 2


def test_empty_book_and_closed_index(tmp_path: Path):
    path = tmp_path / "empty.sqlite"
    assert build_index([], path).records == 0
    index = BookIndex.open(path)
    result = index.search("anything")
    assert (result.total_matches, result.hits) == (0, [])
    index.close()
    with pytest.raises(CoreError):
        index.search("anything")


def test_index_file_is_opened_read_only(built: Path):
    with BookIndex.open(built) as index:
        index.search("electric")
        with index._connection() as conn, pytest.raises(sqlite3.OperationalError):
            conn.execute("DELETE FROM records")


# --- threads ------------------------------------------------------------------------------


def test_search_from_four_threads_at_once(ix: BookIndex):
    queries = ["electric", "交流", "猫", '"electric current"', "theorem banana", "東京"]
    expected = {q: signature(ix.search(q)) for q in queries}
    errors: list[BaseException] = []
    barrier = threading.Barrier(4)

    def worker(offset: int) -> None:
        try:
            barrier.wait(timeout=10)
            for i in range(60):
                q = queries[(i + offset) % len(queries)]
                assert signature(ix.search(q)) == expected[q]
        except BaseException as exc:  # reported to the main thread
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads)
    assert errors == []


@pytest.mark.parametrize("module", ["", ".bm25", ".fts5", ".index", ".ranker", ".results",
                                    ".snippet", ".tokenize"])
def test_exported_names_exist(module: str):
    imported = importlib.import_module("readingroom.book.search" + module)
    for name in imported.__all__:
        assert hasattr(imported, name), name
