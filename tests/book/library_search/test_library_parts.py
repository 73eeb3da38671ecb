"""The library index's parts: the book reference, the merge plan, dead records out of a
merged row, and the registry scanner's cache."""

from __future__ import annotations

import os
from array import array
from pathlib import Path

import pytest

from readingroom.book.package import Registry
from readingroom.book.search.library_index import (
    LOCAL_BITS,
    MERGE_FACTOR,
    BookScanner,
    _joined,
    _le,
    _merge_plan,
)
from readingroom.book.search.reference import book_reference, matches_label


@pytest.mark.parametrize(("manifest", "year"), [
    ({"title": "T", "year": 1851}, 1851),
    ({"title": "T", "year": "1851-10-18"}, 1851),
    ({"title": "T", "issued": {"date-parts": [[2019, 3]]}}, 2019),
    ({"title": "T", "issued": "2007"}, 2007),
    ({"title": "T", "metadata": {"date": "1593"}}, 1593),
    ({"title": "T", "metadata": {"date": "n.d."}}, None),
    ({"title": "T", "year": True}, None),
    ({"title": "T"}, None),
])
def test_the_year(manifest: dict, year: int | None):
    assert book_reference(manifest)["year"] == year


def test_the_reference_reads_lists_loosely():
    ref = book_reference({"title": "T", "authors": ["A", "", 3, "A", "B"],
                          "collections": ["History/Rome", {"name": "Ｓｅａ"}],
                          "library": {"tags": ["to read", "novel"]}, "tags": "not a list"})
    assert ref == {"title": "T", "authors": ["A", "B"], "year": None,
                   "collections": ["History/Rome", "Ｓｅａ"], "tags": ["to read", "novel"]}
    assert matches_label(ref, "collections", "rome")
    assert matches_label(ref, "collections", "history/rome")
    assert matches_label(ref, "collections", "sea")  # NFKC, case-folded
    assert matches_label(ref, "tags", "TO  READ")
    assert not matches_label(ref, "tags", "read")
    assert not matches_label(ref, "collections", "history/r")


def test_the_merge_plan():
    level0 = [(n, 0, 300, 0) for n in range(1, MERGE_FACTOR)]
    assert _merge_plan(level0) is None
    full = [*level0, (MERGE_FACTOR, 0, 300, 0)]
    assert _merge_plan(full) == ([s[0] for s in full], 1)
    older = [(100, 1, 2400, 0), *full]
    assert _merge_plan(older) == ([s[0] for s in full], 1)
    assert _merge_plan([(5, 1, 2400, 2400), *level0]) == ([5], 1)  # wholly dead: dropped
    assert _merge_plan([(5, 2, 1000, 600), (6, 0, 10, 0)]) == ([5], 2)  # half dead: rewritten
    assert _merge_plan([(5, 2, 1000, 400)]) is None


def _row(pairs: list[tuple[int, int, list[int]]]) -> tuple:
    """One postings row of ``(key, place, positions)`` records."""
    docs = array("q", [(k << LOCAL_BITS) | n for k, n, _p in pairs])
    tfs = array("H", [len(p) for _k, _n, p in pairs])
    pos = array("I", [x for _k, _n, p in pairs for x in p])
    return (0, "tok", _le(docs), _le(tfs), _le(pos))


def test_merging_drops_the_records_of_dead_keys():
    first = _row([(1, 0, [3]), (1, 5, [1, 9]), (2, 0, [4, 5, 6]), (3, 1, [0])])
    second = _row([(4, 0, [7]), (5, 2, [2, 8])])
    docs, tfs, pos = _joined([first, second], [2, 5])
    assert array("q", docs).tolist() == [1 << LOCAL_BITS, (1 << LOCAL_BITS) | 5,
                                         (3 << LOCAL_BITS) | 1, 4 << LOCAL_BITS]
    assert array("H", tfs).tolist() == [1, 2, 1, 1]
    assert array("I", pos).tolist() == [3, 1, 9, 0, 7]
    assert _joined([first, second], []) == tuple(
        a + b for a, b in zip(first[2:], second[2:], strict=True))


def test_the_scanner_rereads_a_folder_that_changed(tmp_path: Path):
    registry = Registry(tmp_path / "data")
    book = registry.books_dir / "one"
    for v in ("v1", "v2"):
        (book / v).mkdir(parents=True)

    def publish(version: int, stamp: float) -> None:
        (book / "CURRENT").write_text(f"{version}\n")
        os.utime(book, (stamp, stamp))  # the folder's time, as a coarse file system keeps it

    stamp = book.stat().st_mtime
    now = [stamp + 10]
    scanner = BookScanner(registry, clock=lambda: now[0])
    publish(1, stamp)
    assert scanner.scan()["one"].version == 1
    publish(2, stamp)
    assert scanner.scan()["one"].version == 1  # unchanged time, looked at long after: cached
    publish(2, stamp + 1)
    assert scanner.scan()["one"].version == 2  # the folder's time moved: read again
    # Looked at within RECHECK_S of its last change, a folder is not trusted from the cache:
    # a second change in the same tick of a coarse clock would not move its time.
    now[0] = stamp + 1.5
    assert scanner.scan()["one"].version == 2
    publish(1, stamp + 1)
    assert scanner.scan()["one"].version == 1
    registry.new_build_dir("one")
    assert scanner.scan()["one"].building == 1
