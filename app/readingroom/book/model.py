"""What an ingester hands to the rest of book-agent: raw source text in units, and a contents.

Raw text is the truth: every record, search hit and locator points into ``SourceUnit.text``.
``SourceUnit.markdown`` is an optional richer view of the same unit (headings, emphasis,
images) that the Markdown builder may prefer *after* checking it covers the raw text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["Block", "FurnitureKind", "FurnitureSpan", "Link", "PageMark", "Reading", "Record",
           "SourceDocument", "SourceUnit", "TextSource", "TocEntry", "UnitKind", "UnitRole"]

UnitKind = Literal["pdf_page", "epub_chapter", "markdown_section"]
TextSource = Literal["file", "ocr", "mixed"]
"""Where text comes from: the file's own text, OCR of page images, or both (a record over
pages of each)."""
UnitRole = Literal["body", "contents", "index"]
"""``contents``: a printed contents page, an in-spine nav/NCX/目次 document, a landmarks or
page-list document. ``index``: a back-of-book index (EPUB ``index`` vocabulary, or a chapter
headed "Index", 索引 …). Both stay readable (records, book.md) but are left out of search by
default."""
FurnitureKind = Literal["running_head", "folio", "page_break", "note_ref", "line_number"]
"""Page furniture: text that sits inside the raw text but is not part of the sentence it
interrupts (running heads and titles, printed page numbers, EPUB page-break markers, note
reference markers, verse line numbers)."""
FurnitureSpan = tuple[int, int, str]
"""``(start, end, kind)``: raw character offsets (end exclusive) of one furniture span and its
:data:`FurnitureKind`. Matching (search and locate) steps over these spans; the raw text keeps
them."""
PageMark = tuple[int, str]
"""``(offset, label)``: a printed page begins at this raw offset (EPUB page list / page-break
marker)."""
Block = tuple[int, int, str]
"""``(start, end, markdown)``: one Markdown block (paragraph, heading, list, quote, verse
stanza, table, note, image) rendered from the raw span ``[start, end)`` of its unit. Blocks are
in reading order and do not overlap; records are cut at block boundaries."""


Link = tuple[int, int, int, int, str]
"""``(start, end, target unit, target offset, target)``: a link inside the raw text ``[start,
end)`` (an index locator such as "46"), resolved to the unit and raw offset it points at
(``-1, -1`` when it points nowhere in the book) and its target as written, resolved against
the container (``OEBPS/ch03.xhtml#p46``)."""


Reading = tuple[int, int, str]
"""``(start, end, reading)``: a ruby base ``[start, end)`` of the raw text and its reading
(``<rt>``, which the raw text leaves out): 寛容 and くつろげ."""


@dataclass(frozen=True)
class SourceUnit:
    """One unit of raw source text: a PDF page, an EPUB spine item, or a Markdown section."""

    kind: UnitKind
    index: int
    """Zero-based position: PDF page index, EPUB spine position, Markdown section number."""
    text: str
    """The raw extracted text in reading order, lines joined with ``\\n``."""
    label: str | None = None
    """PDF page label (printed number, e.g. "iii" or "3"); EPUB spine idref."""
    href: str | None = None
    """EPUB: the spine item's path inside the container (e.g. ``OEBPS/ch01.xhtml``).
    Markdown: the source file name."""
    has_text_layer: bool = True
    """PDF: False when the page has no text to read (scanned, and not read by OCR); it still
    renders. A page read by OCR has text: ``text_source`` says so."""
    writing_mode: Literal["horizontal", "vertical"] = "horizontal"
    line_start: int | None = None
    """Markdown: first line (1-based) of the section in the source file."""
    line_end: int | None = None
    """Markdown: last line (1-based, inclusive)."""
    anchors: tuple[tuple[str, int], ...] = ()
    """EPUB: ``(fragment id, character offset into text)`` for every ``id`` in the chapter."""
    images: tuple[str, ...] = ()
    """EPUB: container paths of images the chapter references, resolved through the manifest."""
    markdown: str | None = None
    """An optional Markdown rendering of this unit (EPUB XHTML → Markdown); None: use text."""
    role: UnitRole = "body"
    """``contents`` for contents/navigation pages (see :data:`UnitRole`)."""
    furniture: tuple[FurnitureSpan, ...] = ()
    """Page furniture inside ``text``, in order (see :data:`FurnitureSpan`)."""
    label_inferred: bool = False
    """PDF: True when ``label`` was inferred from the printed folios, not PDF page labels."""
    page_marks: tuple[PageMark, ...] = ()
    """EPUB: where printed pages begin inside this chapter (page list, page-break markers)."""
    blocks: tuple[Block, ...] = ()
    """Markdown blocks with their raw spans (see :data:`Block`); empty: no structure known."""
    links: tuple[Link, ...] = ()
    """EPUB index pages: the locator links of the index (see :data:`Link`)."""
    readings: tuple[Reading, ...] = ()
    """EPUB ruby: the readings (furigana) of ruby bases in ``text`` (see :data:`Reading`)."""
    text_source: TextSource = "file"
    """Where ``text`` comes from: ``file`` (the file's own text) or ``ocr`` (machine-read
    from the page image; ``ocr`` says by what)."""
    ocr: dict[str, Any] | None = None
    """PDF: what OCR says about the page: engine, engine_version, language, dpi, seconds,
    words, mean_word_confidence (0-100); or ``{"status": "failed", "reason": …}``."""


@dataclass(frozen=True)
class TocEntry:
    """One contents entry (PDF outline, EPUB nav/NCX, Markdown heading)."""

    title: str
    level: int
    """1-based depth."""
    unit_index: int
    """The unit it points into."""
    char_offset: int = 0
    """Offset into that unit's text where the entry starts (EPUB fragments, Markdown)."""
    fragment: str | None = None
    """EPUB: the ``#fragment`` of the contents link, if any."""


@dataclass(frozen=True)
class SourceDocument:
    """A parsed source file, ready for records, the Markdown view and the index."""

    format: Literal["pdf", "epub", "markdown"]
    units: tuple[SourceUnit, ...]
    toc: tuple[TocEntry, ...] = ()
    title: str | None = None
    authors: tuple[str, ...] = ()
    language: str | None = None
    warnings: tuple[str, ...] = ()
    """Non-fatal findings (missing manifest item, empty nav href, vertical text joined …)."""
    metadata: dict[str, str] = field(default_factory=dict)
    """Format specifics, e.g. ``page_progression_direction: rtl``, PDF producer."""


@dataclass(frozen=True)
class Record:
    """A bounded entry of the book (a section, or part of a long one), in reading order.

    Its text is the raw source text from ``(unit_start, char_start)`` to
    ``(unit_end, char_end)`` (end exclusive), unit slices joined with ``\n``.
    """

    record_id: str
    """Stable across rebuilds of the same source: derived from position and heading, e.g.
    ``r0007`` or ``r0007-2`` for the second part of a split section."""
    order: int
    heading_path: tuple[str, ...]
    """Contents titles from the top level down to this record's section."""
    text: str
    unit_start: int
    char_start: int
    unit_end: int
    char_end: int
    md_line_start: int = 0
    """First line (1-based) of the record in ``book.md``."""
    md_line_end: int = 0
    """Last line (1-based, inclusive) of the record in ``book.md``."""
    role: UnitRole = "body"
    """``contents`` when the record lies on contents/navigation units, ``index`` on a
    back-of-book index (both left out of search by default)."""
    furniture: tuple[FurnitureSpan, ...] = ()
    """Page furniture inside ``text`` (offsets into ``text``); search steps over it."""
    readings: tuple[Reading, ...] = ()
    """Ruby readings of bases inside ``text`` (offsets into ``text``); indexed for search."""
    text_source: TextSource = "file"
    """``ocr`` when all its text was read by OCR, ``mixed`` when some was."""
    ocr: dict[str, Any] | None = None
    """For OCR text: engine, engine_version, language, the OCR'd pages, and their mean word
    confidence (weighted by words)."""
