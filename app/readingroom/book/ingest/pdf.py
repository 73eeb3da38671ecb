"""A PDF → one raw-text unit per page, with the outline mapped onto the pages (PyMuPDF).

One MuPDF text page per page, read as ``blocks``: that costs what plain ``get_text()`` costs
and also gives each block's rectangle, which the reading order and the outline offsets need.
A Latin page also reads the same text page as XHTML, for the emphasis of its Markdown blocks
(:mod:`.pdf_blocks`; cheap, unlike ``dict``). Only a page with CJK text reads it as ``dict``
(line directions and boxes), because only there can vertical writing or wrapped CJK lines need
assembling. Pages are streamed: no Page object outlives its turn.

After the last page, what needs the whole book is added to the units (their text never
changes, so locators stay valid): page furniture (running heads, folios, verse line numbers,
:mod:`.pdf_furniture`), printed page numbers inferred from the folios when the PDF has no page
labels (``label_inferred``), the ``contents`` role of printed contents pages
(:mod:`.pdf_contents`), the outline placed on the pages (a running head never takes an entry; a
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
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...core.errors import Code, CoreError
from ..model import Block, FurnitureSpan, SourceDocument, SourceUnit, TocEntry
from ..text import is_cjk, normalise, normalise_with_offsets
from .layout import Box, PageText, assemble_cjk_page, join_blocks, reading_order
from .pdf_blocks import (
    emphasis_runs,
    font_headings,
    heading_levels,
    page_blocks,
    place_emphasis,
)
from .pdf_contents import ContentsJudge
from .pdf_furniture import BandLine, band_lines, find_furniture, infer_labels, verse_line_numbers
from .pdf_tables import TableBudget, looks_tabular, merge_tables, page_tables

__all__ = ["IMAGE_ONLY_REMEDIATION", "read_pdf"]

IMAGE_ONLY_REMEDIATION = (
    "OCR it first (e.g. ocrmypdf) or pass --allow-image-only to register it for rendering only"
)

# Read before the first import: when the user has chosen a destination, it is theirs to keep.
_USER_MESSAGE_SETTING = os.environ.get("PYMUPDF_MESSAGE")
_messages_routed = False

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_CJK_HINT = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
# A page needs this many CJK characters before it pays for the dict pass.
_CJK_MIN = 4
_TABLE_SHARE = 0.15
"""Looking for ruled tables may cost this share of the time spent reading the pages (see
:mod:`.pdf_tables`)."""


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
) -> SourceDocument:
    """Read a PDF into one unit per page, in reading order, with its outline.

    Args:
        path: the PDF file.
        progress: called with ``(pages done, total pages)`` after each page.
        allow_image_only: register a book with no text layer at all (for rendering only)
            instead of refusing it.

    Raises:
        CoreError: ENCRYPTED_SOURCE (a password is needed), CORRUPT_SOURCE (cannot be opened
            or repaired), EMPTY_SOURCE (no pages, or no text layer without
            ``allow_image_only``).
    """
    pymupdf = _pymupdf()
    doc = _open(pymupdf, path)
    try:
        return _read_document(pymupdf, doc, path, progress, allow_image_only)
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


def _read_document(
    pymupdf: Any,
    doc: Any,
    path: Path,
    progress: Callable[[int, int], None] | None,
    allow_image_only: bool,
) -> SourceDocument:
    total = doc.page_count
    warnings: list[str] = []
    outline, pending = _outline(doc, total, warnings)
    has_labels = bool(_safe(doc.get_page_labels, []))
    flags = pymupdf.TEXTFLAGS_TEXT
    units: list[SourceUnit] = []
    no_text: list[int] = []
    vertical: list[int] = []
    reordered: list[int] = []
    failed: list[int] = []
    ruby = 0
    bands: dict[int, list[BandLine]] = {}
    # Latin pages: block spans, emphasis, heights and MuPDF's heading levels, for the
    # Markdown blocks built at the end.
    layouts: dict[int, _Layout] = {}
    # Pages that outline entries point into wait for the furniture (see _resolve_entries).
    held: dict[int, PageText] = {}
    # Ruled tables (see .pdf_tables), searched on grid-like pages within a time budget.
    tables: dict[int, tuple[Block, ...]] = {}
    budget = TableBudget(_TABLE_SHARE)
    tables_unsearched: list[int] = []  # grid-like pages left unsearched: the budget was spent
    for index in range(total):
        label: str | None = None
        try:
            page = doc.load_page(index)
            if has_labels:
                label = _clean_label(page.get_label())
            read_at = time.perf_counter()
            extracted = _extract_page(page, flags)
            budget.earn(read_at)
            if extracted.emphasis is not None:
                if budget.left <= 0 and looks_tabular(extracted.text, extracted.pieces):
                    tables_unsearched.append(index)
                found = page_tables(page, extracted.text, extracted.pieces, budget)
                if found:
                    tables[index] = found
            height = float(page.rect.height)
            del page  # stream: never hold Page objects past their turn
        except Exception:  # a damaged page must not sink the book
            failed.append(index)
            extracted = PageText("", [])
            height = 0.0
        has_text = bool(extracted.text.strip())
        if not has_text:
            no_text.append(index)
        if extracted.vertical:
            vertical.append(index)
        if extracted.reordered:
            reordered.append(index)
        ruby += extracted.ruby
        if has_text:
            band = band_lines(extracted, height)
            if band:
                bands[index] = band
        units.append(
            SourceUnit(
                kind="pdf_page",
                index=index,
                text=extracted.text,
                label=label,
                has_text_layer=has_text,
                writing_mode="vertical" if extracted.vertical else "horizontal",
            )
        )
        if index in pending:
            held[index] = extracted
        if has_text and extracted.emphasis is not None:
            layouts[index] = _Layout(
                [(s, e) for s, e, _y0, _y1 in extracted.pieces],
                extracted.emphasis,
                [y1 - y0 for _s, _e, y0, y1 in extracted.pieces],
                extracted.levels or [],
            )
        if progress is not None:
            progress(index + 1, total)

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
    if vertical:
        warnings.append(
            f"{len(vertical)} pages are set vertically; their columns were read right to left "
            f"and joined: {_page_list(vertical)}."
        )
    if ruby:
        warnings.append(
            f"{ruby} ruby (furigana) characters beside the text were left out of the raw text."
        )
    if tables_unsearched:
        warnings.append(
            f"Ruled-table search stopped at its time budget (a share of the reading time); "
            f"{len(tables_unsearched)} pages laid out like tables were not searched "
            f"({_page_list(tables_unsearched)}): tables there, if any, read as text in book.md "
            "(render the page to see them)."
        )
    if reordered:
        warnings.append(
            f"{len(reordered)} pages had an implausible content order and were re-read by "
            f"columns: {_page_list(reordered)}."
        )

    units = _furnish(units, bands, outline, has_labels)
    furniture = {u.index: u.furniture for u in units if u.furniture}
    resolved = _resolve_entries(outline, pending, held, furniture)
    units = _with_blocks(units, layouts, resolved.values() if resolved else None, tables)
    if not has_labels and any(u.label_inferred for u in units):
        warnings.append(
            "The PDF has no page labels; printed page numbers were inferred from the folios."
        )

    meta = _safe(lambda: doc.metadata, None) or {}
    title = _metadata_title(meta.get("title"))
    if title is None and len(no_text) < total:
        title = _heading_title(doc, units, outline)
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
        toc=tuple(resolved[n] for n in sorted(resolved)),
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
) -> list[SourceUnit]:
    """The units with their furniture spans, inferred labels and contents role added.

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
            found = sorted(found + lines.get(unit.index, []))
        if found:
            changes["furniture"] = tuple(found)
        if unit.index in labels:
            changes["label"] = labels[unit.index]
            changes["label_inferred"] = True
        out.append(dataclasses.replace(unit, **changes) if changes else unit)
    return out


@dataclass(frozen=True, slots=True)
class _Layout:
    """What a Latin page keeps for its Markdown blocks, per piece (text block)."""

    spans: list[tuple[int, int]]
    emphasis: list[list[Any]]
    heights: list[float]
    levels: list[int]


def _with_blocks(
    units: list[SourceUnit], layouts: dict[int, _Layout], toc: Any,
    tables: dict[int, tuple[Block, ...]] | None = None,
) -> list[SourceUnit]:
    """The units with their Markdown blocks (see :mod:`.pdf_blocks`); text unchanged.

    Headings are the outline's entries; a PDF without an outline takes them from type size.
    """
    headings: dict[int, dict[int, int]] = {}
    if toc:
        for entry in toc:
            headings.setdefault(entry.unit_index, {}).setdefault(entry.char_offset, entry.level)
    else:
        headings = font_headings(
            {i: (lay.spans, lay.heights, lay.levels) for i, lay in layouts.items()},
            {u.index: u.text for u in units if u.index in layouts},
        )
    out = []
    for unit in units:
        layout = layouts.get(unit.index)
        if layout is None:
            out.append(unit)
            continue
        blocks = page_blocks(unit.text, layout.spans, layout.emphasis, unit.furniture,
                             headings.get(unit.index), contents=unit.role == "contents",
                             kinds=layout.levels)
        if tables and tables.get(unit.index):
            blocks = merge_tables(blocks, tables[unit.index])
        out.append(dataclasses.replace(unit, blocks=blocks) if blocks else unit)
    return out


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
    """The lines set in the page's largest type, when that type stands out from the body."""
    data = page.get_text("dict", flags=0)
    lines: list[tuple[float, str]] = []
    weights: list[tuple[float, int]] = []
    for block in data.get("blocks", ()):
        for line in block.get("lines", ()):
            spans = [sp for sp in line.get("spans", ()) if sp.get("text", "").strip()]
            if not spans:
                continue
            text = _CONTROL.sub("", "".join(sp["text"] for sp in spans)).strip()
            size = max(float(sp.get("size", 0)) for sp in spans)
            lines.append((size, text))
            weights.extend((float(sp.get("size", 0)), len(sp["text"])) for sp in spans)
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


def _resolve_entries(
    outline: list[_OutlineItem],
    pending: dict[int, list[int]],
    held: dict[int, PageText],
    furniture: dict[int, tuple[FurnitureSpan, ...]],
) -> dict[int, TocEntry]:
    """Each outline entry placed on its page, in order (an entry's floor is the one before)."""
    resolved: dict[int, TocEntry] = {}
    for index, numbers in pending.items():
        page = held.get(index, PageText("", []))
        spans = furniture.get(index, ())
        floor = 0
        for number in numbers:
            entry = _resolve_entry(outline[number], page, floor, spans)
            resolved[number] = entry
            floor = entry.char_offset
    return resolved


def _resolve_entry(
    item: _OutlineItem, page: PageText, floor: int, furniture: tuple[FurnitureSpan, ...] = ()
) -> TocEntry:
    dest_y = None if page.vertical else item.dest_y
    offset = _heading_offset(item.title, page, dest_y, floor, furniture)
    return TocEntry(title=item.title, level=item.level, unit_index=item.page, char_offset=offset)


def _heading_offset(
    title: str,
    page: PageText,
    dest_y: float | None,
    floor: int,
    furniture: tuple[FurnitureSpan, ...] = (),
) -> int:
    """Where ``title`` starts in the page text (normalised match), or 0 when it is not there.

    Several matches (a running head repeats a chapter title): prefer those outside page
    furniture, at or after the previous entry on this page, then the one nearest the
    outline's destination point. A section number printed before the title ("1.2 Foo",
    "Chapter 3 Foo", or "3" alone on the line above) belongs to the heading: the offset
    points at the number (:func:`_with_section_number`).
    """
    if not page.text:
        return 0
    folded, offsets = normalise_with_offsets(page.text)
    needle = normalise(title)
    starts = _find_all(folded, needle)
    if not starts:
        # Extraction can drop or add spaces ("1.1Topologische"); match without them.
        squeezed, keep = _without_spaces(folded)
        hits = _find_all(squeezed, needle.replace(" ", ""))
        starts = [keep[h] for h in hits]
    if not starts:
        return 0
    candidates = [offsets[s] for s in starts]
    body = [c for c in candidates if not any(s <= c < e for s, e, _k in furniture)]
    candidates = body or candidates
    after = [c for c in candidates if c >= floor]
    candidates = after or candidates
    if dest_y is not None and page.pieces:
        chosen = min(candidates, key=lambda c: (_distance(page, c, dest_y), c))
    else:
        chosen = candidates[0]
    return _with_section_number(page, chosen, floor, furniture)


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


def _clean_lines(text: str) -> list[str]:
    return [line for line in _CONTROL.sub("", text).split("\n") if line.strip()]


def _extract_page(page: Any, flags: int) -> PageText:
    """The page's text in reading order (see the module docstring)."""
    blocks: list[Box] = []
    numbers: dict[int, int] = {}
    cjk = 0
    # One text page (MuPDF's layout analysis) serves the blocks, the XHTML (emphasis) and,
    # if needed, the dict.
    textpage = page.get_textpage(flags=flags)
    for x0, y0, x1, y1, text, number, kind in page.get_text("blocks", textpage=textpage):
        if kind != 0:
            continue
        if _CJK_HINT.search(text):
            cjk += sum(1 for ch in text if is_cjk(ch))
        box = Box(x0, y0, x1, y1, text)
        numbers[id(box)] = number
        blocks.append(box)
    if cjk >= _CJK_MIN:
        return _extract_cjk_page(page, textpage)
    ordered, reordered = reading_order(blocks, float(page.rect.width))
    pairs = [(b, _clean_lines(b.text)) for b in ordered]
    result = join_blocks(pairs, reordered=reordered)
    kept = [b for b, lines in pairs if lines]
    xhtml = _safe(lambda: page.get_text("xhtml", textpage=textpage), "")
    runs = emphasis_runs(xhtml)
    levels = heading_levels(xhtml)
    # XHTML writes one element per text block, in the text page's order.
    matched = len(runs) == len(blocks) and all(numbers[id(b)] < len(runs) for b in kept)
    result.emphasis = [
        place_emphasis(result.text[s:e], runs[numbers[id(b)]]) if matched else []
        for b, (s, e, _y0, _y1) in zip(kept, result.pieces, strict=True)
    ]
    result.levels = [levels[numbers[id(b)]] if matched else 0 for b in kept]
    return result


def _line_text(line: dict[str, Any]) -> str:
    return _CONTROL.sub("", "".join(span.get("text", "") for span in line.get("spans", ())))


def _is_vertical_line(line: dict[str, Any]) -> bool:
    dx, dy = line.get("dir", (1.0, 0.0))
    return line.get("wmode", 0) == 1 or (dy > 0.9 and abs(dx) < 0.2)


def _extract_cjk_page(page: Any, textpage: Any) -> PageText:
    data = page.get_text("dict", textpage=textpage)
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
    return assemble_cjk_page(blocks, float(page.rect.width))
