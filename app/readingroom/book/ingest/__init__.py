"""Turn a user's book file (PDF, EPUB 2/3, Markdown) into a :class:`SourceDocument`.

The format is told by content, not by name: ``%PDF-`` within the first KiB is a PDF; a ZIP
whose ``mimetype`` entry says ``application/epub+zip``, or that has ``META-INF/container.xml``,
is an EPUB; a ``.md`` or ``.markdown`` file that is neither is Markdown. Everything else (a
``.docx``, an image, a ``.txt``) is refused with UNSUPPORTED_FORMAT before any parser runs.

The readers import their libraries lazily, so importing this package stays cheap.
"""

from __future__ import annotations

import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ...core.errors import Code, CoreError
from ..model import SourceDocument

if TYPE_CHECKING:
    from ..ocr import OcrPlan

__all__ = ["BookFormat", "detect_format", "ingest"]

BookFormat = Literal["pdf", "epub", "markdown"]

_PDF_MAGIC = b"%PDF-"
# Readers accept a PDF header anywhere in the first KiB (some producers prepend junk).
_PDF_HEADER_WINDOW = 1024
_ZIP_MAGIC = b"PK\x03\x04"
# An OCF container starts with a stored "mimetype" entry: its name sits at offset 30.
_EPUB_SIGNATURE = b"mimetypeapplication/epub+zip"
_MARKDOWN_SUFFIXES = frozenset({".md", ".markdown"})


def detect_format(path: str | Path) -> BookFormat:
    """Tell a book file's format from its content.

    Args:
        path: the file.

    Returns:
        ``"pdf"``, ``"epub"`` or ``"markdown"``.

    Raises:
        CoreError: NOT_FOUND when the file does not exist or cannot be read;
            UNSUPPORTED_FORMAT when it is none of the three.
    """
    path = Path(path)
    try:
        with path.open("rb") as handle:
            head = handle.read(_PDF_HEADER_WINDOW)
    except IsADirectoryError:
        raise _unsupported(path, "a folder") from None
    except OSError as exc:
        raise CoreError(
            Code.NOT_FOUND,
            f"The book file cannot be read: {path.name}.",
            details={"path": str(path), "reason": type(exc).__name__},
            remediation="Check the path and that the file is readable.",
        ) from None
    if _PDF_MAGIC in head:
        return "pdf"
    if head.startswith(_ZIP_MAGIC):
        if head[30 : 30 + len(_EPUB_SIGNATURE)] == _EPUB_SIGNATURE or _zip_is_epub(path):
            return "epub"
        raise _unsupported(path, "a ZIP archive that is not an EPUB (e.g. a .docx)")
    if path.suffix.lower() in _MARKDOWN_SUFFIXES:
        return "markdown"
    return _refuse_by_name(path)


def _zip_is_epub(path: Path) -> bool:
    try:
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
            if "META-INF/container.xml" in names:
                return True
            if "mimetype" in names:
                info = archive.getinfo("mimetype")
                if info.file_size <= 64:
                    return archive.read(info).strip() == b"application/epub+zip"
    except (zipfile.BadZipFile, OSError, RuntimeError, ValueError):
        # A damaged archive named .epub is still meant as one: the reader says how it broke.
        return path.suffix.lower() == ".epub"
    return False


def _refuse_by_name(path: Path) -> BookFormat:
    if path.suffix.lower() == ".epub":
        raise CoreError(
            Code.CORRUPT_SOURCE,
            f"The file is named .epub but is not a ZIP archive: {path.name}.",
            details={"path": str(path)},
            remediation="Re-download or re-export the EPUB.",
        )
    if path.suffix.lower() == ".pdf":
        raise CoreError(
            Code.CORRUPT_SOURCE,
            f"The file is named .pdf but has no PDF header: {path.name}.",
            details={"path": str(path)},
            remediation="Re-download or re-export the PDF.",
        )
    raise _unsupported(path, f"a {path.suffix or 'suffix-less'} file")


def _unsupported(path: Path, what: str) -> CoreError:
    return CoreError(
        Code.UNSUPPORTED_FORMAT,
        f"Not a book format book-agent reads ({what}): {path.name}.",
        details={"path": str(path)},
        remediation="Convert it to PDF, EPUB or Markdown (.md) first, e.g. with Calibre or pandoc.",
    )


def ingest(
    path: str | Path,
    *,
    progress: Callable[[int, int], None] | None = None,
    allow_image_only: bool = False,
    ocr: OcrPlan | None = None,
) -> SourceDocument:
    """Read a book file into raw-text units and a contents.

    Args:
        path: a PDF, EPUB or Markdown file.
        progress: called as ``progress(done, total)`` after each page, chapter or section.
        allow_image_only: PDF only: register a book with no text layer for rendering only.
        ocr: PDF only: read pages without a text layer (or all) by OCR (:mod:`..ocr`).

    Raises:
        CoreError: UNSUPPORTED_FORMAT, ENCRYPTED_SOURCE, CORRUPT_SOURCE, EMPTY_SOURCE,
            UNSAFE_SOURCE or NOT_FOUND, each with a one-line message and a remediation.
    """
    path = Path(path)
    kind = detect_format(path)
    if kind == "pdf":
        from .pdf import read_pdf

        return read_pdf(path, progress=progress, allow_image_only=allow_image_only, ocr=ocr)
    if kind == "epub":
        from .epub import read_epub

        return read_epub(path, progress=progress)
    from .markdown import read_markdown

    return read_markdown(path, progress=progress)
