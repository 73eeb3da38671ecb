"""Searching the whole library at once (issue 20 §4), through the Core.

On twelve generated books: one ranked list from several books, each hit naming its book; the
ranking is what one index over every book's records would give (statistics of the library,
not of each book); a one-book selection ranks exactly as that book's own search; filters;
every book not searched is named with the reason; the index follows inits, replacements and
removals.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from filelock import FileLock

from readingroom.book.search import BookIndex, build_index
from readingroom.book.search.library_index import LibraryIndex, library_paths
from readingroom.book.service import BookService

from .books import MARKDOWN_BOOKS, markdown_book

QUERIES = ["harbour light", '"harbour light"', "zephyr4 quill4", "whale", "Chapter 2 Garden",
           "silver bridge morning", "東京の人々", "電燈", "match-box", "alice's cat",
           "lantern island voyage", "tower"]


def test_hits_come_from_several_books_each_naming_its_book(template_library: Path):
    env = BookService(template_library).search_library("silver bridge", wait=None)
    books = {h["book_id"] for h in env.items}
    assert len(books) >= 3
    data = env.data
    assert data["scope"] == "library"
    assert data["books_searched"] == data["books_selected"] == 12
    assert data["books_skipped"] == []
    assert data["records_searched"] > 40
    for hit in env.items:
        n = MARKDOWN_BOOKS.index(hit["book_id"])
        assert hit["book"]["title"] == f"Generated Book {n}"
        assert hit["book"]["authors"] == [f"Author {n}"]
        assert hit["version"] == 1 and hit["record_id"].startswith("r")
        assert "«silver»" in hit["snippet"] or "«bridge»" in hit["snippet"]
    by_book = {h["book_id"]: h for h in env.items}
    assert by_book.get("book-00", {"book": {"year": 1851}})["book"]["year"] == 1851
    scores = [h["score"] for h in env.items]
    assert scores == sorted(scores, reverse=True)


def _records(service: BookService, book_id: str):
    return service._load(book_id).records


@pytest.mark.parametrize("book_id", ["book-01", "book-03", "book-04", "nav"])
def test_a_one_book_selection_ranks_as_the_book_itself(template_library: Path, book_id: str):
    service = BookService(template_library)
    for query in [*QUERIES, "Two", "One"]:
        own = service.search(book_id, query, top_k=10)
        lib = service.search_library(query, book_ids=[book_id], top_k=10, wait=None)
        assert [(h["record_id"], h["score"], h["snippet"], h["matched_terms"])
                for h in lib.items] == [(h["record_id"], h["score"], h["snippet"],
                                         h["matched_terms"]) for h in own.items], query
        assert lib.data["total_matches"] == own.data["total_matches"], query
        assert lib.data["contents_left_out"] == own.data["contents_left_out"], query


def test_the_ranking_is_that_of_one_index_over_every_book(template_library: Path,
                                                          tmp_path: Path):
    """Scores compare across books: they are those of a single index holding every book's
    records (books in id order, each in reading order), not of each book's own index."""
    service = BookService(template_library)
    ids = sorted(service.registry.list_ids())
    union, where = [], []
    for book_id in ids:
        for rec in _records(service, book_id):
            where.append((book_id, rec.record_id))
            union.append(rec.__class__(**{**rec.__dict__, "order": len(union)}))
    build_index(union, tmp_path / "union.sqlite")
    for engine in ("fts5", "python"):
        with BookIndex.open(tmp_path / "union.sqlite", engine=engine) as one:
            for query in QUERIES:
                expected = one.search(query, top_k=10)
                lib = service.search_library(query, top_k=10, wait=None)
                assert [((h["book_id"], h["record_id"]), h["score"]) for h in lib.items] == [
                    (where[h.order], h.score) for h in expected.hits], (engine, query)
                assert lib.data["total_matches"] == expected.total_matches


def test_a_word_common_in_its_book_weighs_what_it_weighs_in_the_library(
        template_library: Path):
    service = BookService(template_library)
    own = service.search("book-04", "zephyr4", top_k=5)
    lib = service.search_library("zephyr4", top_k=5, wait=None)
    assert {h["book_id"] for h in lib.items} == {"book-04"}
    # In most of book-04's records: its own index gives the word no weight (BM25's IDF is
    # floored), so its records tie in reading order. Rare in the library, it weighs there.
    assert [h["score"] for h in own.items] == [0.0] * 5
    assert [h["record_id"] for h in own.items] == sorted(h["record_id"] for h in own.items)
    assert all(h["score"] > 1.0 for h in lib.items)
    assert [h["record_id"] for h in lib.items] != [h["record_id"] for h in own.items]


def test_phrases_cjk_compounds_and_strict(template_library: Path):
    service = BookService(template_library)
    cjk = service.search_library("東京の人々", wait=None)
    assert [(h["book_id"], "«東京の人々»" in h["snippet"]) for h in cjk.items] == [
        ("book-03", True)]
    for query in ("match-box", "matchbox", "match", "box"):
        found = service.search_library(query, wait=None)
        assert [(h["book_id"], "match-box" in h["snippet"].replace("«", "").replace("»", ""))
                for h in found.items] == [("book-03", True)], query
    phrase = service.search_library('"harbour light"', top_k=50, wait=None)
    assert phrase.items and all("«harbour light»" in h["snippet"] for h in phrase.items)
    loose = service.search_library("harbour light", top_k=50, wait=None)
    assert loose.data["total_matches"] > phrase.data["total_matches"]
    strict = service.search_library("whale zephyr4", strict=True, wait=None)
    assert [(h["book_id"], h["matched_terms"]) for h in strict.items] == [
        ("book-04", ["whale", "zephyr4"])]


def test_contents_pages_are_left_out_unless_asked(template_library: Path):
    service = BookService(template_library)
    plain = service.search_library("Two", wait=None)
    assert plain.data["contents_left_out"] >= 1
    asked = service.search_library("Two", include_contents=True, wait=None)
    assert asked.data["contents_left_out"] == 0
    assert asked.data["total_matches"] == plain.data["total_matches"] + 1


def test_pages_without_a_text_layer_are_reported(template_library: Path):
    env = BookService(template_library).search_library("nothing-matches-this", wait=None)
    assert env.items == [] and env.data["units_without_text"] == 1
    codes = {d.code for d in env.diagnostics}
    assert {"ZERO_RESULT", "CAPABILITY_UNAVAILABLE"} <= codes
    assert any("no text layer" in d.message for d in env.diagnostics)


def test_selection_by_ids_collection_and_tag(template_library: Path):
    service = BookService(template_library)
    chosen = service.search_library("harbour", book_ids=["book-05", "book-06", "nope"],
                                    top_k=50, wait=None)
    assert {h["book_id"] for h in chosen.items} <= {"book-05", "book-06"}
    assert chosen.data["books_searched"] == 2 and chosen.data["books_selected"] == 3
    assert [(s["book_id"], s["reason"]) for s in chosen.data["books_skipped"]] == [
        ("nope", "not_registered")]
    assert any(d.code == "BOOK_NOT_FOUND" for d in chosen.diagnostics)
    sea = service.search_library("harbour", collection="SEA", top_k=50, wait=None)
    assert {h["book_id"] for h in sea.items} == {"book-00", "book-01"}
    whaling = service.search_library("harbour", collection="Whaling", top_k=50, wait=None)
    assert {h["book_id"] for h in whaling.items} == {"book-00"}
    novels = service.search_library("harbour", tag="novel", top_k=50, wait=None)
    assert novels.data["books_searched"] == 2
    travel = service.search_library("harbour", tag="travel", collection="Sea", wait=None)
    assert {h["book_id"] for h in travel.items} == {"book-01"}
    assert travel.data["selection"] == {"collection": "Sea", "tag": "travel"}


def test_a_book_being_built_is_skipped_with_the_reason(library: Path, tmp_path: Path):
    service = BookService(library)
    service.registry.new_build_dir("book-02")  # a live build: this process owns it
    service.registry.new_build_dir("newcomer")  # a first version being built
    env = service.search_library("garden", top_k=50, wait=None)
    skipped = {s["book_id"]: s for s in env.data["books_skipped"]}
    assert skipped["book-02"]["reason"] == "building"
    assert skipped["book-02"]["version"] == 1
    assert skipped["newcomer"]["reason"] == "building"
    assert "book-02" not in {h["book_id"] for h in env.items}
    assert env.data["books_searched"] == 11
    warning = next(d for d in env.diagnostics if d.code == "BOOK_BUSY")
    assert "book-02" in warning.message and "proves nothing" in warning.message


def test_a_new_version_not_yet_indexed_is_stale_until_indexed(library: Path, tmp_path: Path,
                                                              monkeypatch):
    monkeypatch.setattr("readingroom.book.service.base.LIBRARY_LISTENER_WAIT_S", 0.0)
    service = BookService(library)
    service.search_library("harbour", wait=None)  # the index exists and is current
    source = tmp_path / "new.md"
    source.write_text("# Fresh\n\nA kraken surfaced by the harbour light.\n", encoding="utf-8")
    _path, lock = library_paths(library)
    with FileLock(str(lock)):  # another writer holds the library index: init cannot update it
        BookService(library).init(source, book_id="book-07", replace=True)
        stale = service.search_library("kraken", wait=0)
        assert [(s["book_id"], s["reason"], s["version"])
                for s in stale.data["books_skipped"]] == [("book-07", "stale", 2)]
        assert stale.items == []
        assert any("proves nothing" in d.message for d in stale.diagnostics)
    fresh = service.search_library("kraken", wait=30)
    assert [(h["book_id"], h["version"]) for h in fresh.items] == [("book-07", 2)]
    assert fresh.data["books_skipped"] == []


def test_the_index_follows_replacements_and_removals(library: Path, tmp_path: Path):
    service = BookService(library)
    assert service.search_library("zephyr7", wait=None).items
    source = tmp_path / "new.md"
    source.write_text("# Fresh\n\nA kraken surfaced by the harbour light.\n", encoding="utf-8")
    service.init(source, book_id="book-07", replace=True)  # the listener indexes it
    index = LibraryIndex(service.registry)
    with sqlite3.connect(index.path) as conn:
        assert index.indexed(conn)["book-07"].version == 2
    assert not service.search_library("zephyr7", wait=0).items
    assert [h["version"] for h in service.search_library("kraken", wait=0).items] == [2]
    service.remove("book-08")
    after = service.search_library("zephyr8", wait=0)
    assert after.items == [] and after.data["books_skipped"] == []
    assert after.data["books_searched"] == 11
    with sqlite3.connect(index.path) as conn:
        assert "book-08" not in index.indexed(conn)


def test_a_damaged_book_is_skipped_not_shown(library: Path):
    service = BookService(library)
    assert "book-02" in {h["book_id"] for h in service.search_library(
        "zephyr2", wait=None).items}
    md = service.registry.get("book-02").path / "book.md"
    md.write_bytes(md.read_bytes()[:10])
    service.library()[1].recheck_s = 0.0  # as when LibrarySearcher.recheck_s has passed
    env = service.search_library("zephyr2", wait=0)
    assert env.items == []
    assert [(s["book_id"], s["reason"]) for s in env.data["books_skipped"]] == [
        ("book-02", "damaged")]
    assert "book.md" in env.data["books_skipped"][0]["message"]
    assert any(d.code == "BOOK_DAMAGED" for d in env.diagnostics)


def test_an_index_of_an_older_format_is_unreadable(library: Path):
    index = LibraryIndex(BookService(library).registry)
    index.drop_file()
    book_index = BookService(library).registry.get("book-05").path / "index.sqlite"
    size = book_index.stat().st_size
    with sqlite3.connect(book_index) as conn:
        conn.execute("UPDATE meta SET value = '1' WHERE key = 'format'")
    assert book_index.stat().st_size == size  # the package's size check still passes
    env = BookService(library).search_library("zephyr5 harbour", top_k=50, wait=None)
    skipped = {s["book_id"]: s for s in env.data["books_skipped"]}
    assert skipped["book-05"]["reason"] == "unreadable"
    assert "older book-agent" in skipped["book-05"]["message"]
    assert "book-05" not in {h["book_id"] for h in env.items}
    assert env.data["books_searched"] == 11


def test_an_unreadable_library_index_is_rebuilt(library: Path):
    service = BookService(library)
    path, _lock = library_paths(library)
    service.search_library("harbour", wait=None)
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    path.write_bytes(b"this is not a database" * 100)
    env = BookService(library).search_library("zephyr3", wait=None)
    assert {h["book_id"] for h in env.items} == {"book-03"}
    assert env.data["books_skipped"] == []


def test_a_one_shot_search_builds_a_missing_index(library: Path):
    LibraryIndex(BookService(library).registry).drop_file()
    env = BookService(library).search_library("zephyr9", wait=None)
    assert {h["book_id"] for h in env.items} == {"book-09"}


def test_merged_segments_rank_as_one_batch(tmp_path: Path):
    """Books indexed one by one (each init a segment, merged as they accumulate, replaced
    ones leaving dead records behind) rank exactly as the same books indexed at once."""
    data = tmp_path / "data"
    service = BookService(data)
    first = tmp_path / "b0.md"
    first.write_text(markdown_book(0), encoding="utf-8")
    service.init(first, book_id="book-00")
    service.search_library("harbour", wait=None)  # the index exists: inits now update it
    for n in range(1, 10):
        path = tmp_path / f"b{n}.md"
        path.write_text(markdown_book(n), encoding="utf-8")
        service.init(path, book_id=f"book-{n:02d}")
    for n in (2, 5):
        path = tmp_path / f"b{n}.md"
        path.write_text(markdown_book(n) + "\n# Added\n\nA coda by the harbour.\n",
                        encoding="utf-8")
        service.init(path, book_id=f"book-{n:02d}", replace=True)
    index = LibraryIndex(service.registry)
    with sqlite3.connect(index.path) as conn:
        levels = [lvl for (lvl,) in conn.execute("SELECT level FROM segments")]
        dead = conn.execute("SELECT count(*) FROM keys WHERE live = 0").fetchone()[0]
    assert max(levels) >= 1, "eight single-book segments should have been merged"
    assert dead >= 1, "a replaced book leaves dead records until its segment is merged"
    incremental = {q: service.search_library(q, top_k=20, wait=0) for q in QUERIES}
    index.drop_file()
    again = BookService(data)
    for query, before in incremental.items():
        after = again.search_library(query, top_k=20, wait=None)
        assert [(h["book_id"], h["record_id"], h["score"]) for h in after.items] == [
            (h["book_id"], h["record_id"], h["score"]) for h in before.items], query


@pytest.mark.parametrize(("arguments", "field"), [
    ({"query": " "}, "query"), ({"query": "x" * 1001}, "query"),
    ({"query": "...!"}, "query"), ({"query": "sea", "top_k": 0}, "top_k"),
    ({"query": "sea", "top_k": 51}, "top_k"), ({"query": "sea", "semantic": "always"},
                                               "semantic"),
])
def test_bad_arguments_are_refused(template_library: Path, arguments: dict, field: str):
    from readingroom.core.errors import CoreError

    with pytest.raises(CoreError) as caught:
        BookService(template_library).search_library(**arguments, wait=None)
    assert caught.value.code.value == "INVALID_ARGUMENT"
    assert caught.value.details.get("field") == field


def test_semantic_on_is_reported_as_off(template_library: Path):
    env = BookService(template_library).search_library("harbour", semantic="on", wait=None)
    assert env.data["modes"] == {"lexical": "ok", "lexical_engine": "library-bm25",
                                 "semantic": "off", "rerank": "off"}
    assert any(d.code == "CAPABILITY_UNAVAILABLE" and "semantic" in d.message
               for d in env.diagnostics)


def test_hits_carry_the_cleaned_query_input(template_library: Path):
    env = BookService(template_library).search_library("harbour", book_ids=["book-00"],
                                                       wait=None)
    assert env.query.input["book_ids"] == ["book-00"]
    assert json.loads(env.model_dump_json())["result"]["returned"] == len(env.items)
