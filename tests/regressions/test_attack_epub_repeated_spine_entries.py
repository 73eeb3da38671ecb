"""Attack: an EPUB whose spine lists one ~1 MB chapter 3,000 times.

The 380 KB book reached 1.19 GB after 240 s, still growing: the container's 512 MiB limit is
checked on the sizes the ZIP directory declares, and the same entry was inflated, parsed and
kept again for every itemref. Now each chapter file is read once (a repeat is skipped with a
warning: EPUB allows one itemref per manifest item), and every read of the container counts
against the 512 MiB budget, so no way of re-reading an entry gets past it.
"""

from __future__ import annotations

import time
import tracemalloc
import zipfile
from pathlib import Path

import pytest
from tests.book.make_books import make_epub, rewrite_entry

from readingroom.book.ingest import ingest
from readingroom.book.ingest.epub import container as epub_container
from readingroom.core.errors import Code, CoreError

REPEATS = 3_000


def _chapter(size: int) -> str:
    paragraphs: list[str] = []
    length = 0
    n = 0
    while length < size:
        paragraph = f"<p>Paragraph {n} of the chapter that is read {n * 7919 % 10007} times.</p>\n"
        paragraphs.append(paragraph)
        length += len(paragraph)
        n += 1
    return "".join(paragraphs)


def _repeated_spine_epub(path: Path) -> Path:
    make_epub(path, [("One", _chapter(1024 * 1024))], nav=False, ncx=False)
    return rewrite_entry(
        path,
        "OEBPS/content.opf",
        lambda opf: opf.replace('<itemref idref="c1"/>', '<itemref idref="c1"/>' * REPEATS),
    )


@pytest.mark.slow
def test_repeated_spine_entries_are_read_once_in_bounded_memory(tmp_path: Path) -> None:
    path = _repeated_spine_epub(tmp_path / "repeated.epub")
    assert path.stat().st_size < 2 * 1024 * 1024
    calls: list[int] = []
    tracemalloc.start()
    started = time.monotonic()
    try:
        doc = ingest(path, progress=lambda done, _total: calls.append(done))
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    elapsed = time.monotonic() - started
    assert len(doc.units) == 1
    assert doc.units[0].text.startswith("Paragraph 0 of the chapter")
    assert any(f"{REPEATS - 1:,} spine entries repeat" in w for w in doc.warnings), doc.warnings
    assert calls[-1] == REPEATS  # progress still counts every spine entry
    # One chapter's text, Markdown and tree helpers: a few tens of MB; before, ~4 MB per repeat.
    assert peak < 150 * 1024 * 1024, f"peak {peak / 2**20:.0f} MiB"
    assert elapsed < 60, f"{elapsed:.1f} s"


def test_every_read_counts_against_the_expansion_budget(tmp_path: Path, monkeypatch) -> None:
    # One entry that fits the budget once, read twice: the second read is refused.
    path = make_epub(tmp_path / "b.epub", [("One", _chapter(300 * 1024))], nav=False, ncx=False)
    monkeypatch.setattr(epub_container, "MAX_TOTAL_BYTES", 400 * 1024)
    with zipfile.ZipFile(path) as archive:
        box = epub_container.Container(archive, path)
        box.read("OEBPS/chapter01.xhtml")
        with pytest.raises(CoreError) as caught:
            box.read("OEBPS/chapter01.xhtml")
    assert caught.value.code is Code.UNSAFE_SOURCE
    assert caught.value.details["reason"] == "size"
