"""Generated books for the Markdown-view tests (issue 11 §5): a PDF with an image-only page."""

from __future__ import annotations

from pathlib import Path

import pymupdf

from .make_books import make_image_only_pdf, make_pdf

__all__ = ["make_mixed_scan_pdf"]


def make_mixed_scan_pdf(path: Path, pages: list[str], scanned: int,
                        outline: list[tuple[int, str, int]] | None = None) -> Path:
    """Write text ``pages`` with one image-only page (no text layer) inserted at ``scanned``.

    ``outline`` entries are ``(level, title, page)`` with 1-based pages of the *finished* file.
    """
    text = make_pdf(path.with_name(path.stem + "-text.pdf"), pages)
    scan = make_image_only_pdf(path.with_name(path.stem + "-scan.pdf"))
    doc = pymupdf.open(str(text))
    with pymupdf.open(str(scan)) as image:
        doc.insert_pdf(image, start_at=scanned)
    if outline:
        doc.set_toc([list(entry) for entry in outline])
    doc.save(str(path))
    doc.close()
    text.unlink()
    scan.unlink()
    return path
