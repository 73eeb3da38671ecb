"""A generated EPUB whose chapters and images sit in different folders below the package.

``OEBPS/content.opf`` is the package document; chapters are ``OEBPS/text/cNN.xhtml`` and images
``OEBPS/images/...``, so an image has three distinct spellings: as the chapter writes it
(``../images/a.jpg``), as book.md prints it (``OEBPS/images/a.jpg``) and as the manifest writes
it (``images/a.jpg``).
"""

from __future__ import annotations

import zipfile
from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path

__all__ = ["make_nested_epub"]


def make_nested_epub(path: Path, chapters: Sequence[tuple[str, str]],
                     images: Mapping[str, bytes]) -> Path:
    """Write the EPUB: ``chapters`` are (title, body XHTML); ``images`` are under ``images/``.

    A body refers to an image as the chapter would: ``<img src="../images/NAME"/>``.
    """
    files: dict[str, bytes | str] = {}
    manifest, spine, nav = [], [], []
    for i, (title, body) in enumerate(chapters, start=1):
        name = f"text/c{i:02d}.xhtml"
        files[f"OEBPS/{name}"] = (
            '<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE html>\n'
            '<html xmlns="http://www.w3.org/1999/xhtml" xml:lang="en">'
            f"<head><title>{escape(title)}</title></head><body>\n{body}\n</body></html>\n")
        manifest.append(f'<item id="c{i}" href="{name}" media-type="application/xhtml+xml"/>')
        spine.append(f'<itemref idref="c{i}"/>')
        nav.append(f'<li><a href="{name}">{escape(title)}</a></li>')
    for k, (name, data) in enumerate(images.items(), start=1):
        files[f"OEBPS/images/{name}"] = data
        kind = "png" if name.lower().endswith(".png") else "jpeg"
        manifest.append(f'<item id="i{k}" href="images/{name}" media-type="image/{kind}"/>')
    files["OEBPS/nav.xhtml"] = (
        '<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE html>\n'
        '<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops">'
        '<head><title>Contents</title></head><body><nav epub:type="toc"><ol>'
        f"{''.join(nav)}</ol></nav></body></html>\n")
    manifest.append('<item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" '
                    'properties="nav"/>')
    files["OEBPS/content.opf"] = (
        '<?xml version="1.0" encoding="utf-8"?>\n'
        '<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="uid">'
        '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/">'
        '<dc:identifier id="uid">urn:uuid:nested-images</dc:identifier>'
        "<dc:title>Nested Images</dc:title><dc:language>en</dc:language>"
        '<meta property="dcterms:modified">2026-01-01T00:00:00Z</meta></metadata>'
        f"<manifest>{''.join(manifest)}</manifest><spine>{''.join(spine)}</spine></package>\n")
    files["META-INF/container.xml"] = (
        '<?xml version="1.0"?>\n'
        '<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">'
        '<rootfiles><rootfile full-path="OEBPS/content.opf" '
        'media-type="application/oebps-package+xml"/></rootfiles></container>\n')
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        for name, data in files.items():
            zf.writestr(name, data, compress_type=zipfile.ZIP_DEFLATED)
    return path
