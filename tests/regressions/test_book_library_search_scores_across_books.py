"""Regression (issue 20 §4): a library search's scores compare across books.

Each book's own index weighs a word by how rare it is *in that book*: "whales" in a book about
whales scores almost nothing there, while the same word in one record of another book scores
high, so per-book scores put side by side rank by accident. The library search ranks with the
statistics of every book searched: its list is exactly the ranking one index over all the
books' records gives (books in id order), for the FTS5 and the pure-Python engine alike.
Before, there was no library search (the call without ``book_id`` was refused).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from readingroom.book.search import BookIndex, build_index
from readingroom.book.service import BookService


def _book(path: Path, title: str, sections: list[tuple[str, str]]) -> Path:
    path.write_text(f"---\ntitle: {title}\n---\n\n" + "".join(
        f"# {head}\n\n{text}\n\n" for head, text in sections), encoding="utf-8")
    return path


@pytest.mark.parametrize("engine", ["fts5", "python"])
def test_library_scores_are_those_of_one_index_over_every_book(tmp_path: Path, engine: str):
    service = BookService(tmp_path / "data")
    service.init(_book(tmp_path / "a.md", "Whales", [
        (f"Part {n}", "Whales and more whales swim past the ship; whales everywhere.")
        for n in range(6)]), book_id="a-whales")
    service.init(_book(tmp_path / "b.md", "Harbours", [
        ("Harbour", "One old whale was seen once near the harbour light."),
        ("Light", "The harbour light guides the ships home."),
        ("Ships", "Ships sail on, and whales are rare here."),
        ("Night", "The night is long in the harbour.")]), book_id="b-harbours")
    where, union = [], []
    for book_id in ("a-whales", "b-harbours"):
        for rec in service._load(book_id).records:
            where.append((book_id, rec.record_id))
            union.append(rec.__class__(**{**rec.__dict__, "order": len(union)}))
    build_index(union, tmp_path / "union.sqlite")
    with BookIndex.open(tmp_path / "union.sqlite", engine=engine) as one:
        for query in ("whales", "harbour light", "whales ships", "ships"):
            expected = [(where[h.order], h.score) for h in one.search(query).hits]
            found = service.search_library(query, wait=None)
            assert [((h["book_id"], h["record_id"]), h["score"]) for h in found.items] == \
                expected, query
    own = service.search("a-whales", "whales")
    mixed = service.search_library("whales", wait=None)
    assert max(h["score"] for h in own.items) < 0.01  # in every record of its own book
    assert {h["book_id"] for h in mixed.items} == {"a-whales", "b-harbours"}
