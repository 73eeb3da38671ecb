"""``add --calibre``: calibre's own test library, with format rows and files added to a copy."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from readingroom.book.library.batch import run_add
from readingroom.book.library.calibre import read_calibre
from readingroom.book.library.sources import SourceSpec
from readingroom.book.service import BookService
from readingroom.core.errors import CoreError

from ...conftest import samples_dir
from ..conftest import fixture_books


@pytest.fixture(scope="module")
def calibre(tmp_path_factory):
    """A copy of calibre's test library whose books got files: book 1 ("Title Two") an EPUB
    and a PDF, book 2 ("Title One") a PDF, book 3 ("Unknown") only a MOBI row."""
    books = fixture_books()
    root = tmp_path_factory.mktemp("calibre") / "Library"
    root.mkdir()
    shutil.copyfile(samples_dir() / "libraries" / "calibre" / "metadata.db",
                    root / "metadata.db")
    db = sqlite3.connect(root / "metadata.db")
    rows = {book_id: path for book_id, path in db.execute("SELECT id, path FROM books")}
    plan = {1: [("EPUB", books / "venus-and-adonis-epub2.epub"),
                ("PDF", books / "latex-4-pages-numbered.pdf")],
            2: [("PDF", books / "latex-4-pages-numbered.pdf")],
            3: [("MOBI", None)]}
    for book_id, formats in plan.items():
        folder = root.joinpath(*rows[book_id].split("/"))
        folder.mkdir(parents=True, exist_ok=True)
        name = rows[book_id].split("/")[-1].rsplit(" (", 1)[0] + " - calibre"
        for fmt, src in formats:
            if src is not None:
                shutil.copyfile(src, folder / f"{name}.{fmt.lower()}")
            db.execute("INSERT INTO data (book, format, uncompressed_size, name) "
                       "VALUES (?, ?, ?, ?)", (book_id, fmt, src.stat().st_size if src else 0,
                                               name))
    db.execute("INSERT INTO identifiers (book, type, val) VALUES (1, 'isbn', '9780140707212')")
    db.execute("INSERT INTO identifiers (book, type, val) VALUES (1, 'doi', '10.5555/calibre')")
    db.commit()
    db.close()
    return root


def test_reads_authors_series_identifiers_from_calibre(calibre):
    lib = read_calibre(calibre)
    assert lib.library_uuid == "95869367-2abd-4e0d-a201-3b640b601dde"
    by = {c.metadata["title"]: c for c in lib.candidates}
    assert set(by) == {"Title One", "Title Two"}
    two = by["Title Two"]
    assert two.path.suffix == ".epub"  # EPUB preferred over the PDF
    assert two.metadata["authors"] == ["Author Two", "Author One"]  # link order
    assert two.metadata["author_sort"] == ["Two, Author", "One, Author"]
    assert two.metadata["series"] == "A Series One" and two.metadata["series_index"] == 2.0
    assert two.metadata["identifiers"] == {"test": "two", "isbn": "9780140707212",
                                           "doi": "10.5555/calibre"}
    assert two.metadata["languages"] == ["deu"] and two.metadata["comments"] == "Comments Two"
    assert two.metadata["tags"] and two.metadata["publisher"] in ("Publisher One",
                                                                  "Publisher Two")
    ref = two.reference
    assert ref["author"] == [{"family": "Two", "given": "Author"},
                             {"family": "One", "given": "Author"}]
    assert ref["collection-title"] == "A Series One" and ref["collection-number"] == "2"
    assert ref["ISBN"] == "9780140707212" and ref["DOI"] == "10.5555/calibre"
    assert ref["issued"] == {"date-parts": [[2011, 8, 5]]}
    assert [s.reason for s in lib.skipped] == ["no EPUB or PDF format (has MOBI)"]
    assert read_calibre(calibre, formats=("pdf",)).candidates[1].path.suffix == ".pdf"


def test_add_calibre_registers_with_metadata(calibre, tmp_path):
    service = BookService(tmp_path / "data")
    env = run_add(service, [SourceSpec("calibre", str(calibre))], jobs=1)
    assert env.data["counts"]["added"] == 2
    ids = {i["title"]: i["book_id"] for i in env.items}
    assert ids == {"Title One": "title-one", "Title Two": "title-two"}
    status = service.status("title-two").data
    assert status["authors"] == ["Author Two", "Author One"]
    assert status["library"]["metadata"]["series"] == "A Series One"
    assert status["reference"]["ISBN"] == "9780140707212"
    assert status["citation"].startswith("Two, A.; One, A. (2011). Title Two.")
    again = run_add(service, [SourceSpec("calibre", str(calibre))], jobs=1)
    assert again.data["counts"]["unchanged"] == 2


def test_calibre_refuses_unknown_formats_and_missing_library(calibre, tmp_path):
    with pytest.raises(CoreError, match="--formats"):
        read_calibre(calibre, formats=("mobi",))
    with pytest.raises(CoreError, match="No calibre library"):
        read_calibre(tmp_path)
    assert isinstance(calibre, Path)
