"""A PDF → one raw-text unit per page, with the outline mapped onto the pages (PyMuPDF).

One MuPDF text page per page, read as ``blocks``: that costs what plain ``get_text()`` costs
and also gives each block's rectangle, which the reading order and the outline offsets need.
A Latin page also reads the same text page as XHTML, for the emphasis of its Markdown blocks
(:mod:`.blocks`; cheap, unlike ``dict``). Only a page with CJK text reads it as ``dict``
(line directions and boxes), because only there can vertical writing or wrapped CJK lines need
assembling. Pages are streamed: no Page object outlives its turn.

After the last page, what needs the whole book is added to the units (their text never
changes, so locators stay valid): page furniture (running heads, folios, verse line numbers,
:mod:`.furniture`), printed page numbers inferred from the folios when the PDF has no page
labels (``label_inferred``), the ``contents`` role of printed contents pages
(:mod:`.contents`), the outline placed on the pages (a running head never takes an entry; a
section number printed before a title belongs to it), and the Markdown blocks. A PDF without a
metadata title (or with a file name there) takes its first heading: the largest type on the
first text page, else the first outline entry that names more than "Contents".

Reading order
    Blocks keep the content-stream order MuPDF reports. ``sort=True`` is not used: it orders
    blocks by their top edge, which interleaves the paragraphs of two columns, and it cost 8×
    a plain pass on the textbook fixture. Producers (LaTeX, Word, InDesign) write a two-column
    page column by column, so the stream order is the reading order, and a table's stream is
    row by row, as it should be read. When the order plainly is wrong (paragraph blocks step
    back *up* within one column at least three times and in 30 % of steps), the page is
    re-ordered geometrically: full-width blocks split the page into bands, and in each band
    the columns are read left to right, top to bottom.

Vertical Japanese (tategaki)
    MuPDF reports vertical glyphs as lines of one character each (``wmode`` 1, ``dir`` (0, 1)),
    so plain text is one character per line. A CJK page is vertical when at least 40 % of its
    characters sit on vertical lines (``wmode == 1`` or ``dir`` ≈ (0, 1)) or on one-glyph CJK
    lines stacked into narrow columns (glyphs drawn one by one). Its glyphs are assembled into
    columns (grouped by x, top to bottom); columns of a tier are read right to left, tiers top
    to bottom; glyphs are joined with no space or newline. A column that starts below the
    common column top (an indent) or follows one that stops short of the common bottom begins
    a new paragraph (a newline). Ruby (furigana: half-size kana beside a column, or above a
    horizontal line) is left out, as in EPUB, so phrases stay unbroken.

Horizontal CJK lines that run to the right edge and continue at the left edge of the next line
are joined without a newline; MuPDF often makes each such line its own block, so this is judged
across blocks. Raw text keeps ligatures and soft hyphens (normalisation folds them); C0 control
characters (unmapped maths glyphs) are dropped. The geometry itself (reading order, columns, ruby)
lives in :mod:`.layout`, which needs no PDF library.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ....core.errors import Code, CoreError
from ...model import Block, FurnitureSpan, SourceDocument, SourceUnit, TocEntry
from ...ocr import OcrPlan
from ...text import is_cjk, normalise, normalise_with_offsets
from .blocks import (
    book_compounds,
    emphasis_runs,
    font_headings,
    heading_levels,
    page_blocks,
    place_emphasis,
)
from .contents import ContentsJudge
from .furniture import BandLine, band_lines, find_furniture, infer_labels, verse_line_numbers
from .headings import heading_depth, looks_fused, numbered_bold_lines, spaced_text
from .layout import Box, PageText, assemble_cjk_page, join_blocks, reading_order
from .notes import SYMBOL_MARKERS, body_line_height, footnote_label, note_markers, sup_runs
from .tables import TableBudget, looks_tabular, merge_tables, page_tables

if TYPE_CHECKING:
    from ...ocr import OcrSession

__all__ = ["IMAGE_ONLY_REMEDIATION", "read_pdf"]

IMAGE_ONLY_REMEDIATION = (
    "OCR it first (e.g. ocrmypdf) or pass --allow-image-only to register it for rendering only"
)

# Read before the first import: when the user has chosen a destination, it is theirs to keep.
_USER_MESSAGE_SETTING = os.environ.get("PYMUPDF_MESSAGE")
_messages_routed = False

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_UNMAPPED = "\ufffd"
"""What MuPDF writes for a glyph its font maps to no Unicode (without
``TEXT_CID_FOR_UNKNOWN_UNICODE``, which would write the glyph id as a code point instead)."""
_CJK_HINT = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
# A page needs this many CJK characters before it pays for the dict pass.
_CJK_MIN = 4
_TABLE_SHARE = 0.15
"""Looking for ruled tables may cost this share of the time spent reading the pages (see
:mod:`.tables`)."""


def _pymupdf() -> Any:
    """Import PyMuPDF with its messages routed to stderr (stdout may carry JSON-RPC)."""
    global _messages_routed
    if "pymupdf" not in sys.modules and _USER_MESSAGE_SETTING is None:
        os.environ["PYMUPDF_MESSAGE"] = "fd:2"
    import pymupdf

    if not _messages_routed:
        # PyMuPDF may have been imported earlier, before the variable was set.
        if _USER_MESSAGE_SETTING is None:
            pymupdf.set_messages(fd=2)
        _messages_routed = True
    return pymupdf


# --- the document ----------------------------------------------------------------------------


def read_pdf(
    path: Path,
    *,
    progress: Callable[[int, int], None] | None = None,
    allow_image_only: bool = False,
    ocr: OcrPlan | None = None,
) -> SourceDocument:
    """Read a PDF into one unit per page, in reading order, with its outline.

    Args:
        path: the PDF file.
        progress: called with ``(pages done, total pages)`` after each page.
        allow_image_only: register a book with no text layer at all (for rendering only)
            instead of refusing it.
        ocr: read pages without a text layer (or every page) by OCR (:mod:`..ocr`); their
            units say ``text_source: ocr`` and carry the engine's label and figures.

    Raises:
        CoreError: ENCRYPTED_SOURCE (a password is needed), CORRUPT_SOURCE (cannot be opened
            or repaired), EMPTY_SOURCE (no pages, or no text layer without
            ``allow_image_only``).
    """
    pymupdf = _pymupdf()
    doc = _open(pymupdf, path)
    try:
        if ocr is None:
            return _read_document(pymupdf, doc, path, progress, allow_image_only, None)
        from ...ocr import OcrSession

        with OcrSession(path, ocr.engine, ocr.options) as session:
            return _read_document(pymupdf, doc, path, progress, allow_image_only,
                                  (ocr, session))
    finally:
        doc.close()


def _open(pymupdf: Any, path: Path) -> Any:
    try:
        doc = pymupdf.open(str(path), filetype="pdf")
    except Exception as exc:  # MuPDF raises FileDataError, RuntimeError or ValueError
        raise CoreError(
            Code.CORRUPT_SOURCE,
            "The PDF could not be opened; it is damaged or not a PDF.",
            details={"path": str(path), "reason": type(exc).__name__},
            remediation="Check the file opens in a PDF viewer, or re-export it from its source.",
        ) from None
    if doc.needs_pass:
        doc.close()
        raise CoreError(
            Code.ENCRYPTED_SOURCE,
            "The PDF is encrypted and needs a password to open.",
            details={"path": str(path)},
            remediation="Remove the password (e.g. qpdf --decrypt) and register the copy.",
        )
    if doc.page_count == 0:
        repaired = bool(getattr(doc, "is_repaired", False))
        doc.close()
        if repaired:
            raise CoreError(
                Code.CORRUPT_SOURCE,
                "The PDF is damaged: no page could be recovered from it.",
                details={"path": str(path), "reason": "no_pages_after_repair"},
                remediation="Re-download or re-export the PDF.",
            )
        raise CoreError(
            Code.EMPTY_SOURCE,
            "The PDF has no pages.",
            details={"path": str(path)},
            remediation="Register a PDF that has pages.",
        )
    return doc


@dataclass
class _Pages:
    """What the page loop of :func:`_read_document` gathers, page by page."""

    units: list[SourceUnit] = dataclasses.field(default_factory=list)
    no_text: list[int] = dataclasses.field(default_factory=list)
    vertical: list[int] = dataclasses.field(default_factory=list)
    reordered: list[int] = dataclasses.field(default_factory=list)
    failed: list[int] = dataclasses.field(default_factory=list)
    ruby: int = 0
    bands: dict[int, list[BandLine]] = dataclasses.field(default_factory=dict)
    # Latin pages: block spans, emphasis, heights and MuPDF's heading levels, for the
    # Markdown blocks built at the end.
    layouts: dict[int, _Layout] = dataclasses.field(default_factory=dict)
    # Pages that outline entries point into wait for the furniture (see _resolve_entries).
    held: dict[int, PageText] = dataclasses.field(default_factory=dict)
    # Ruled tables (see .tables), searched on grid-like pages within a time budget.
    tables: dict[int, tuple[Block, ...]] = dataclasses.field(default_factory=dict)
    tables_unsearched: list[int] = dataclasses.field(default_factory=list)
    """Grid-like pages left unsearched: the budget was spent."""
    notes: dict[int, list[FurnitureSpan]] = dataclasses.field(default_factory=dict)
    """Note markers (see .notes)."""
    unmapped: dict[int, int] = dataclasses.field(default_factory=dict)
    """Page → glyphs without Unicode read as word breaks."""
    ocr_read: dict[int, dict[str, Any]] = dataclasses.field(default_factory=dict)
    """Page → what OCR says about the page it read."""
    ocr_failed: dict[int, str] = dataclasses.field(default_factory=dict)
    """Page → why OCR could not read it."""


def _read_document(
    pymupdf: Any,
    doc: Any,
    path: Path,
    progress: Callable[[int, int], None] | None,
    allow_image_only: bool,
    ocr: tuple[OcrPlan, OcrSession] | None,
) -> SourceDocument:
    total = doc.page_count
    warnings: list[str] = []
    outline, pending = _outline(doc, total, warnings)
    has_labels = bool(_safe(doc.get_page_labels, []))
    pages = _read_pages(pymupdf, doc, has_labels, pending, progress, ocr)
    warnings += _page_warnings(pages, total, path, allow_image_only, ocr)
    return _assemble(doc, pages, outline, pending, has_labels, warnings)


def _read_pages(
    pymupdf: Any,
    doc: Any,
    has_labels: bool,
    pending: dict[int, list[int]],
    progress: Callable[[int, int], None] | None,
    ocr: tuple[OcrPlan, OcrSession] | None,
) -> _Pages:
    """Every page read in turn (streamed: no Page object outlives its turn)."""
    total = doc.page_count
    # Glyph ids are not text: an unmapped glyph comes as U+FFFD and becomes a word break.
    flags = pymupdf.TEXTFLAGS_TEXT & ~pymupdf.TEXT_CID_FOR_UNKNOWN_UNICODE
    pages = _Pages()
    budget = TableBudget(_TABLE_SHARE)
    for index in range(total):
        label, extracted, height = _read_page(doc, index, has_labels, flags, budget, ocr, pages)
        _add_page(pages, index, label, extracted, height, pending)
        if progress is not None:
            progress(index + 1, total)
    return pages


def _read_page(
    doc: Any, index: int, has_labels: bool, flags: int, budget: TableBudget,
    ocr: tuple[OcrPlan, OcrSession] | None, pages: _Pages,
) -> tuple[str | None, PageText, float]:
    """One page's label, text and height; a damaged page is an empty one (and ``failed``)."""
    label: str | None = None
    try:
        page = doc.load_page(index)
        if has_labels:
            label = _clean_label(page.get_label())
        read_at = time.perf_counter()
        extracted = _extract_page(page, flags)
        budget.earn(read_at)
        if ocr is not None and (ocr[0].options.mode == "all" or not extracted.text.strip()):
            try:
                extracted = _ocr_page(page, extracted, ocr, pages.ocr_read, pages.ocr_failed)
            except Exception as exc:  # OCR failing on a page must not sink the book
                pages.ocr_failed[index] = f"OCR failed: {type(exc).__name__}"
        if extracted.emphasis is not None:
            if budget.left <= 0 and looks_tabular(extracted.text, extracted.pieces):
                pages.tables_unsearched.append(index)
            found = page_tables(page, extracted.text, extracted.pieces, budget)
            if found:
                pages.tables[index] = found
        height = float(page.rect.height)
        del page  # stream: never hold Page objects past their turn
    except Exception:  # a damaged page must not sink the book
        pages.failed.append(index)
        extracted = PageText("", [])
        height = 0.0
    return label, extracted, height


def _add_page(pages: _Pages, index: int, label: str | None, extracted: PageText,
              height: float, pending: dict[int, list[int]]) -> None:
    """The page's unit, and what the whole book needs of it later."""
    has_text = bool(extracted.text.strip())
    if not has_text:
        pages.no_text.append(index)
    if extracted.vertical:
        pages.vertical.append(index)
    if extracted.reordered:
        pages.reordered.append(index)
    pages.ruby += extracted.ruby
    if has_text:
        band = band_lines(extracted, height)
        if band:
            pages.bands[index] = band
    pages.units.append(
        SourceUnit(
            kind="pdf_page",
            index=index,
            text=extracted.text,
            label=label,
            has_text_layer=has_text,
            writing_mode="vertical" if extracted.vertical else "horizontal",
            text_source="ocr" if index in pages.ocr_read else "file",
            ocr=pages.ocr_read.get(index) or (
                {"status": "failed", "reason": pages.ocr_failed[index]}
                if index in pages.ocr_failed else None),
        )
    )
    if index in pending or index - 1 in pending:  # an anchor may fall a page early
        pages.held[index] = extracted
    if has_text and extracted.emphasis is not None:
        pages.layouts[index] = _Layout(
            [(s, e) for s, e, _y0, _y1 in extracted.pieces],
            extracted.emphasis,
            [y1 - y0 for _s, _e, y0, y1 in extracted.pieces],
            extracted.levels or [],
            extracted.notes,
            {extracted.pieces[n][0]: label for n, label in extracted.footnotes.items()},
            extracted.columns,
        )
    if extracted.notes:
        pages.notes[index] = [(s, e, "note_ref") for s, e, _label in extracted.notes]
    if extracted.unmapped:
        pages.unmapped[index] = extracted.unmapped


def _page_warnings(pages: _Pages, total: int, path: Path, allow_image_only: bool,
                   ocr: tuple[OcrPlan, OcrSession] | None) -> list[str]:
    """What the pages say about the book (OCR, no text layer, damage, vertical writing, ruby,
    tables, order, glyphs); an image-only or wholly unreadable book is refused here."""
    warnings: list[str] = []
    if pages.ocr_read:
        plan = ocr[0] if ocr is not None else None
        confidences = [r["mean_word_confidence"] for r in pages.ocr_read.values()
                       if r.get("mean_word_confidence") is not None]
        warnings.append(
            f"{len(pages.ocr_read)} pages were read by OCR ({_page_list(sorted(pages.ocr_read))}), "
            f"language {plan.options.language if plan else '?'}"
            + (f", mean word confidence {sum(confidences) / len(confidences):.0f}"
               if confidences else "")
            + ": their text is machine-read, not the publisher's (text_source: ocr).")
    if pages.ocr_failed:
        shown = "; ".join(f"index {i}: {why}" for i, why in sorted(pages.ocr_failed.items())[:5])
        warnings.append(f"OCR could not read {len(pages.ocr_failed)} pages; they stay image-only "
                        f"({shown}).")
    no_text, failed = pages.no_text, pages.failed
    if len(no_text) == total:
        if failed:
            raise CoreError(
                Code.CORRUPT_SOURCE,
                "The PDF is damaged: none of its pages could be read.",
                details={"path": str(path), "pages": total},
                remediation="Re-download or re-export the PDF.",
            )
        if not allow_image_only:
            raise CoreError(
                Code.EMPTY_SOURCE,
                "The PDF has no text layer on any page (an image-only book).",
                details={"path": str(path), "pages": total},
                remediation=IMAGE_ONLY_REMEDIATION,
            )
        warnings.append("No page has a text layer; the book is registered for rendering only.")
    elif no_text:
        warnings.append(
            f"{len(no_text)} of {total} pages have no text layer (scanned or blank): "
            f"{_page_list(no_text)}; they render but cannot be searched."
        )
    if failed:
        warnings.append(f"{len(failed)} pages could not be read: {_page_list(failed)}.")
    if pages.vertical:
        warnings.append(
            f"{len(pages.vertical)} pages are set vertically; their columns were read right to "
            f"left and joined: {_page_list(pages.vertical)}."
        )
    if pages.ruby:
        warnings.append(
            f"{pages.ruby} ruby (furigana) characters beside the text were left out of the raw "
            "text."
        )
    if pages.tables_unsearched:
        warnings.append(
            f"Ruled-table search stopped at its time budget (a share of the reading time); "
            f"{len(pages.tables_unsearched)} pages laid out like tables were not searched "
            f"({_page_list(pages.tables_unsearched)}): tables there, if any, read as text in "
            "book.md (render the page to see them)."
        )
    if pages.reordered:
        warnings.append(
            f"{len(pages.reordered)} pages had an implausible content order and were re-read by "
            f"columns: {_page_list(pages.reordered)}."
        )
    if pages.unmapped:
        unmapped = sorted(pages.unmapped)
        warnings.append(
            f"{sum(pages.unmapped.values())} glyphs on {len(unmapped)} pages have no Unicode in "
            f"their font ({_page_list(unmapped)}): they were read as word breaks, not as text.")
    return warnings


def _assemble(doc: Any, pages: _Pages, outline: list[_OutlineItem],
              pending: dict[int, list[int]], has_labels: bool,
              warnings: list[str]) -> SourceDocument:
    """After the last page: furniture, the outline placed, the title, the contents, the
    Markdown blocks and the metadata."""
    total = doc.page_count
    units = _furnish(pages.units, pages.bands, outline, has_labels, pages.notes)
    furniture = {u.index: u.furniture for u in units if u.furniture}
    resolution = _resolve_entries(outline, pending, pages.held, furniture,
                                  _continued_pages(units))
    resolved = resolution.entries
    if resolution.unfurnish:
        units = [dataclasses.replace(u, furniture=tuple(
            f for f in u.furniture if (f[0], f[1]) not in resolution.unfurnish[u.index]))
            if u.index in resolution.unfurnish else u for u in units]
    if resolution.renamed:
        shown = "; ".join(f"{a!r} → {b!r}" for a, b in resolution.renamed[:5])
        warnings.append(
            f"{len(resolution.renamed)} outline titles differ from the headings printed at "
            f"their destinations; the printed headings were kept: {shown}"
            + (" …" if len(resolution.renamed) > 5 else "") + ".")
    meta = _safe(lambda: doc.metadata, None) or {}
    title = _metadata_title(meta.get("title"))
    if title is None and len(pages.no_text) < total:
        title = _heading_title(doc, units, outline)
    toc: list[TocEntry] = [resolved[n] for n in sorted(resolved)]
    ends: dict[int, dict[int, int]] = {}
    if not outline:
        toc, ends = _layout_toc(doc, units, pages.layouts)
    units = _with_blocks(units, pages.layouts, toc or None, pages.tables,
                         resolution.headings if outline else None, ends)
    if not has_labels and any(u.label_inferred for u in units):
        warnings.append(
            "The PDF has no page labels; printed page numbers were inferred from the folios."
        )
    author = (meta.get("author") or "").strip()
    authors = tuple(a.strip() for a in author.split(";") if a.strip())
    metadata = {
        key: str(meta[key]).strip()
        for key in ("format", "producer", "creator", "subject", "keywords")
        if meta.get(key) and str(meta[key]).strip()
    }
    metadata["page_count"] = str(total)
    return SourceDocument(
        format="pdf",
        units=tuple(units),
        toc=tuple(toc),
        title=title,
        authors=authors,
        language=_language(doc),
        warnings=tuple(warnings),
        metadata=metadata,
    )


# A page-label prefix written as a hex string (<FEFF0031>) comes back undecoded.
_HEX_UTF16 = re.compile(r"<FEFF((?:[0-9A-Fa-f]{4})+)>")


def _clean_label(label: str | None) -> str | None:
    """A page label as printed: hex UTF-16 strings decoded, blank labels dropped."""
    if label and "<FEFF" in label.upper():
        label = _HEX_UTF16.sub(
            lambda m: bytes.fromhex(m.group(1)).decode("utf-16-be", "replace"),
            label.replace("<feff", "<FEFF"),
        )
    return (label or "").strip() or None


def _safe(call: Callable[[], Any], default: Any) -> Any:
    try:
        return call()
    except Exception:
        return default


def _page_list(indices: list[int], limit: int = 12) -> str:
    shown = ", ".join(str(i) for i in indices[:limit])
    return f"indices {shown}" + (" …" if len(indices) > limit else "")


def _language(doc: Any) -> str | None:
    kind, value = _safe(lambda: doc.xref_get_key(doc.pdf_catalog(), "Lang"), ("null", "null"))
    if kind != "string":
        return None
    return value.strip() or None


# --- furniture, printed page numbers, contents pages, the title ----------------------------


def _furnish(
    units: list[SourceUnit],
    bands: dict[int, list[BandLine]],
    outline: list[_OutlineItem],
    has_labels: bool,
    notes: dict[int, list[FurnitureSpan]] | None = None,
) -> list[SourceUnit]:
    """The units with their furniture spans, inferred labels and contents role added
    (``notes``: note markers found on each page).

    Only spans, labels and roles change: every unit keeps its text, so locators stay valid.
    """
    text_pages = sum(1 for u in units if u.has_text_layer)
    spans, folios = find_furniture(bands, text_pages)
    lines = verse_line_numbers([(u.index, u.text, spans.get(u.index, ())) for u in units
                                if u.has_text_layer])
    labels = {} if has_labels else infer_labels(folios, len(units))
    judge = ContentsJudge(item.title for item in outline)
    out: list[SourceUnit] = []
    for unit in units:
        found = spans.get(unit.index, [])
        changes: dict[str, Any] = {}
        if unit.has_text_layer and judge.judge(unit.text, found):
            changes["role"] = "contents"
        else:
            # A contents page's numbers are page references, not verse line numbers.
            found = sorted(found + lines.get(unit.index, []) + (notes or {}).get(unit.index, []))
        if found:
            changes["furniture"] = tuple(found)
        if unit.index in labels:
            changes["label"] = labels[unit.index]
            changes["label_inferred"] = True
        out.append(dataclasses.replace(unit, **changes) if changes else unit)
    return out


_SENTENCE_END = frozenset(".!?:;\"”’»)]…。！？」』")


def _continued_pages(units: Sequence[SourceUnit]) -> set[int]:
    """Pages whose first line continues the sentence the text page before them ends in."""
    out: set[int] = set()
    prev = ""
    for unit in units:
        if not unit.has_text_layer:
            prev = ""
            continue
        head = unit.text.lstrip()[:1]
        if prev and head and (head.islower() or prev[-1] not in _SENTENCE_END):
            out.add(unit.index)
        # Furniture at the foot (a folio) is not where the sentence ends.
        body = unit.text
        for s, e, kind in reversed(unit.furniture):
            if kind in ("folio", "running_head") and not body[e:].strip():
                body = body[:s]
        prev = body.rstrip()
    return out


@dataclass(frozen=True, slots=True)
class _Layout:
    """What a Latin page keeps for its Markdown blocks, per piece (text block)."""

    spans: list[tuple[int, int]]
    emphasis: list[list[Any]]
    heights: list[float]
    levels: list[int]
    notes: list[tuple[int, int, str]] = dataclasses.field(default_factory=list)
    """Note markers ``(start, end, label)`` of the page."""
    footnotes: dict[int, tuple[str, ...]] = dataclasses.field(default_factory=dict)
    """Raw start of a footnote block → the labels of its footnotes."""
    columns: bool = False
    """The page is set in columns."""


def _with_blocks(
    units: list[SourceUnit], layouts: dict[int, _Layout], toc: Any,
    tables: dict[int, tuple[Block, ...]] | None = None,
    printed: set[tuple[int, int]] | None = None,
    ends: dict[int, dict[int, int]] | None = None,
) -> list[SourceUnit]:
    """The units with their Markdown blocks (see :mod:`.blocks`); text unchanged.

    Headings are the outline's entries that start at a printed heading (``printed``:
    ``(page, offset)``; None: all of them); a PDF without an outline takes them from type
    size.
    """
    headings: dict[int, dict[int, int]] = {}
    if toc:
        for entry in toc:
            if printed is None or (entry.unit_index, entry.char_offset) in printed:
                headings.setdefault(entry.unit_index, {}).setdefault(entry.char_offset,
                                                                     entry.level)
    else:
        headings = font_headings(
            {i: (lay.spans, lay.heights, lay.levels) for i, lay in layouts.items()},
            {u.index: u.text for u in units if u.index in layouts},
        )
    labels = [label for lay in layouts.values() for group in lay.footnotes.values()
              for label in group]
    qualify = len(labels) != len(set(labels))  # footnote labels repeat: name them by page

    def md_label(index: int, label: str) -> str:
        return f"{label}.p{index}" if qualify else label

    measure = _measure(units, layouts)
    compounds = book_compounds(u.text for u in units)
    out = []
    for unit in units:
        layout = layouts.get(unit.index)
        if layout is None:
            out.append(unit)
            continue
        kept = {(s, e) for s, e, kind in unit.furniture if kind == "note_ref"}
        here = {label for group in layout.footnotes.values() for label in group}
        notes = {s: (e, md_label(unit.index, label)) for s, e, label in layout.notes
                 if (s, e) in kept and label in here}
        footnotes = {at: tuple(md_label(unit.index, label) for label in group)
                     for at, group in layout.footnotes.items()}
        blocks = page_blocks(unit.text, layout.spans, layout.emphasis, unit.furniture,
                             headings.get(unit.index), contents=unit.role == "contents",
                             kinds=layout.levels, notes=notes, footnotes=footnotes,
                             heading_ends=(ends or {}).get(unit.index),
                             measure=None if layout.columns else measure,
                             compounds=compounds)
        if tables and tables.get(unit.index):
            blocks = merge_tables(blocks, tables[unit.index])
        out.append(dataclasses.replace(unit, blocks=blocks) if blocks else unit)
    return out


def _measure(units: list[SourceUnit], layouts: dict[int, _Layout]) -> int | None:
    """The book's prose line length in characters: the median, over pages set in one column,
    of the longest line of each block of three or more lines; None without such blocks."""
    widths = []
    for index, layout in layouts.items():
        if layout.columns:
            continue
        text = units[index].text
        widths += [max(len(line) for line in text[s:e].split("\n")) for s, e in layout.spans
                   if text.count("\n", s, e) >= 2]
    return int(statistics.median(widths)) if widths else None


def _layout_toc(
    doc: Any, units: list[SourceUnit], layouts: dict[int, _Layout]
) -> tuple[list[TocEntry], dict[int, dict[int, int]]]:
    """Contents entries of a PDF without an outline, from its printed headings (see
    :mod:`.headings`), and where each heading's text ends, per page.

    Running heads and contents pages give none. A heading whose words look fused is spelt
    with the spaces its glyph positions show.
    """
    body = {i: lay for i, lay in layouts.items() if units[i].role == "body"}
    texts = {i: units[i].text for i in body}
    by_size = font_headings({i: (lay.spans, lay.heights, lay.levels) for i, lay in body.items()},
                            texts)
    # (page, offset) → (end, section number depth or None, MuPDF level, line height)
    found: dict[tuple[int, int], tuple[int, int | None, int, float]] = {}
    for index, lay in body.items():
        text = texts[index]
        for start, end, depth in numbered_bold_lines(text, lay.spans, lay.emphasis):
            found[(index, start)] = (end, depth, 0, _piece_height(lay, text, start))
        for start, size_level in by_size.get(index, {}).items():
            if (index, start) not in found:
                line_end = text.find("\n", start)
                end = len(text) if line_end < 0 else line_end
                found[(index, start)] = (end, heading_depth(text[start:end]), size_level,
                                         _piece_height(lay, text, start))
    # Numbered headings take their depth; unnumbered ones MuPDF's level, except that type
    # larger than the numbered sections' (a paper's title) ranks above them.
    tops = [h for _e, d, _l, h in found.values() if d == 1]
    top = statistics.median(tops) if tops else 0.0
    above = sorted({lvl for _e, d, lvl, h in found.values()
                    if d is None and tops and h > 1.15 * top})
    toc: list[TocEntry] = []
    ends: dict[int, dict[int, int]] = {}
    for (index, start), (end, numbered, mupdf, height) in sorted(found.items()):
        unit = units[index]
        if _in_furniture(start, unit.furniture):
            continue
        if numbered is not None:
            level = numbered + len(above)
        elif not tops:
            level = mupdf
        elif mupdf in above and height > 1.15 * top:
            level = above.index(mupdf) + 1
        else:
            level = len(above) + 1
        title = " ".join(unit.text[start:end].split())
        if looks_fused(title):
            title = _safe(partial(_spaced_line, doc, index, unit.text, start, end), title)
        if title:
            toc.append(TocEntry(title=title, level=min(max(level, 1), 6), unit_index=index,
                                char_offset=start))
            ends.setdefault(index, {})[start] = end
    return toc, ends


def _piece_height(layout: _Layout, text: str, offset: int) -> float:
    """The line height of the block holding ``offset``."""
    for (s, e), height in zip(layout.spans, layout.heights, strict=False):
        if s <= offset < e:
            return height / (text.count("\n", s, e) + 1)
    return 0.0


def _spaced_line(doc: Any, index: int, text: str, start: int, end: int) -> str:
    """The line ``[start, end)`` of a page spelt from its glyphs, with word spaces rebuilt."""
    raw = " ".join(text[start:end].split())
    page = doc.load_page(index)
    squeezed = _squeeze(raw)
    for block in page.get_text("rawdict", flags=0).get("blocks", ()):
        for line in block.get("lines", ()):
            glyphs = [(ch["bbox"][0], ch["bbox"][2], ch["c"], float(sp.get("size", 0)))
                      for sp in line.get("spans", ()) for ch in sp.get("chars", ())]
            if _squeeze("".join(g[2] for g in glyphs)).strip() == squeezed:
                return spaced_text(glyphs)
    return raw


# Metadata titles that name a file or a template rather than the book.
_JUNK_TITLE = re.compile(
    r"(?:untitled|title|document|unknown|none|null|\s*)"
    r"|(?:microsoft (?:word|powerpoint) - ).*"
    r"|.*\.(?:pdf|docx?|odt|rtf|tex|dvi|ps|indd|qxd|pages|txt)",
    re.IGNORECASE,
)


def _metadata_title(value: object) -> str | None:
    title = " ".join(str(value or "").split())
    return None if _JUNK_TITLE.fullmatch(title) else title


def _heading_title(doc: Any, units: list[SourceUnit], outline: list[_OutlineItem]) -> str | None:
    """The book's first heading: the largest type on the first text page, else the outline's
    first entry (the service falls back to the file name only when neither exists)."""
    first = next((u for u in units if u.has_text_layer and u.role == "body"), None)
    if first is not None and first.writing_mode != "vertical":
        title = _safe(lambda: _largest_line(doc.load_page(first.index)), None)
        if title:
            return title
    for item in outline:
        # "Contents" or "Cover" heads many outlines but names no book.
        if units[item.page].role == "body" and not _GENERIC_HEADING.fullmatch(item.title):
            return item.title
    return None


_GENERIC_HEADING = re.compile(
    r"(?:table of )?contents|cover|title ?page|titel(?:blatt|seite)?|copyright|impressum|"
    r"inhalt(?:sverzeichnis)?|table des mati[eè]res|sommaire|[íi]ndice|目次|目\s次|"
    r"front ?matter|half ?title",
    re.IGNORECASE,
)


def _largest_line(page: Any) -> str | None:
    """The lines set in the page's largest type, when that type stands out from the body.

    Word spaces fused by tight kerning are rebuilt from the glyph positions
    (:func:`.headings.spaced_text`).
    """
    data = page.get_text("rawdict", flags=0)
    lines: list[tuple[float, str]] = []
    weights: list[tuple[float, int]] = []
    for block in data.get("blocks", ()):
        for line in block.get("lines", ()):
            glyphs = [(ch["bbox"][0], ch["bbox"][2], ch["c"], float(sp.get("size", 0)))
                      for sp in line.get("spans", ()) for ch in sp.get("chars", ())]
            text = _clean_text("".join(g[2] for g in glyphs)).strip()
            if not text:
                continue
            if looks_fused(text):
                text = _clean_text(spaced_text(glyphs)).strip()
            sizes = [(float(sp.get("size", 0)), len(sp.get("chars", ())))
                     for sp in line.get("spans", ()) if sp.get("chars")]
            lines.append((max(size for size, _n in sizes), text))
            weights.extend(sizes)
    if not lines:
        return None
    body = statistics.median([size for size, n in weights for _ in range(min(n, 200))])
    top = max(size for size, _ in lines)
    if top < 1.15 * body:
        return None
    picked: list[str] = []
    for size, text in lines:
        if size >= top - 0.5:
            picked.append(text)
        elif picked:
            break
    title = " ".join(" ".join(picked).split())[:200]
    return title if sum(ch.isalpha() for ch in title) >= 2 else None


# --- the outline -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _OutlineItem:
    level: int
    title: str
    page: int
    dest_y: float | None
    """The destination's y in MuPDF page space (y down), when the outline gives one."""


def _outline(
    doc: Any, total: int, warnings: list[str]
) -> tuple[list[_OutlineItem], dict[int, list[int]]]:
    """The outline items that point into the document, and their numbers grouped by page."""
    try:
        toc = doc.get_toc(simple=True)
    except Exception:
        warnings.append("The PDF outline could not be read; the book has no contents.")
        return [], {}
    ys = _outline_ys(doc, len(toc))
    items: list[_OutlineItem] = []
    pending: dict[int, list[int]] = {}
    skipped = 0
    for (level, title, page), dest_y in zip(toc, ys, strict=True):
        title = " ".join(str(title).split())
        if not title or not 1 <= page <= total:
            skipped += 1
            continue
        pending.setdefault(page - 1, []).append(len(items))
        items.append(_OutlineItem(max(1, int(level)), title, page - 1, dest_y))
    if skipped:
        warnings.append(f"{skipped} outline entries have no title or no page here; skipped.")
    return items, pending


def _outline_ys(doc: Any, count: int) -> list[float | None]:
    """Each outline item's destination y, in ``get_toc`` order; all None if unavailable.

    ``get_toc(simple=False)`` would give them too, but it resolves every named destination in
    Python (40 % of a whole read of the textbook); MuPDF's outline walk has them resolved
    already. The walk mirrors ``get_toc``'s own, null check included.
    """
    ys: list[float | None] = []
    try:
        stack = [doc.outline]
        while stack and len(ys) <= count:
            node = stack.pop()
            if node is None or not node.this.m_internal:
                continue
            y = node.y
            ys.append(float(y) if isinstance(y, int | float) and math.isfinite(y) else None)
            # Depth first in document order: the sibling waits under the children.
            stack.append(node.next)
            stack.append(node.down)
    except Exception:
        ys = []
    return ys if len(ys) == count else [None] * count


@dataclass(slots=True)
class _Resolution:
    """The outline placed on the pages."""

    entries: dict[int, TocEntry] = dataclasses.field(default_factory=dict)
    """Outline item number → its entry (title, page, offset)."""
    headings: set[tuple[int, int]] = dataclasses.field(default_factory=set)
    """``(page, offset)`` of entries that start at a printed heading (shown as one)."""
    unfurnish: dict[int, set[tuple[int, int]]] = dataclasses.field(default_factory=dict)
    """Page → furniture spans that are a heading an entry points at (not a running head)."""
    renamed: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    """``(outline title, printed heading)`` where the printed heading was kept."""


@dataclass(frozen=True, slots=True)
class _Placement:
    offset: int
    heading: bool
    """A printed heading starts at ``offset`` (its block is shown as a heading)."""
    title: str | None = None
    """The printed heading, where it differs from the outline title (or adds its number)."""
    unfurnish: tuple[tuple[int, int], ...] = ()
    found: bool = False
    """The entry's own title is printed as a heading at ``offset``."""


def _resolve_entries(
    outline: list[_OutlineItem],
    pending: dict[int, list[int]],
    held: dict[int, PageText],
    furniture: dict[int, tuple[FurnitureSpan, ...]],
    continues: set[int] | None = None,
) -> _Resolution:
    """Each outline entry placed on its page, in order (an entry's floor is the one before).

    ``continues``: pages whose first line continues the previous page's sentence.
    """
    out = _Resolution()
    for index, numbers in pending.items():
        page = held.get(index, PageText("", []))
        spans = furniture.get(index, ())
        floor = 0
        titles = {_squeeze(normalise(_strip_number(outline[n].title))) for n in numbers}
        for number in numbers:
            item = outline[number]
            others = titles - {_squeeze(normalise(_strip_number(item.title)))}
            placed = _place_entry(item, page, floor, spans,
                                  continues=index in (continues or ()), others=others)
            where = index
            if not placed.found and index + 1 in held:
                # The anchor fell on the page before the heading (LaTeX sets it before the
                # page break): the heading at the top of the next page is the entry's.
                early = _early_heading(item, held[index + 1], furniture.get(index + 1, ()))
                if early is not None:
                    placed, where = early, index + 1
            title = placed.title or item.title
            if placed.title and _squeeze(normalise(_strip_number(placed.title))) != _squeeze(
                    normalise(_strip_number(item.title))):
                out.renamed.append((item.title, placed.title))
            out.entries[number] = TocEntry(title=title, level=item.level, unit_index=where,
                                           char_offset=placed.offset)
            if placed.heading:
                out.headings.add((where, placed.offset))
            if placed.unfurnish:
                out.unfurnish.setdefault(where, set()).update(placed.unfurnish)
            if where == index:
                floor = placed.offset
    return out


def _early_heading(item: _OutlineItem, page: PageText,
                   furniture: tuple[FurnitureSpan, ...]) -> _Placement | None:
    """The entry's heading among the first lines of the next page, if it is printed there."""
    top = dataclasses.replace(item, dest_y=None)
    placed = _place_entry(top, page, 0, furniture)
    lines = _lines_of(page)
    head = lines[min(len(lines), 4) - 1][1] if lines else 0
    return placed if placed.found and placed.offset <= head else None


def _resolve_entry(
    item: _OutlineItem, page: PageText, floor: int, furniture: tuple[FurnitureSpan, ...] = ()
) -> TocEntry:
    """One entry placed on its page (see :func:`_place_entry`)."""
    placed = _place_entry(item, page, floor, furniture)
    return TocEntry(title=placed.title or item.title, level=item.level, unit_index=item.page,
                    char_offset=placed.offset)


def _squeeze(text: str) -> str:
    return text.replace(" ", "")


def _strip_number(title: str) -> str:
    match = _SECTION_PREFIX.match(title)
    return title[match.end():] if match and match.end() < len(title) else title


def _lines_of(page: PageText) -> list[tuple[int, int, float, float, int]]:
    """Each line of the page: ``(start, end, top, bottom, piece number)``; a block's height
    is shared out evenly among its lines."""
    out = []
    for n, (start, end, y0, y1) in enumerate(page.pieces):
        parts = page.text[start:end].split("\n")
        height = (y1 - y0) / len(parts)
        pos = start
        for k, part in enumerate(parts):
            out.append((pos, pos + len(part), y0 + k * height, y0 + (k + 1) * height, n))
            pos += len(part) + 1
    return out


def _in_furniture(offset: int, furniture: Sequence[FurnitureSpan]) -> bool:
    return any(s <= offset < e for s, e, _k in furniture)


def _place_entry(
    item: _OutlineItem,
    page: PageText,
    floor: int,
    furniture: tuple[FurnitureSpan, ...] = (),
    *,
    continues: bool = False,
    others: set[str] | frozenset[str] = frozenset(),
) -> _Placement:
    """Where an outline entry starts on its page, and whether a printed heading is there.

    1. The printed heading that has the entry's title: a line that is the title (after a
       section number), or starts with it and a full stop or colon (a run-in heading); not
       a mention of the title inside a sentence. Several: prefer those outside page
       furniture, at or after the previous entry, then the one nearest the destination.
       A heading that page furniture took for a running head is one when the destination
       points at it.
    2. Else, at the destination (``/XYZ`` y): the first line there. A line that looks like
       a heading (short, bold or set large) is the printed heading, kept as the entry's
       title, unless it is the heading of another entry of the page (``others``, squeezed
       folded titles); a line continuing the previous page's sentence is never one (the
       entry goes to the first heading or paragraph after it).
    3. Else (no destination): the previous entry's place, or the top of the page.

    A section number printed before the heading ("1.2 Foo", "3" on the line above) belongs
    to it: the offset points at the number, and the title carries it.
    """
    if not page.text:
        return _Placement(0, False)
    dest_y = None if page.vertical else item.dest_y
    starts = _title_matches(item.title, page.text)
    good = [c for c in starts if _heads_line(c, item.title, page.text)]
    body = [c for c in good if not _in_furniture(c, furniture)]
    unfurnish: tuple[tuple[int, int], ...] = ()
    candidates = body
    if not candidates and good and dest_y is not None and page.pieces:
        candidates = [c for c in good
                      if _distance(page, c, dest_y) <= 2 * _line_height(page, c)]
    if candidates:
        after = [c for c in candidates if c >= floor] or candidates
        if dest_y is not None and page.pieces:
            chosen = min(after, key=lambda c: (_distance(page, c, dest_y), c))
        else:
            chosen = after[0]
        if _in_furniture(chosen, furniture):
            # The destination points at it: a heading repeated on every page, not a head.
            unfurnish = _line_furniture(page, chosen, furniture)
            furniture = tuple(f for f in furniture if (f[0], f[1]) not in unfurnish)
            above = page.text.rfind("\n", 0, page.text.rfind("\n", 0, chosen)) + 1
            number = _line_furniture(page, above, furniture)
            line = page.text[above:page.text.find("\n", above)]
            if number and _SECTION_PREFIX.fullmatch(line):
                unfurnish += number
                furniture = tuple(f for f in furniture if (f[0], f[1]) not in number)
        offset = _with_section_number(page, chosen, floor, furniture)
        title = None
        if offset < chosen and not _SECTION_PREFIX.match(item.title):
            printed = " ".join(page.text[offset:chosen].split())
            title = f"{printed} {item.title}"
        return _Placement(offset, True, title, unfurnish, found=True)
    lines = _lines_of(page)
    # A title ending a short line of its own ("See Introduction") stands where a heading
    # would; one inside a sentence does not.
    mentions = [c for c in starts if c >= floor and not _in_furniture(c, furniture)
                and _ends_short_line(page.text, c, item.title)]
    if dest_y is None or not lines or (mentions and dest_y < lines[0][2] - 1):
        # No destination (or only the page's top): where the title is mentioned (not shown
        # as a heading), else the previous entry's place.
        return _Placement(mentions[0] if mentions else floor, False)
    below = [ln for ln in lines if ln[3] > dest_y + 1 and ln[0] >= floor
             and page.text[ln[0]:ln[1]].strip() and not _in_furniture(ln[0], furniture)]
    if not below:
        return _Placement(floor, False)
    first = below[0]
    if continues and first[4] == 0:
        # The page's first paragraph ends the previous page's sentence: look past it.
        below = [ln for ln in below if ln[4] != 0]
        if not below:
            return _Placement(floor, False)
        first = below[0]
        if not _heading_line(page, first):
            return _Placement(page.pieces[first[4]][0], False)
    if _heading_line(page, first):
        offset = _with_section_number(page, first[0], floor, furniture)
        printed = " ".join(page.text[offset:first[1]].split())
        if _squeeze(normalise(_strip_number(printed))) in others:
            # Another entry's heading (a part and its first chapter point at one place):
            # this entry starts there too, under its own title.
            return _Placement(offset, False)
        return _Placement(offset, True, printed)
    return _Placement(first[0], False)


def _ends_short_line(text: str, offset: int, title: str) -> bool:
    line_start = text.rfind("\n", 0, offset) + 1
    line_end = text.find("\n", offset)
    line = text[line_start:len(text) if line_end < 0 else line_end]
    tail = _squeeze(normalise(text[offset:len(text) if line_end < 0 else line_end]))
    return len(line.strip()) <= 60 and tail == _squeeze(normalise(title))


def _title_matches(title: str, text: str) -> list[int]:
    """Raw offsets where ``title`` occurs in ``text`` (normalised match, spaces optional)."""
    folded, offsets = normalise_with_offsets(text)
    needle = normalise(title)
    starts = _find_all(folded, needle)
    if not starts:
        # Extraction can drop or add spaces ("1.1Topologische"); match without them.
        squeezed, keep = _without_spaces(folded)
        hits = _find_all(squeezed, needle.replace(" ", ""))
        starts = [keep[h] for h in hits]
    return [offsets[s] for s in starts]


_RUN_IN = frozenset(".:\u2013\u2014")


def _heads_line(offset: int, title: str, text: str) -> bool:
    """Whether the title found at ``offset`` is its line's heading: the line holds only the
    title (after a section number), or begins with it and a full stop or colon; a title may
    run on over the next line."""
    line_start = text.rfind("\n", 0, offset) + 1
    prefix = text[line_start:offset]
    if prefix.strip() and not _SECTION_PREFIX.fullmatch(prefix):
        return False
    want = _squeeze(normalise(title))
    end = offset
    for _ in range(3):  # the title's line, and up to two more it runs on to
        nxt = text.find("\n", end + 1 if end > offset else end)
        end = len(text) if nxt < 0 else nxt
        folded = _squeeze(normalise(text[offset:end]))
        if folded.startswith(want):
            tail = folded[len(want):]
            return not tail or tail[0] in _RUN_IN or not any(ch.isalnum() for ch in tail)
        if end >= len(text) or not want.startswith(folded):
            return False
    return False


def _line_height(page: PageText, offset: int) -> float:
    for start, end, y0, y1 in page.pieces:
        if start <= offset <= end:
            return (y1 - y0) / (page.text.count("\n", start, end) + 1)
    return 12.0


def _line_furniture(page: PageText, offset: int,
                    furniture: Sequence[FurnitureSpan]) -> tuple[tuple[int, int], ...]:
    """The running-head spans on the line at ``offset``."""
    line_start = page.text.rfind("\n", 0, offset) + 1
    line_end = page.text.find("\n", offset)
    line_end = len(page.text) if line_end < 0 else line_end
    return tuple((s, e) for s, e, kind in furniture
                 if kind == "running_head" and s < line_end and e > line_start)


def _heading_line(page: PageText, line: tuple[int, int, float, float, int]) -> bool:
    """Whether a line looks like a printed heading: short, with letters, not ending a clause
    with a comma, not starting in lower case, in a block of at most three lines, and bold or
    set larger than the page's body."""
    start, end, _top, _bottom, n = line
    text = page.text[start:end].strip()
    if not text or len(text) > 150 or not any(ch.isalpha() for ch in text):
        return False
    if text[-1] in ",;" or text[0].islower():
        return False
    p_start, p_end, y0, y1 = page.pieces[n]
    count = page.text.count("\n", p_start, p_end) + 1
    if count > 3:
        return False
    if page.emphasis and n < len(page.emphasis):
        letters = sum(1 for ch in text if ch.isalnum())
        bold = 0
        for s, e, is_bold, _italic in page.emphasis[n]:
            a, b = max(s + p_start, start), min(e + p_start, end)
            if is_bold and b > a:
                bold += sum(1 for ch in page.text[a:b] if ch.isalnum())
        if letters and bold >= 0.9 * letters:
            return True
    body = [(b - a) / (page.text.count("\n", s, e) + 1) for s, e, a, b in page.pieces
            if page.text.count("\n", s, e) >= 2]
    return bool(body) and (y1 - y0) / count >= 1.15 * statistics.median(body)


# "1", "1.2", "1.2.", "IV.", "A.1", "§ 3", "Chapter 3", "Kapitel 2:", "第3章" before a title.
_SECTION_PREFIX = re.compile(
    r"\s*(?:(?:(?:chapter|part|section|appendix|book|lecture|kapitel|teil|abschnitt|anhang|"
    r"chapitre|partie|annexe|cap[ií]tulo|parte|capitolo|глава|часть)\s+)?"
    r"(?:\d+(?:\.\d+)*\.?|[IVXLC]+\.?|[A-Z](?:\.\d+)+\.?|[A-Z]\.)"
    r"|§\s*\d+(?:\.\d+)*"
    r"|第[\d０-９一二三四五六七八九十百千]+[章節部編回話条]"
    r"|(?:chapter|part|kapitel|teil|chapitre|book)\s+[a-z]+"
    # A label alone: "Appendix" before "A Copying Information".
    r"|(?:chapter|part|section|appendix|book|kapitel|teil|anhang|chapitre|partie|annexe))"
    r"\s*[:.\u2013\u2014-]?\s*",
    re.IGNORECASE,
)


def _with_section_number(
    page: PageText, offset: int, floor: int, furniture: tuple[FurnitureSpan, ...]
) -> int:
    """``offset`` moved back to a section number printed before the heading, if there is one."""
    text = page.text
    line_start = text.rfind("\n", 0, offset) + 1
    prefix = text[line_start:offset]
    if prefix.strip():
        match = _SECTION_PREFIX.fullmatch(prefix)
        if not match or line_start < floor:
            return offset
        return line_start + len(prefix) - len(prefix.lstrip())
    if line_start == 0:
        return offset
    # The number alone on the line above, in the heading's own block or a block of its own
    # (a display chapter number), and not page furniture (a folio, a verse line number).
    above = text.rfind("\n", 0, line_start - 1) + 1
    line = text[above : line_start - 1]
    if (
        not line.strip()
        or above < floor
        or not _SECTION_PREFIX.fullmatch(line)
        or any(s < line_start - 1 and e > above for s, e, _k in furniture)
        or not _same_or_own_block(page, above, offset)
    ):
        return offset
    return above + len(line) - len(line.lstrip())


def _same_or_own_block(page: PageText, above: int, offset: int) -> bool:
    """True when the line at ``above`` is in the heading's block, or is a one-line block set
    just above it (not an axis label or a number elsewhere on the page)."""
    number = next((p for p in page.pieces if p[0] <= above < p[1]), None)
    heading = next((p for p in page.pieces if p[0] <= offset < p[1]), None)
    if number is None or heading is None:
        return False
    if number is heading:
        return True
    if "\n" in page.text[number[0] : number[1]]:
        return False
    lines = page.text.count("\n", heading[0], heading[1]) + 1
    line_height = (heading[3] - heading[2]) / lines
    return heading[2] - 2 * line_height <= number[3] <= heading[2] + 0.5 * line_height


def _find_all(haystack: str, needle: str, limit: int = 64) -> list[int]:
    found: list[int] = []
    if not needle:
        return found
    start = haystack.find(needle)
    while start != -1 and len(found) < limit:
        found.append(start)
        start = haystack.find(needle, start + 1)
    return found


def _without_spaces(text: str) -> tuple[str, list[int]]:
    keep = [i for i, ch in enumerate(text) if ch != " "]
    return "".join(text[i] for i in keep), keep


def _distance(page: PageText, offset: int, dest_y: float) -> float:
    """How far the line holding ``offset`` lies from the destination (below is cheap)."""
    for start, end, y0, y1 in page.pieces:
        if start <= offset < end:
            # Blocks give one rectangle for several lines: share its height out evenly.
            lines = page.text.count("\n", start, end) + 1
            height = (y1 - y0) / lines
            top = y0 + height * page.text.count("\n", start, offset)
            bottom = top + height
            # Destinations point at or a little above the heading.
            if bottom < dest_y - 2:
                return (dest_y - bottom) * 4
            return max(0.0, top - dest_y)
    return float("inf")


# --- one page --------------------------------------------------------------------------------


def _clean_text(text: str) -> str:
    """Control characters out; a glyph without Unicode (U+FFFD) is a word break (a space)."""
    text = _CONTROL.sub("", text)
    return text.replace(_UNMAPPED, " ") if _UNMAPPED in text else text


def _clean_lines(text: str) -> list[str]:
    return [line for line in _clean_text(text).split("\n") if line.strip()]


def _ocr_page(page: Any, extracted: PageText, ocr: tuple[OcrPlan, OcrSession],
              done: dict[int, dict[str, Any]], failed: dict[int, str]) -> PageText:
    """The page read by OCR (its text replaces ``extracted``), or ``extracted`` with the
    reason OCR could not read it."""
    plan, session = ocr
    read = session.read(page)
    if read.failure is None and not any(str(b[4]).strip() for b in read.blocks):
        read.failure = "no text was recognised"
    if read.failure is not None:
        failed[page.number] = read.failure
        return extracted
    text = _page_text(read.blocks, float(page.rect.width), float(page.rect.height), None,
                      lambda: read.dict or {"blocks": []})
    if not text.text.strip():
        failed[page.number] = "no text was recognised"
        return extracted
    done[page.number] = {
        **plan.engine.label(plan.options.language), "dpi": read.dpi,
        "seconds": read.seconds, "words": read.words,
        "mean_word_confidence": read.confidence,
        **({"confidence_note": read.confidence_note} if read.confidence_note else {}),
        "replaced_text_layer": bool(extracted.text.strip()),
    }
    return text


def _extract_page(page: Any, flags: int) -> PageText:
    """The page's text in reading order (see the module docstring)."""
    # One text page (MuPDF's layout analysis) serves the blocks, the XHTML (emphasis, note
    # markers) and, if needed, the dict.
    textpage = page.get_textpage(flags=flags)
    raw_blocks = page.get_text("blocks", textpage=textpage)
    return _page_text(
        raw_blocks, float(page.rect.width), float(page.rect.height),
        lambda: _safe(lambda: page.get_text("xhtml", textpage=textpage), ""),
        lambda: page.get_text("dict", textpage=textpage))


def _page_text(
    raw_blocks: list[tuple[Any, ...]],
    width: float,
    height: float,
    xhtml_of: Callable[[], str] | None,
    dict_of: Callable[[], dict[str, Any]],
) -> PageText:
    """A page's text from MuPDF's ``blocks`` (and, lazily, its XHTML or dict).

    ``xhtml_of`` None: no emphasis, heading levels or note markers (an OCR text page).
    """
    blocks: list[Box] = []
    numbers: dict[int, int] = {}
    cjk = unmapped = 0
    for x0, y0, x1, y1, text, number, kind in raw_blocks:
        if kind != 0:
            continue
        if _CJK_HINT.search(text):
            cjk += sum(1 for ch in text if is_cjk(ch))
        unmapped += text.count(_UNMAPPED)
        box = Box(x0, y0, x1, y1, text)
        numbers[id(box)] = number
        blocks.append(box)
    if cjk >= _CJK_MIN:
        result = _extract_cjk_page(dict_of(), width)
        result.unmapped = unmapped
        return result
    ordered, reordered = reading_order(blocks, width)
    xhtml = xhtml_of() if xhtml_of is not None else ""
    runs = emphasis_runs(xhtml)
    levels = heading_levels(xhtml)
    sups = sup_runs(xhtml) if "<sup>" in xhtml else [[] for _ in runs]
    # XHTML writes one element per text block, in the text page's order.
    matched = len(runs) == len(blocks) and all(numbers[id(b)] < len(runs) for b in blocks)
    cleaned = {id(b): _clean_lines(b.text) for b in ordered}
    footnotes: dict[int, tuple[str, ...]] = {}
    if matched and any(sups):
        ordered, footnotes = _footnotes_last(ordered, cleaned, numbers, sups, height)
    pairs = [(b, cleaned[id(b)]) for b in ordered]
    result = join_blocks(pairs, reordered=reordered)
    result.unmapped = unmapped
    result.columns = _in_columns([b for b in ordered if len(cleaned[id(b)]) >= 3])
    kept = [b for b, lines in pairs if lines]
    result.emphasis = [
        place_emphasis(result.text[s:e], runs[numbers[id(b)]]) if matched else []
        for b, (s, e, _y0, _y1) in zip(kept, result.pieces, strict=True)
    ]
    result.levels = [levels[numbers[id(b)]] if matched else 0 for b in kept]
    if footnotes:
        labels = {label for group in footnotes.values() for label in group}
        for n, (b, (s, e, _y0, _y1)) in enumerate(zip(kept, result.pieces, strict=True)):
            if id(b) in footnotes:
                result.footnotes[n] = footnotes[id(b)]
                continue
            for a, z, label in note_markers(result.text[s:e], sups[numbers[id(b)]]):
                if label in labels or label[0] in SYMBOL_MARKERS:
                    result.notes.append((s + a, s + z, label))
    return result


def _in_columns(paragraphs: Sequence[Box]) -> bool:
    """Whether two paragraphs stand side by side (their heights overlap, their widths not)."""
    for n, a in enumerate(paragraphs):
        for b in paragraphs[n + 1:]:
            overlap = min(a.y1, b.y1) - max(a.y0, b.y0)
            if overlap > 0.5 * min(a.y1 - a.y0, b.y1 - b.y0) and (
                    a.x1 <= b.x0 or b.x1 <= a.x0):
                return True
    return False


def _footnotes_last(
    ordered: list[Box],
    cleaned: dict[int, list[str]],
    numbers: dict[int, int],
    sups: list[list[tuple[int, str]]],
    height: float,
) -> tuple[list[Box], dict[int, tuple[str, ...]]]:
    """The blocks with the page's footnotes moved after its body, in their order down the
    page, and each footnote block's labels (see :mod:`.notes`)."""
    sizes = [(b.y1 - b.y0, len(cleaned[id(b)])) for b in ordered if cleaned[id(b)]]
    body = body_line_height(sizes)
    if body is None:
        return ordered, {}
    # Labels of superscripts that stand as note markers somewhere on the page.
    markers = {label for b in ordered if cleaned[id(b)]
               for _s, _e, label in note_markers("\n".join(cleaned[id(b)]),
                                                 sups[numbers[id(b)]])}
    found: dict[int, tuple[str, ...]] = {}
    for b in ordered:
        lines = cleaned[id(b)]
        if not lines or b.y0 < 0.5 * height or (b.y1 - b.y0) / len(lines) > 0.9 * body:
            continue
        label = footnote_label("\n".join(lines), sups[numbers[id(b)]])
        if label is not None and label in markers:
            # Later lines may begin footnotes of their own (one block, several notes).
            more = [footnote_label(line, ()) for line in lines[1:]]
            found[id(b)] = (label, *(m for m in more if m is not None and m in markers))
    if not found:
        return ordered, {}
    # Footnotes stand below the page's prose: no paragraph of two or more lines after them.
    prose = [b for b in ordered if id(b) not in found and len(cleaned[id(b)]) >= 2]
    found = {k: v for k, v in found.items()
             if not any(p.y0 > next(b for b in ordered if id(b) == k).y1 for p in prose)}
    if not found:
        return ordered, {}
    notes = sorted((b for b in ordered if id(b) in found), key=lambda b: b.y0)
    top = notes[0].y0
    rest = [b for b in ordered if id(b) not in found]
    above = [b for b in rest if b.y0 < top]
    below = [b for b in rest if b.y0 >= top]  # a folio under the footnotes stays last
    return above + notes + below, found


def _line_text(line: dict[str, Any]) -> str:
    return _clean_text("".join(span.get("text", "") for span in line.get("spans", ())))


def _is_vertical_line(line: dict[str, Any]) -> bool:
    dx, dy = line.get("dir", (1.0, 0.0))
    return line.get("wmode", 0) == 1 or (dy > 0.9 and abs(dx) < 0.2)


def _extract_cjk_page(data: dict[str, Any], width: float) -> PageText:
    blocks: list[list[Box]] = []
    for block in data.get("blocks", ()):
        if block.get("type", 0) != 0:
            continue
        lines = []
        for line in block.get("lines", ()):
            text = _line_text(line).strip(" \t\r\n")
            if text:
                x0, y0, x1, y1 = line["bbox"]
                lines.append(Box(x0, y0, x1, y1, text, _is_vertical_line(line)))
        if lines:
            blocks.append(lines)
    return assemble_cjk_page(blocks, width)
