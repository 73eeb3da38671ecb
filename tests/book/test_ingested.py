"""The run-wide copy of a read book (tests/book/ingested.py)."""

from __future__ import annotations

from readingroom.book.ingest import ingest

from ..conftest import RUN_DIR_ENV
from .ingested import ingested
from .make_books import make_pdf


def test_a_book_is_read_once_per_run_and_every_caller_gets_its_own(tmp_path, monkeypatch):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    monkeypatch.setenv(RUN_DIR_ENV, str(run_dir))
    src = make_pdf(tmp_path / "b.pdf", ["Alpha beta gamma.", "Delta epsilon."])
    first = ingested(src)
    kept = list(run_dir.iterdir())
    assert len(kept) == 1 and kept[0].name.endswith(".pickle")
    first.metadata["changed"] = "by one test"  # its one mutable part
    second = ingested(src)
    assert second is not first and second == ingest(src) and "changed" not in second.metadata
    assert list(run_dir.iterdir()) == kept, "the second call read the kept copy"
    assert ingested(src, allow_image_only=True) == second
    assert len(list(run_dir.iterdir())) == 2, "other options are another reading"


def test_without_a_run_folder_it_reads_the_book(tmp_path, monkeypatch):
    monkeypatch.delenv(RUN_DIR_ENV, raising=False)
    src = make_pdf(tmp_path / "b.pdf", ["Only page."])
    assert ingested(src) == ingest(src)
    assert list(tmp_path.iterdir()) == [src]
