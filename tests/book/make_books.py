"""Book files built on the spot for tests: PDFs, EPUBs and hostile archives.

Shared by the whole book-agent suite, so the signatures below are kept stable: add keyword
arguments, never change the meaning of existing ones. Every generator writes to ``path`` and
returns it. PDFs are made with PyMuPDF; EPUBs are written with :mod:`zipfile` by hand so a test
can make any kind of broken one.

Generators:

* :func:`make_pdf` — Latin text pages, an optional outline and page labels.
* :func:`make_two_column_pdf` — one page of two text columns, written in column or row order.
* :func:`make_japanese_pdf` — Japanese paragraphs set horizontally or vertically (tategaki).
* :func:`make_image_only_pdf` — pages that are only an image (a scan without OCR).
* :func:`make_encrypted_pdf` — a PDF that needs a user password.
* :func:`make_epub` — an EPUB 2 or 3 with chapters, nav and/or NCX, images and extra entries.
* :func:`make_zip_bomb` — an EPUB-shaped ZIP with one hugely compressible entry.
* :func:`rewrite_entry` — change one entry of a ZIP (EPUB) in place.
"""

from __future__ import annotations

import os
import textwrap
import zipfile
from collections.abc import Callable, Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any, Literal

os.environ.setdefault("PYMUPDF_MESSAGE", "fd:2")

import pymupdf  # the message route above must be set before this import

__all__ = [
    "TINY_JPEG",
    "make_encrypted_pdf",
    "make_epub",
    "make_image_only_pdf",
    "make_japanese_pdf",
    "make_pdf",
    "make_two_column_pdf",
    "make_zip_bomb",
    "rewrite_entry",
]

OutlineItem = tuple[int, str, int]
"""``(level, title, page)``: level from 1, page 1-based (PyMuPDF ``set_toc`` convention)."""
NavItem = tuple[int, str, str]
"""``(level, title, href)``: href relative to the package folder (``OEBPS/``), fragment allowed,
written as given (so an empty or percent-encoded href can be tested)."""

_A4 = (595, 842)
_A5 = (420, 595)


def _tiny_jpeg() -> bytes:
    pix = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 8, 8), False)
    pix.set_rect(pix.irect, (200, 60, 60))
    return pix.tobytes("jpg")


TINY_JPEG = _tiny_jpeg()
"""An 8×8 red JPEG for EPUB image tests."""


# --- PDF -------------------------------------------------------------------------------------


def make_pdf(
    path: Path,
    pages: Sequence[str],
    *,
    outline: Sequence[OutlineItem] | None = None,
    labels: Sequence[Mapping[str, Any]] | None = None,
    metadata: Mapping[str, str] | None = None,
    fontsize: float = 11,
) -> Path:
    """Write a PDF with one page per string of Latin-1 text.

    Args:
        path: where to write.
        pages: each page's text; ``\\n`` starts a line, long lines are wrapped at spaces.
            A page that does not fit is cut (keep test pages under ~60 lines).
        outline: ``(level, title, page)`` entries, page 1-based (PyMuPDF ``set_toc``). An
            entry's destination points just above the *last* line of its page whose text is
            the title (as hyperref does), else at the page top.
        labels: page-label rules as PyMuPDF's ``Document.set_page_labels`` takes them, e.g.
            ``[{"startpage": 0, "prefix": "", "style": "r", "firstpagenum": 1},
            {"startpage": 2, "prefix": "", "style": "D", "firstpagenum": 1}]``.
        metadata: PDF metadata (``title``, ``author``, ...).
        fontsize: body font size in points.
    """
    doc = pymupdf.open()
    width, height = _A4
    line_tops: list[dict[str, float]] = []  # per page: line text → top of its last occurrence
    for text in pages:
        page = doc.new_page(width=width, height=height)
        tops: dict[str, float] = {}
        y = 72.0
        for paragraph in text.split("\n"):
            for line in textwrap.wrap(paragraph, 90) or [""]:
                if y > height - 72:
                    break
                page.insert_text((72, y), line, fontsize=fontsize, fontname="helv")
                tops[line.strip()] = y - fontsize * 1.2
                y += fontsize * 1.4
        line_tops.append(tops)
    if outline:
        toc: list[list[Any]] = []
        for level, title, number in outline:
            top = line_tops[number - 1].get(title.strip()) if 0 < number <= len(pages) else None
            if top is None:
                toc.append([level, title, number])
            else:
                # As hyperref does: the destination sits just above the heading line.
                dest = {"kind": pymupdf.LINK_GOTO, "page": number - 1, "to": pymupdf.Point(72, top)}
                toc.append([level, title, number, dest])
        doc.set_toc(toc)
    if labels:
        doc.set_page_labels([dict(rule) for rule in labels])
    if metadata:
        doc.set_metadata(dict(metadata))
    doc.save(str(path))
    doc.close()
    return path


def make_two_column_pdf(
    path: Path,
    left: Sequence[str],
    right: Sequence[str],
    *,
    title: str | None = None,
    order: Literal["columns", "reversed"] = "columns",
) -> Path:
    """Write one A4 page with two columns of paragraphs (Latin-1 text).

    Args:
        left: the left column's paragraphs, top to bottom.
        right: the right column's paragraphs.
        title: a full-width heading above both columns.
        order: how the content stream is written. ``"columns"`` as typesetters do (title,
            left column, right column); ``"reversed"`` writes each column's paragraphs bottom
            to top (an implausible stream a reader must re-order).
    """
    doc = pymupdf.open()
    page = doc.new_page(width=_A4[0], height=_A4[1])
    size, lead = 9.0, 12.0
    top = 72.0
    if title:
        page.insert_text((56, top), title, fontsize=14, fontname="helv")
        top += 36
    placed: list[tuple[int, int, float, float, list[str]]] = []
    for column, (x, paragraphs) in enumerate(((56.0, left), (310.0, right))):
        y = top
        for row, paragraph in enumerate(paragraphs):
            lines = textwrap.wrap(paragraph, 48)
            placed.append((row, column, x, y, lines))
            y += lead * (len(lines) + 1)
    if order == "reversed":
        placed.sort(key=lambda p: (p[1], -p[0]))
    for _row, _column, x, y, lines in placed:
        for i, line in enumerate(lines):
            page.insert_text((x, y + i * lead), line, fontsize=size, fontname="helv")
    doc.save(str(path))
    doc.close()
    return path


def make_japanese_pdf(
    path: Path,
    paragraphs: Sequence[str],
    *,
    vertical: bool,
    method: Literal["cmap", "glyphs"] = "cmap",
    chars_per_line: int = 20,
    lines_per_page: int = 16,
    title: str | None = None,
    ruby: Mapping[str, str] | None = None,
) -> Path:
    """Write Japanese paragraphs in PyMuPDF's built-in CJK font ("japan", Droid Sans Japanese).

    Every paragraph starts on a new line (column) indented by one character, as Japanese
    typesetting does, and wraps at ``chars_per_line`` characters; text flows onto new A5 pages.

    Args:
        vertical: ``False``: horizontal lines, top to bottom. ``True``: tategaki — columns top to
            bottom, set right to left.
        method: how vertical text is made. ``"cmap"`` (default) is real vertical writing: the
            font is embedded with the vertical CMap ``UniJIS-UTF16-V`` (writing mode 1), and one
            ``TJ`` per column advances downwards; MuPDF reports each glyph as its own line with
            ``wmode`` 1 and ``dir`` (0, 1), and plain ``get_text()`` gives one character per
            line. ``"glyphs"`` places horizontal glyphs one by one down each column (as some
            producers do); MuPDF reports one-character lines with ``wmode`` 0 and ``dir`` (1, 0).
        chars_per_line: characters per line (horizontal) or per column (vertical).
        lines_per_page: lines or columns per page.
        title: a heading set before the first paragraph (a line or column of its own, then
            an empty one).
        ruby: base word → reading; each occurrence of the word (within one line or column)
            gets its reading in half-size glyphs, above (horizontal) or to the right (vertical).
            Not drawn with ``method="glyphs"``.
    """
    size = 14.0
    width, height = _A5
    doc = pymupdf.open()
    lines: list[tuple[str, bool]] = []  # (text, first line of its paragraph)
    if title:
        lines += [(title, False), ("", False)]
    for paragraph in paragraphs:
        room = chars_per_line - 1
        first = True
        rest = paragraph
        while rest:
            lines.append((rest[:room], first))
            rest = rest[room:]
            first = False
            room = chars_per_line
    page = None
    slot = lines_per_page
    for text, first in lines:
        if slot >= lines_per_page:
            page = doc.new_page(width=width, height=height)
            if vertical and method == "cmap":
                page.insert_font(fontname="japan", wmode=1)
            slot = 0
        assert page is not None
        indent = size if first else 0.0
        if not text:
            pass
        elif not vertical:
            page.insert_text(
                (40 + indent, 80 + slot * size * 1.6), text, fontname="japan", fontsize=size
            )
        elif method == "cmap":
            x = width - 50 - slot * size * 1.6
            page.insert_text((x, 60 + indent), text, fontname="japan", fontsize=size)
        else:
            x = width - 50 - slot * size * 1.6
            for i, ch in enumerate(text):
                y = 60 + indent + (i + 1) * size
                page.insert_text((x, y), ch, fontname="japan", fontsize=size)
        if text and ruby and method == "cmap":
            _draw_ruby(page, text, ruby, vertical, slot, indent, size, width)
        slot += 1
    doc.save(str(path))
    doc.close()
    return path


def _draw_ruby(
    page: Any,
    text: str,
    ruby: Mapping[str, str],
    vertical: bool,
    slot: int,
    indent: float,
    size: float,
    width: float,
) -> None:
    for word, reading in ruby.items():
        start = text.find(word)
        while start != -1:
            # Centre the reading on the word, half size, beside or above it.
            shift = (len(word) * size - len(reading) * size / 2) / 2
            if vertical:
                x = width - 50 - slot * size * 1.6 + size * 0.85
                y = 60 + indent + start * size + shift
            else:
                x = 40 + indent + start * size + shift
                y = 80 + slot * size * 1.6 - size * 1.05
            page.insert_text((x, y), reading, fontname="japan", fontsize=size / 2)
            start = text.find(word, start + len(word))


def make_image_only_pdf(path: Path, pages: int = 1) -> Path:
    """Write pages that each hold only a grey image with dark "text" bars (no text layer)."""
    doc = pymupdf.open()
    pix = pymupdf.Pixmap(pymupdf.csGRAY, pymupdf.IRect(0, 0, 200, 280), False)
    pix.set_rect(pix.irect, (235,))
    for row in range(20, 260, 14):
        pix.set_rect(pymupdf.IRect(20, row, 180, row + 6), (40,))
    png = pix.tobytes("png")
    for _ in range(pages):
        page = doc.new_page(width=_A5[0], height=_A5[1])
        page.insert_image(page.rect, stream=png)
    doc.save(str(path))
    doc.close()
    return path


def make_encrypted_pdf(path: Path, *, user_password: str = "secret") -> Path:
    """Write a one-page text PDF that needs ``user_password`` to open (AES-256)."""
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 72), "Confidential chapter text.", fontname="helv")
    doc.save(
        str(path),
        encryption=pymupdf.PDF_ENCRYPT_AES_256,
        user_pw=user_password,
        owner_pw=user_password + "-owner",
    )
    doc.close()
    return path


# --- EPUB ------------------------------------------------------------------------------------

_XHTML11_DOCTYPE = (
    '<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.1//EN" '
    '"http://www.w3.org/TR/xhtml11/DTD/xhtml11.dtd">'
)


def make_epub(
    path: Path,
    chapters: Sequence[tuple[str, str]],
    *,
    version: Literal[2, 3] = 3,
    nav: Sequence[NavItem] | Literal[False] | None = None,
    ncx: Sequence[NavItem] | bool | None = None,
    extra_files: Mapping[str, bytes | str] | None = None,
    images: Mapping[str, bytes] | None = None,
    missing_chapters: Sequence[str] = (),
    title: str = "Test Book",
    creators: Sequence[str] = ("A. Author",),
    language: str = "en",
    page_progression: str | None = None,
    css: str | None = None,
    doctype: str | None = None,
    mimetype: bool = True,
    linear: Sequence[bool] | None = None,
) -> Path:
    """Write an EPUB whose package lives in ``OEBPS/content.opf``.

    Chapter ``i`` (from 1) is ``OEBPS/chapter{i:02d}.xhtml``; its body is the given XHTML
    fragment, written as is (so it may carry ``id`` targets, ruby, images, broken markup).

    Args:
        chapters: ``(title, body XHTML)`` per chapter; the title goes into ``<title>``.
        version: 3 (nav document, ``<!DOCTYPE html>``) or 2 (NCX, XHTML 1.1 DOCTYPE).
        nav: EPUB 3 contents as ``(level, title, href)``; None: one entry per chapter;
            False: no nav document.
        ncx: NCX contents as ``(level, title, href)``; True: one per chapter; None: an NCX
            for version 2 only; False: none.
        extra_files: raw ZIP entries added as given (``META-INF/encryption.xml``,
            ``../escape.txt``, ...), not listed in the manifest.
        images: files under ``OEBPS/`` (e.g. ``{"images/a.jpg": TINY_JPEG}``), listed in the
            manifest with a media type from their extension.
        missing_chapters: hrefs (under ``OEBPS/``) listed in the manifest and spine whose file
            is absent from the ZIP.
        page_progression: the spine's ``page-progression-direction`` (``"rtl"``).
        css: a stylesheet (``OEBPS/style.css``) every chapter links.
        doctype: the DOCTYPE line of every chapter (default by version; ``""`` for none).
        mimetype: write the ``mimetype`` entry first.
        linear: per chapter, False writes ``linear="no"``.
    """
    if doctype is None:
        doctype = "<!DOCTYPE html>" if version == 3 else _XHTML11_DOCTYPE
    files: dict[str, bytes | str] = {}
    manifest: list[str] = []
    spine: list[str] = []
    link = '<link rel="stylesheet" type="text/css" href="style.css"/>' if css else ""
    for i, (chapter_title, body) in enumerate(chapters, start=1):
        name = f"chapter{i:02d}.xhtml"
        files[f"OEBPS/{name}"] = (
            '<?xml version="1.0" encoding="utf-8"?>\n'
            f"{doctype}\n"
            '<html xmlns="http://www.w3.org/1999/xhtml" '
            f'xmlns:epub="http://www.idpf.org/2007/ops" xml:lang="{language}">\n'
            f"<head><title>{escape(chapter_title)}</title>{link}</head>\n"
            f"<body>\n{body}\n</body>\n</html>\n"
        )
        manifest.append(f'<item id="c{i}" href="{name}" media-type="application/xhtml+xml"/>')
        is_linear = linear is None or i > len(linear) or linear[i - 1]
        linear_attr = "" if is_linear else ' linear="no"'
        spine.append(f'<itemref idref="c{i}"{linear_attr}/>')
    for j, href in enumerate(missing_chapters, start=1):
        manifest.append(f'<item id="m{j}" href="{href}" media-type="application/xhtml+xml"/>')
        spine.append(f'<itemref idref="m{j}"/>')
    if css:
        files["OEBPS/style.css"] = css
        manifest.append('<item id="css" href="style.css" media-type="text/css"/>')
    for k, (href, data) in enumerate((images or {}).items(), start=1):
        files[f"OEBPS/{href}"] = data
        kind = "png" if href.lower().endswith(".png") else "jpeg"
        manifest.append(f'<item id="img{k}" href="{href}" media-type="image/{kind}"/>')

    default = [(1, t, f"chapter{i:02d}.xhtml") for i, (t, _b) in enumerate(chapters, start=1)]
    if version == 3 and nav is not False:
        files["OEBPS/nav.xhtml"] = _nav_document(default if nav is None else list(nav))
        manifest.append(
            '<item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>'
        )
    if ncx is None:
        ncx = version == 2
    if ncx is not False:
        entries = default if ncx is True else list(ncx)
        files["OEBPS/toc.ncx"] = _ncx_document(entries, title)
        manifest.append('<item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/>')
    spine_attrs = ' toc="ncx"' if ncx is not False else ""
    if page_progression:
        spine_attrs += f' page-progression-direction="{page_progression}"'
    creator_xml = "".join(f"<dc:creator>{escape(c)}</dc:creator>" for c in creators)
    modified = (
        '<meta property="dcterms:modified">2026-01-01T00:00:00Z</meta>' if version == 3 else ""
    )
    files["OEBPS/content.opf"] = (
        '<?xml version="1.0" encoding="utf-8"?>\n'
        f'<package xmlns="http://www.idpf.org/2007/opf" version="{version}.0" '
        'unique-identifier="uid">\n'
        '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/">'
        f'<dc:identifier id="uid">urn:uuid:test-{abs(hash(title)) % 10**8}</dc:identifier>'
        f"<dc:title>{escape(title)}</dc:title>{creator_xml}"
        f"<dc:language>{language}</dc:language>{modified}</metadata>\n"
        f"<manifest>{''.join(manifest)}</manifest>\n"
        f"<spine{spine_attrs}>{''.join(spine)}</spine>\n</package>\n"
    )
    files["META-INF/container.xml"] = (
        '<?xml version="1.0"?>\n'
        '<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">'
        '<rootfiles><rootfile full-path="OEBPS/content.opf" '
        'media-type="application/oebps-package+xml"/></rootfiles></container>\n'
    )
    files.update(extra_files or {})
    with zipfile.ZipFile(path, "w") as zf:
        if mimetype:
            zf.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        for name, data in files.items():
            zf.writestr(name, data, compress_type=zipfile.ZIP_DEFLATED)
    return path


def _nav_document(entries: Sequence[NavItem]) -> str:
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE html>\n'
        '<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops">'
        "<head><title>Contents</title></head><body>"
        f'<nav epub:type="toc" id="toc"><h1>Contents</h1>{_nested(entries, "ol", "li")}</nav>'
        "</body></html>\n"
    )


def _nested(entries: Sequence[NavItem], list_tag: str, item_tag: str) -> str:
    """Nested ``<ol><li><a>`` lists from ``(level, title, href)`` entries."""
    out: list[str] = []
    depth = 0
    for level, title, href in entries:
        if level > depth:
            for _ in range(level - depth):
                out.append(f"<{list_tag}><{item_tag}>")
        else:
            out.append(f"</{item_tag}>")
            for _ in range(depth - level):
                out.append(f"</{list_tag}></{item_tag}>")
            out.append(f"<{item_tag}>")
        out.append(f'<a href="{escape(href)}">{escape(title)}</a>')
        depth = level
    for _ in range(depth):
        out.append(f"</{item_tag}></{list_tag}>")
    return "".join(out)


def _ncx_document(entries: Sequence[NavItem], title: str) -> str:
    points: list[str] = []
    depth = 0
    for n, (level, label, href) in enumerate(entries, start=1):
        if level <= depth:
            points.append("</navPoint>" * (depth - level + 1))
        points.append(
            f'<navPoint id="p{n}" playOrder="{n}"><navLabel><text>{escape(label)}</text>'
            f'</navLabel><content src="{escape(href)}"/>'
        )
        depth = level
    points.append("</navPoint>" * depth)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<!DOCTYPE ncx PUBLIC "-//NISO//DTD ncx 2005-1//EN" '
        '"http://www.daisy.org/z3986/2005/ncx-2005-1.dtd">\n'
        '<ncx xmlns="http://www.daisy.org/z3986/2005/ncx/" version="2005-1">'
        f"<head/><docTitle><text>{escape(title)}</text></docTitle>"
        f"<navMap>{''.join(points)}</navMap></ncx>\n"
    )


def make_zip_bomb(path: Path, *, uncompressed_mib: int = 64) -> Path:
    """Write an EPUB-shaped ZIP whose chapter inflates ~1000:1 to ``uncompressed_mib`` MiB."""
    chunk = b"\0" * (1024 * 1024)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        zf.writestr(
            "META-INF/container.xml",
            '<?xml version="1.0"?><container version="1.0" '
            'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
            '<rootfile full-path="content.opf" media-type="application/oebps-package+xml"/>'
            "</rootfiles></container>",
        )
        with zf.open("bomb.xhtml", "w", force_zip64=True) as entry:
            for _ in range(uncompressed_mib):
                entry.write(chunk)
    return path


def rewrite_entry(path: Path, name: str, change: Callable[[str], str]) -> Path:
    """Rewrite the UTF-8 entry ``name`` of the ZIP at ``path`` with ``change(text)``."""
    with zipfile.ZipFile(path) as zf:
        entries = [(info, zf.read(info)) for info in zf.infolist()]
    with zipfile.ZipFile(path, "w") as zf:
        for info, data in entries:
            if info.filename == name:
                data = change(data.decode("utf-8")).encode("utf-8")
            zf.writestr(info, data)
    return path
