"""Attack: an EPUB whose ZIP holds two entries with the same name.

Python's zipfile keeps the last one; another reader (or a validator that checked the book) may
take the first, so the same file shows different text to different programs. The reader used
the last copy without a word. An archive with a repeated entry name is ambiguous and is now
refused as UNSAFE_SOURCE before anything is read.
"""

from __future__ import annotations

import warnings
import zipfile
from pathlib import Path

import pytest
from tests.book.make_books import make_epub

from readingroom.book.ingest import ingest
from readingroom.core.errors import Code, CoreError


def _duplicate_entry_epub(path: Path) -> Path:
    make_epub(path, [("A", "<p>the checked text</p>")])
    with zipfile.ZipFile(path) as zf:
        original = zf.read("OEBPS/chapter01.xhtml").decode()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns "Duplicate name"
        with zipfile.ZipFile(path, "a") as zf:
            zf.writestr(
                "OEBPS/chapter01.xhtml", original.replace("the checked text", "smuggled text")
            )
    return path


def test_duplicate_zip_entry_names_are_refused(tmp_path: Path) -> None:
    path = _duplicate_entry_epub(tmp_path / "dup.epub")
    with zipfile.ZipFile(path) as zf:
        assert [i.filename for i in zf.infolist()].count("OEBPS/chapter01.xhtml") == 2
    with pytest.raises(CoreError) as caught:
        ingest(path)
    error = caught.value
    assert error.code is Code.UNSAFE_SOURCE
    assert error.details["reason"] == "duplicate"
    assert error.details["entry"] == "OEBPS/chapter01.xhtml"
    assert "\n" not in error.message and error.remediation
