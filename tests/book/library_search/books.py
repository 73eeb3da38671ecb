"""A dozen small generated books for the library search tests (hand-made, deterministic).

Ten Markdown books with front matter, sections and text drawn from a shared vocabulary plus
words of their own (so a word can be common in one book and rare in the library), one with
Japanese text and hyphenated compounds; an EPUB whose nav document is in the spine (a
contents record); a PDF whose only page has no text layer. Registered through
``BookService.init``, the way a user registers them.

``collections``, ``tags`` and ``year`` are written into some manifests by hand: they stand
for the library metadata another part of issue 20 adds, read through
``search.reference.book_reference``.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from readingroom.book.service import BookService

from ..make_books import make_image_only_pdf
from ..make_epub_classes import make_nav_in_spine_book

__all__ = ["LIBRARY_METADATA", "MARKDOWN_BOOKS", "make_library", "markdown_book"]

_SHARED = ["harbour", "light", "ship", "sea", "wind", "river", "stone", "garden", "letter",
           "window", "morning", "evening", "silver", "copper", "market", "bridge", "tower",
           "winter", "summer", "voyage", "island", "lantern"]
MARKDOWN_BOOKS = [f"book-{n:02d}" for n in range(10)]
LIBRARY_METADATA = {
    "book-00": {"year": 1851, "collections": ["Sea/Whaling"], "tags": ["novel"]},
    "book-01": {"year": 1900, "collections": ["Sea"], "tags": ["novel", "travel"]},
    "book-02": {"collections": ["Gardens"], "tags": ["essay"]},
}


def markdown_book(n: int) -> str:
    """The text of generated book ``n``: front matter, four to six sections."""
    rng = random.Random(n)
    own = [f"{w}{n}" for w in ("zephyr", "quill", "marrow", "tallow")]
    lines = ["---", f"title: Generated Book {n}", f"author: Author {n}", "---", ""]
    for s in range(rng.randint(4, 6)):
        heading = f"Chapter {s + 1} {rng.choice(_SHARED).title()}"
        lines += [f"# {heading}", ""]
        for _p in range(3):
            words = [rng.choice(_SHARED if rng.random() < 0.8 else own)
                     for _ in range(rng.randint(25, 45))]
            lines += [" ".join(words).capitalize() + ".", ""]
    if n == 3:
        lines += ["# 東京", "", "古い電燈の下で、東京の人々は交流について語った。", "",
                  "# Match", "", "A match-box and alice's cat by the harbour light.", ""]
    if n == 4:
        lines += ["# Whaling", "", "The whale (zephyr4) and the whaling ship in the harbour.",
                  ""]
    return "\n".join(lines)


def make_library(root: Path) -> Path:
    """A data folder with the twelve books registered; returns it."""
    data = root / "data"
    service = BookService(data)
    for n, book_id in enumerate(MARKDOWN_BOOKS):
        path = root / f"{book_id}.md"
        path.write_text(markdown_book(n), encoding="utf-8")
        service.init(path, book_id=book_id)
    service.init(make_nav_in_spine_book(root / "nav.epub"), book_id="nav")
    service.init(make_image_only_pdf(root / "scan.pdf"), book_id="scan", allow_image_only=True)
    for book_id, fields in LIBRARY_METADATA.items():
        manifest = service.registry.get(book_id).path / "manifest.json"
        data_ = json.loads(manifest.read_text(encoding="utf-8"))
        data_.update(fields)
        manifest.write_text(json.dumps(data_, ensure_ascii=False, indent=2) + "\n",
                            encoding="utf-8")
    return data
