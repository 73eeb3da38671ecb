"""Every real book in the shared samples initialises, and none is there without an expectation.

A book added to ``<samples>/books`` without a row here fails when samples are required
(``READINGROOM_REQUIRE_SAMPLES=1``, as in CI) and skips visibly otherwise: a sample nobody
looked at proves nothing.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from readingroom.book.service import BookService

from ..conftest import samples_dir

# file name → (units the book has, text-layer-less units): what a person counted in each book.
EXPECTED: dict[str, tuple[int, int]] = {
    "alice-epub3-images.epub": (13, 0),
    "epub30-spec.epub": (11, 0),
    "geotopo-textbook-outline.pdf": (117, 0),
    "georgia-cfi.epub": (2, 0),
    "huckfinn-scanned-page.pdf": (1, 1),
    "israelsailing.epub": (12, 0),
    "latex-4-pages-numbered.pdf": (4, 0),
    "linear-algebra.epub": (94, 0),
    "regime-anticancer-arabic.epub": (3, 0),
    "venus-and-adonis-epub2.epub": (8, 0),
}
BOOK_SUFFIXES = (".pdf", ".epub", ".md")
NOT_BOOKS = {"SOURCES.md", "README.md"}


def _books() -> list[Path]:
    folder = samples_dir() / "books"
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.glob("*")
                  if p.suffix.lower() in BOOK_SUFFIXES and p.name not in NOT_BOOKS)


def _missing(message: str) -> None:
    if os.environ.get("READINGROOM_REQUIRE_SAMPLES") == "1":
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> BookService:
    return BookService(tmp_path_factory.mktemp("data"))


@pytest.mark.slow
@pytest.mark.parametrize("path", _books() or [None], ids=lambda p: p.name if p else "no-books")
def test_every_sample_book_initialises_as_recorded(path: Path | None, library: BookService):
    if path is None:
        _missing(f"no sample books at {samples_dir() / 'books'} (set READINGROOM_SAMPLES)")
        return
    if path.name not in EXPECTED:
        _missing(f"{path.name} has no recorded expectation in {__file__}: count its units")
        return
    units, without_text = EXPECTED[path.name]
    book_id = path.stem.lower().replace("_", "-")[:40]
    library.init(path, book_id=book_id, allow_image_only=bool(without_text))
    status = library.status(book_id).data
    assert status is not None
    listed = {b["book_id"]: b for b in library.list().items}[book_id]
    assert listed["units"] == units
    assert listed["records"] > 0
    assert len(status["capabilities"]["no_text_layer_units"]) == without_text


def test_every_expectation_names_a_sample_that_exists():
    present = {p.name for p in _books()}
    if not present:
        _missing(f"no sample books at {samples_dir() / 'books'}")
    assert set(EXPECTED) <= present, f"expected but absent: {sorted(set(EXPECTED) - present)}"
