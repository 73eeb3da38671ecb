"""Pictures from the source: a PDF page as PNG, an image an EPUB chapter references.

Output is bounded: a rendered page's long edge is at most :data:`MAX_EDGE_PX` pixels and its
PNG at most :data:`MAX_PNG_BYTES`; the DPI is lowered automatically for huge pages. An EPUB
image href may be written relative to the chapter, from the container's root (as book.md prints
it) or relative to the package document; it must name an image the book declares (checked
against the manifest at init), so nothing outside the package's own copy of the source is read.
"""

from __future__ import annotations

import math
import os
import posixpath
import zipfile
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

from ..core.errors import Code, CoreError

__all__ = [
    "DEFAULT_DPI",
    "IMAGE_HREF_FORMS",
    "MAX_DPI",
    "MAX_EDGE_PX",
    "MAX_PNG_BYTES",
    "MIN_DPI",
    "EpubImage",
    "RenderedPage",
    "epub_image",
    "render_pdf_page",
    "resolve_epub_image",
]

MAX_EDGE_PX = 2000
MAX_PNG_BYTES = 1_500_000
DEFAULT_DPI = 150
MIN_DPI = 24
MAX_DPI = 600
MAX_IMAGE_BYTES = 20 * 1024 * 1024
MAX_COORDINATE = 1_000_000.0
"""Clip coordinates beyond this (PDF points, ≈ 350 m) are refused: pages are far smaller."""

_IMAGE_TYPES = {
    ".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
    ".svg": "image/svg+xml", ".webp": "image/webp",
}


@dataclass(frozen=True)
class RenderedPage:
    """A rendered page: PNG bytes and what was actually done."""

    png: bytes
    page_index: int
    page_label: str | None
    dpi: float
    width: int
    height: int
    clip: tuple[float, float, float, float] | None
    dpi_lowered: bool


def _pymupdf():
    os.environ.setdefault("PYMUPDF_MESSAGE", "fd:2")
    os.environ.setdefault("PYMUPDF_LOG", "fd:2")
    import pymupdf

    return pymupdf


def render_pdf_page(
    source: Path,
    page_index: int,
    *,
    dpi: float = DEFAULT_DPI,
    clip: tuple[float, float, float, float] | None = None,
) -> RenderedPage:
    """Render one page (zero-based) of a PDF to PNG within the size caps.

    Raises:
        CoreError: NOT_FOUND (no such page), INVALID_ARGUMENT (bad dpi or clip).
    """
    pymupdf = _pymupdf()
    if clip is not None:
        clip = _check_clip(clip)
    if not (MIN_DPI <= dpi <= MAX_DPI):
        raise CoreError(Code.INVALID_ARGUMENT, f"dpi must be between {MIN_DPI} and {MAX_DPI}.",
                        details={"dpi": dpi}, remediation="Omit dpi for the default (150).")
    with pymupdf.open(source) as doc:
        if not (0 <= page_index < doc.page_count):
            raise CoreError(
                Code.NOT_FOUND,
                f"Page index {page_index} does not exist (the book has {doc.page_count} pages, "
                "indexed from 0).",
                details={"page_count": doc.page_count},
                remediation="Use a zero-based page index from a locator or the search hits.",
            )
        page = doc[page_index]
        area = page.rect
        rect = None
        if clip is not None:
            rect = pymupdf.Rect(*clip) & area
            if rect.is_empty or rect.width < 1 or rect.height < 1:
                raise CoreError(Code.INVALID_ARGUMENT, "The clip rectangle lies outside the "
                                "page or is empty.", details={"page_rect": list(area)},
                                remediation="Give x0,y0,x1,y1 in PDF points inside the page.")
            area = rect
        wanted = dpi
        long_edge_pt = max(area.width, area.height)
        dpi = min(dpi, MAX_EDGE_PX * 72.0 / long_edge_pt)
        while True:
            pix = page.get_pixmap(dpi=max(int(dpi), 1), clip=rect, alpha=False)
            png = pix.tobytes("png")
            if len(png) <= MAX_PNG_BYTES or dpi <= MIN_DPI:
                break
            dpi = max(MIN_DPI, dpi * 0.75)
        return RenderedPage(
            png=png, page_index=page_index, page_label=page.get_label() or None,
            dpi=float(int(dpi)), width=pix.width, height=pix.height,
            clip=tuple(rect) if rect is not None else None, dpi_lowered=int(dpi) < int(wanted),
        )


def _check_clip(clip: tuple[float, ...]) -> tuple[float, float, float, float]:
    """Four finite, bounded numbers; INVALID_ARGUMENT otherwise (never an overflow)."""
    values = tuple(clip)
    if len(values) != 4 or not all(isinstance(v, int | float) and not isinstance(v, bool)
                                   for v in values):
        raise CoreError(Code.INVALID_ARGUMENT, "The clip must be four numbers x0,y0,x1,y1.",
                        remediation="e.g. 0,0,300,200 (PDF points)")
    if not all(math.isfinite(v) and abs(v) <= MAX_COORDINATE for v in values):
        raise CoreError(Code.INVALID_ARGUMENT, "The clip coordinates must be finite numbers "
                        f"within ±{MAX_COORDINATE:,.0f} PDF points.",
                        details={"max_coordinate": MAX_COORDINATE},
                        remediation="Give x0,y0,x1,y1 in PDF points inside the page.")
    x0, y0, x1, y1 = (float(v) for v in values)
    return x0, y0, x1, y1


@dataclass(frozen=True)
class EpubImage:
    """Bytes of one image from an EPUB, with its container path and media type."""

    data: bytes
    path: str
    media_type: str
    form: str = "chapter-relative"
    """Which of :data:`IMAGE_HREF_FORMS` the href was written in."""


IMAGE_HREF_FORMS = ("chapter-relative", "container path", "package-relative")
"""The ways an image href may be written, tried in this order: relative to the chapter (as the
chapter's XHTML writes it), a path from the container's root (as book.md prints it), relative to
the package document's folder (as the OPF manifest writes it)."""

_EXAMPLES = 5


def resolve_epub_image(image_href: str, declared: Collection[str], *,
                       chapter_href: str | None = None, package_dir: str = "") -> tuple[str, str]:
    """``(container path, form)`` of the declared image that ``image_href`` names.

    The href may be written in any of :data:`IMAGE_HREF_FORMS`; each form is resolved
    (percent-decoded, normalised) and the first that names one of ``declared`` wins. Forms that
    would leave the container are not tried.

    Raises:
        CoreError: PATH_NOT_ALLOWED (absolute, a URL, every form outside the container, not an
            image), NOT_FOUND (no form names a declared image; the error lists what was looked
            up and a few declared images).
    """
    parts = urlsplit(image_href)
    if parts.scheme or parts.netloc or image_href.startswith(("/", "\\")):
        raise _not_allowed(image_href, "it is absolute or a URL")
    raw = unquote(parts.path)
    if posixpath.splitext(raw)[1].lower() not in _IMAGE_TYPES:
        raise _not_allowed(image_href, "it is not an image")
    bases = {"chapter-relative": posixpath.dirname(chapter_href) if chapter_href else None,
             "container path": "", "package-relative": package_dir}
    looked_up: dict[str, str] = {}
    for form in IMAGE_HREF_FORMS:
        base = bases[form]
        if base is None:
            continue
        joined = posixpath.normpath(posixpath.join(base, raw))
        if joined in (".", "..") or joined.startswith(("../", "/")):
            continue
        looked_up.setdefault(form, joined)
    if not looked_up:
        raise _not_allowed(image_href, "it points outside the EPUB container")
    for form, path in looked_up.items():
        if path in declared:
            return path, form
    known = sorted(declared)
    forms_of: dict[str, list[str]] = {}
    for form, path in looked_up.items():
        forms_of.setdefault(path, []).append(form)
    tried = "; ".join(f"{path!r} (as {' and '.join(forms)})" for path, forms in forms_of.items())
    if known:
        more = f" and {len(known) - _EXAMPLES} more" if len(known) > _EXAMPLES else ""
        what = (f"the book's {len(known)} images (those its chapters reference that its "
                "manifest declares) include "
                + ", ".join(repr(p) for p in known[:_EXAMPLES]) + more)
    else:
        what = "the book has no image that its chapters reference and its manifest declares"
    if chapter_href is None:
        tried += " (no chapter locator was given, so not relative to a chapter)"
    raise CoreError(
        Code.NOT_FOUND,
        f"No image of this EPUB matches {image_href!r}: looked up {tried}; {what}.",
        details={"href": image_href, "looked_up": looked_up,
                 "accepted_forms": list(IMAGE_HREF_FORMS), "chapter": chapter_href,
                 "package_dir": package_dir, "declared_images": len(known),
                 "declared_examples": known[:_EXAMPLES]},
        remediation="Pass the href as book.md prints it (a container path such as "
                    f"{known[0]!r}), as the chapter writes it (with the chapter's locator) or "
                    "as the OPF manifest writes it."
                    if known else "This book has no images to read.",
    )


def epub_image(source: Path, chapter_href: str | None, image_href: str,
               manifest_paths: Collection[str] | None = None, *,
               package_dir: str = "") -> EpubImage:
    """The image ``image_href`` names inside the EPUB, read from its container.

    ``image_href`` may be chapter-relative (to ``chapter_href``), a container path, or relative
    to the package document's folder ``package_dir`` (:func:`resolve_epub_image`). It must
    name one of ``manifest_paths`` (the images the book declares); when that is None, any
    image entry of the container.

    Raises:
        CoreError: PATH_NOT_ALLOWED (outside the container, absolute, not an image, too large),
            NOT_FOUND (no such image).
    """
    with zipfile.ZipFile(source) as z:
        declared = manifest_paths if manifest_paths is not None else {
            n for n in z.namelist() if posixpath.splitext(n)[1].lower() in _IMAGE_TYPES}
        path, form = resolve_epub_image(image_href, declared, chapter_href=chapter_href,
                                        package_dir=package_dir)
        try:
            info = z.getinfo(path)
        except KeyError:
            raise CoreError(Code.NOT_FOUND, f"The image {path!r} is declared but missing "
                            "from the EPUB container.", details={"resolved": path},
                            remediation="The EPUB file is incomplete; use another image."
                            ) from None
        if info.file_size > MAX_IMAGE_BYTES:
            raise _not_allowed(image_href, "it is larger than 20 MiB")
        data = z.read(info)
    ext = posixpath.splitext(path)[1].lower()
    return EpubImage(data=data, path=path, media_type=_sniff(data) or _IMAGE_TYPES[ext],
                     form=form)


def _sniff(data: bytes) -> str | None:
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if data.lstrip()[:5] in (b"<?xml", b"<svg ") or b"<svg" in data[:512]:
        return "image/svg+xml"
    return None


def _not_allowed(href: str, why: str) -> CoreError:
    return CoreError(Code.PATH_NOT_ALLOWED, f"Image href {href!r} is refused: {why}.",
                     remediation="Pass an image href as the chapter's Markdown gives it.")
