"""Small EPUBs, one per class of input the EPUB reader must handle (issue 11).

Each builder writes a book whose chapters carry one construct: page-break markers inside a
sentence, note references, verse with line numbers, a nav document in the spine, a spine item
typed as a contents page, a nav ``<span>`` heading above linked entries, a chapter with every
block kind. The bodies follow the EPUB 3 / DPUB-ARIA markup (``epub:type``, ``role``) and the
Project Gutenberg habits seen in real books (``<sup><a href="#fn1">``, ``class="pageno"``).
"""

from __future__ import annotations

import zipfile
from collections.abc import Sequence
from html import escape
from pathlib import Path

__all__ = [
    "BLOCKS_BODY",
    "NOTES_BODY",
    "PAGEBREAK_BODY",
    "VERSE_BODY",
    "make_book",
    "make_contents_page_book",
    "make_nav_in_spine_book",
    "make_nav_span_book",
]

_XHTML = (
    '<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE html>\n'
    '<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops" '
    'xml:lang="en"><head><title>{title}</title></head><body>\n{body}\n</body></html>\n'
)

PAGEBREAK_BODY = (
    "<h1>One</h1>"
    '<p id="p1">The river ran on past the <span epub:type="pagebreak" id="page12" '
    'title="12"/>mill and the bridge.</p>'
    '<p>It turned at the <span role="doc-pagebreak" id="page13">13</span> ford and '
    "ran south.</p>"
    '<p>The sun set over the hills.<a class="pageno" id="Page_14" title="[Pg 14]"></a> '
    "Night came.</p>"
)
"""A silent marker mid-sentence (title only), one with its page number as text, and a
Gutenberg ``class="pageno"`` anchor."""

NOTES_BODY = (
    "<h1>Notes</h1>"
    '<p>The upper river<a href="#n1" epub:type="noteref">1</a>, as surveyors say, was once '
    'another stream.</p>'
    '<p>A census<sup><a href="#n2">[2]</a></sup> counted the mills; the area is '
    "x<sup>2</sup> square miles.</p>"
    '<p>The valley<a href="#n1" role="doc-noteref">1</a> floods.</p>'
    '<aside epub:type="footnote" id="n1"><p>Called the Chattooga.</p></aside>'
    '<aside epub:type="footnote" id="n2"><p>Taken in <em>1900</em>.</p></aside>'
)
"""Note references by ``epub:type``, by ``role`` and as ``<sup><a href="#…">``, beside an
exponent that is not one; notes as asides after the text."""

VERSE_BODY = (
    "<h1>Verse</h1>"
    '<div class="stanza">'
    '<p class="line">Even as the sun with purple-colour\'d face</p>'
    '<p class="line">Had ta\'en his last leave <span class="linenum">2</span>of the weeping '
    "morn,</p>"
    '<p class="line">Rose-cheek\'d Adonis hied him to the chase;</p>'
    '<p class="line">Hunting he loved, but love he laugh\'d to scorn;'
    '<span class="line-number">4</span></p>'
    "</div>"
    "<p>Sick-thoughted Venus makes amain unto him,<br/>"
    "And like a bold-faced suitor 'gins to woo him.</p>"
)
"""Verse lines with numbers in ``class="linenum"`` / ``class="line-number"`` spans (no EPUB
vocabulary names line numbers), and a stanza written with ``<br/>``."""

BLOCKS_BODY = (
    "<h1>Blocks</h1>"
    "<p>A first paragraph with <em>emphasis</em> and <strong>strong words</strong>.</p>"
    "<p>A second paragraph.</p>"
    "<ul><li>apples</li><li>pears<ol><li>green</li><li>red</li></ol></li></ul>"
    "<blockquote><p>A quoted line.</p><p>Another quoted line.</p></blockquote>"
    "<table><caption>Prices</caption>"
    "<tr><th>Fruit</th><th>Price</th></tr>"
    "<tr><td>Apple</td><td>3</td></tr><tr><td>Pear</td><td>4</td></tr></table>"
    "<pre>code line one\n  code line two</pre>"
    "<hr/>"
    '<p><img src="pic.png" alt="A figure"/></p>'
    "<h2>After</h2><p>The end.</p>"
)
"""Every block kind: headings, paragraphs, emphasis, nested lists, a block quote, a table with
a caption, preformatted text, a rule and an image."""

_PNG = (
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00"
    b"\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N"
    b"\x00\x00\x00\x00IEND\xaeB`\x82"
)


def make_book(
    path: Path,
    chapters: Sequence[tuple[str, str]],
    *,
    nav_body: str | None = None,
    nav_in_spine: bool = False,
    ncx_pages: Sequence[tuple[str, str]] = (),
    ncx_in_spine: bool = False,
) -> Path:
    """Write an EPUB 3 with ``OEBPS/<name>.xhtml`` chapters and a hand-written nav document.

    Args:
        chapters: ``(file name without .xhtml, body XHTML)`` in spine order.
        nav_body: the nav document's body (default: one toc entry per chapter).
        nav_in_spine: list the nav document first in the spine.
        ncx_pages: an NCX ``pageList`` as ``(label, href)`` (an NCX is written only then).
        ncx_in_spine: list the NCX last in the spine (a packaging error seen in the wild).
    """
    if nav_body is None:
        items = "".join(
            f'<li><a href="{name}.xhtml">{escape(name.title())}</a></li>' for name, _ in chapters
        )
        nav_body = f'<nav epub:type="toc" id="toc"><h1>Contents</h1><ol>{items}</ol></nav>'
    files: dict[str, str | bytes] = {
        "OEBPS/nav.xhtml": _XHTML.format(title="Contents", body=nav_body),
        "OEBPS/pic.png": _PNG,
    }
    manifest = [
        '<item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>',
        '<item id="pic" href="pic.png" media-type="image/png"/>',
    ]
    spine = ['<itemref idref="nav"/>'] if nav_in_spine else []
    for name, body in chapters:
        files[f"OEBPS/{name}.xhtml"] = _XHTML.format(title=escape(name), body=body)
        manifest.append(f'<item id="{name}" href="{name}.xhtml" '
                        'media-type="application/xhtml+xml"/>')
        spine.append(f'<itemref idref="{name}"/>')
    spine_attrs = ""
    if ncx_pages:
        targets = "".join(
            f'<pageTarget id="pt{i}" type="normal" value="{i}"><navLabel><text>{escape(label)}'
            f'</text></navLabel><content src="{escape(href)}"/></pageTarget>'
            for i, (label, href) in enumerate(ncx_pages, start=1)
        )
        files["OEBPS/toc.ncx"] = (
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            '<ncx xmlns="http://www.daisy.org/z3986/2005/ncx/" version="2005-1"><head/>'
            "<docTitle><text>Book</text></docTitle><navMap/>"
            f"<pageList>{targets}</pageList></ncx>\n"
        )
        manifest.append('<item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/>')
        spine_attrs = ' toc="ncx"'
        if ncx_in_spine:
            spine.append('<itemref idref="ncx"/>')
    files["OEBPS/content.opf"] = (
        '<?xml version="1.0" encoding="utf-8"?>\n'
        '<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="uid">'
        '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/">'
        '<dc:identifier id="uid">urn:uuid:classes</dc:identifier><dc:title>Classes</dc:title>'
        '<dc:language>en</dc:language>'
        '<meta property="dcterms:modified">2026-01-01T00:00:00Z</meta></metadata>'
        f"<manifest>{''.join(manifest)}</manifest>"
        f"<spine{spine_attrs}>{''.join(spine)}</spine></package>\n"
    )
    files["META-INF/container.xml"] = (
        '<?xml version="1.0"?>\n'
        '<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">'
        '<rootfiles><rootfile full-path="OEBPS/content.opf" '
        'media-type="application/oebps-package+xml"/></rootfiles></container>\n'
    )
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        for name, data in files.items():
            zf.writestr(name, data, compress_type=zipfile.ZIP_DEFLATED)
    return path


def make_nav_in_spine_book(path: Path) -> Path:
    """The nav document is the first spine item (as in many real EPUB 3 books)."""
    return make_book(
        path,
        [("one", "<h1>One</h1><p>The first chapter.</p>"),
         ("two", "<h1>Two</h1><p>The second chapter.</p>")],
        nav_in_spine=True,
    )


def make_contents_page_book(path: Path) -> Path:
    """A typed contents chapter (``epub:type="toc"``) and an untyped 目次 page of links."""
    typed = (
        '<section epub:type="toc"><h1>Contents</h1><ol>'
        '<li><a href="story.xhtml">The Story</a></li><li><a href="end.xhtml">The End</a></li>'
        "</ol></section>"
    )
    mokuji = (
        "<h1>目次</h1>"
        '<p><a href="story.xhtml">第一章　物語の始まり</a></p>'
        '<p><a href="story.xhtml#s2">第二章　旅の途中</a></p>'
        '<p><a href="end.xhtml">第三章　終わり</a></p>'
    )
    return make_book(
        path,
        [
            ("contents", typed),
            ("mokuji", mokuji),
            ("story", '<h1>The Story</h1><p>Once upon a time.</p><p id="s2">Later on.</p>'),
            ("end", "<h1>The End</h1><p>They lived happily.</p>"),
        ],
    )


def make_nav_span_book(path: Path) -> Path:
    """Nav entries under ``<span>`` headings (an author's name above their stories)."""
    nav = (
        '<nav epub:type="toc"><ol>'
        '<li><a href="intro.xhtml">Introduction</a></li>'
        "<li><span>Anne Author</span><ol>"
        '<li><a href="a1.xhtml">First Story</a></li><li><a href="a2.xhtml">Second Story</a></li>'
        "</ol></li>"
        "<li><span>Bea Writer</span><ol>"
        '<li><span>Early Work</span><ol><li><a href="b1.xhtml#start">Third Story</a></li></ol>'
        "</li></ol></li>"
        "<li><span>Nobody</span></li>"
        "</ol></nav>"
    )
    chapters = [
        ("intro", "<h1>Introduction</h1><p>Stories by two writers.</p>"),
        ("a1", "<h1>First Story</h1><p>A first tale.</p>"),
        ("a2", "<h1>Second Story</h1><p>A second tale.</p>"),
        ("b1", '<p>Front words.</p><h1 id="start">Third Story</h1><p>A third tale.</p>'),
    ]
    return make_book(path, chapters, nav_body=nav)
