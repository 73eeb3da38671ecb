"""A PDF → one raw-text unit per page, with the outline mapped onto the pages (PyMuPDF).

One MuPDF text page per page, read as ``blocks``: that costs what plain ``get_text()`` costs
and also gives each block's rectangle, which the reading order and the outline offsets need.
Only a page with CJK text also reads the same text page as ``dict`` (line directions and
boxes), because only there can vertical writing or wrapped CJK lines need assembling. Pages are
streamed: no Page object outlives its turn.

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
characters (unmapped maths glyphs) are dropped.
"""

from __future__ import annotations

import math
import os
import re
import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

from ...core.errors import Code, CoreError
from ..model import SourceDocument, SourceUnit, TocEntry
from ..text import is_cjk, normalise, normalise_with_offsets

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
_BULLETS = frozenset("・●○■□◆◇※—‐")


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


@dataclass(frozen=True, slots=True)
class _Box:
    """A block, a line or a column of text with its rectangle (MuPDF page space, y down)."""

    x0: float
    y0: float
    x1: float
    y1: float
    text: str
    vertical: bool = False

    @property
    def width(self) -> float:
        return self.x1 - self.x0

    @property
    def cx(self) -> float:
        return (self.x0 + self.x1) / 2


@dataclass(slots=True)
class _Page:
    """A page's text and, for the outline, where each block landed in it."""

    text: str
    pieces: list[tuple[int, int, float, float]]
    """``(start, end, y0, y1)`` of each block in ``text``."""
    vertical: bool = False
    reordered: bool = False
    ruby: int = 0
    """Ruby (furigana) glyphs left out of the text."""


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
    resolved: dict[int, TocEntry] = {}
    last_offset: dict[int, int] = {}
    for index in range(total):
        label: str | None = None
        try:
            page = doc.load_page(index)
            if has_labels:
                label = page.get_label() or None
            extracted = _extract_page(page, flags)
            del page  # stream: never hold Page objects past their turn
        except Exception:  # a damaged page must not sink the book
            failed.append(index)
            extracted = _Page("", [])
        has_text = bool(extracted.text.strip())
        if not has_text:
            no_text.append(index)
        if extracted.vertical:
            vertical.append(index)
        if extracted.reordered:
            reordered.append(index)
        ruby += extracted.ruby
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
        for number in pending.get(index, ()):
            entry = _resolve_entry(outline[number], extracted, last_offset.get(index, 0))
            resolved[number] = entry
            last_offset[index] = entry.char_offset
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
    if reordered:
        warnings.append(
            f"{len(reordered)} pages had an implausible content order and were re-read by "
            f"columns: {_page_list(reordered)}."
        )

    meta = _safe(lambda: doc.metadata, None) or {}
    title = (meta.get("title") or "").strip() or None
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


def _resolve_entry(item: _OutlineItem, page: _Page, floor: int) -> TocEntry:
    dest_y = None if page.vertical else item.dest_y
    offset = _heading_offset(item.title, page, dest_y, floor)
    return TocEntry(title=item.title, level=item.level, unit_index=item.page, char_offset=offset)


def _heading_offset(title: str, page: _Page, dest_y: float | None, floor: int) -> int:
    """Where ``title`` starts in the page text (normalised match), or 0 when it is not there.

    Several matches (a running head repeats a chapter title): prefer those at or after the
    previous entry on this page, then the one nearest the outline's destination point.
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
    after = [c for c in candidates if c >= floor]
    candidates = after or candidates
    if dest_y is not None and page.pieces:
        return min(candidates, key=lambda c: (_distance(page, c, dest_y), c))
    return candidates[0]


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


def _distance(page: _Page, offset: int, dest_y: float) -> float:
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


def _extract_page(page: Any, flags: int) -> _Page:
    """The page's text in reading order (see the module docstring)."""
    blocks: list[_Box] = []
    cjk = 0
    # One text page (MuPDF's layout analysis) serves both the blocks and, if needed, the dict.
    textpage = page.get_textpage(flags=flags)
    for x0, y0, x1, y1, text, _number, kind in page.get_text("blocks", textpage=textpage):
        if kind != 0:
            continue
        if _CJK_HINT.search(text):
            cjk += sum(1 for ch in text if is_cjk(ch))
        blocks.append(_Box(x0, y0, x1, y1, text))
    if cjk >= _CJK_MIN:
        return _extract_cjk_page(page, textpage)
    ordered, reordered = _reading_order(blocks, float(page.rect.width))
    return _join_blocks([(b, _clean_lines(b.text)) for b in ordered], reordered=reordered)


def _join_blocks(blocks: list[tuple[_Box, list[str]]], *, reordered: bool = False) -> _Page:
    parts: list[str] = []
    pieces: list[tuple[int, int, float, float]] = []
    pos = 0
    for box, lines in blocks:
        if not lines:
            continue
        chunk = "\n".join(lines)
        if parts:
            pos += 1  # the newline between blocks
        pieces.append((pos, pos + len(chunk), box.y0, box.y1))
        parts.append(chunk)
        pos += len(chunk)
    return _Page("\n".join(parts), pieces, reordered=reordered)


def _reading_order(blocks: list[_Box], page_width: float) -> tuple[list[_Box], bool]:
    """Stream order, unless paragraph blocks keep stepping back up one column."""
    paragraphs = [b for b in blocks if b.text.count("\n") >= 2 or len(b.text) >= 60]
    if len(paragraphs) < 4:
        return blocks, False
    upward = 0
    for a, b in pairwise(paragraphs):
        overlap = min(a.x1, b.x1) - max(a.x0, b.x0)
        if b.y1 < a.y0 and overlap > 0.5 * min(a.width, b.width):
            upward += 1
    if upward < 3 or upward < 0.3 * (len(paragraphs) - 1):
        return blocks, False
    return _column_order(blocks, page_width), True


def _column_order(blocks: list[_Box], page_width: float) -> list[_Box]:
    """Geometric order: bands split by full-width blocks; columns left to right in a band."""
    narrow = sorted((b for b in blocks if b.width < 0.55 * page_width), key=lambda b: b.x0)
    columns: list[list[float]] = []
    for b in narrow:
        if columns and b.x0 <= columns[-1][1]:
            columns[-1][1] = max(columns[-1][1], b.x1)
        else:
            columns.append([b.x0, b.x1])

    def column_of(b: _Box) -> int | None:
        hits = [i for i, (c0, c1) in enumerate(columns) if b.x0 < c1 and b.x1 > c0]
        return hits[0] if len(hits) == 1 else None

    spanning = sorted((b for b in blocks if column_of(b) is None), key=lambda b: b.y0)
    bands: list[list[_Box]] = [[] for _ in range(len(spanning) + 1)]
    for b in blocks:
        if column_of(b) is None:
            continue
        band = sum(1 for s in spanning if s.y0 <= b.y0)
        bands[band].append(b)
    ordered: list[_Box] = []
    for i, band in enumerate(bands):
        ordered.extend(sorted(band, key=lambda b: (column_of(b), b.y0, b.x0)))
        if i < len(spanning):
            ordered.append(spanning[i])
    return ordered


# --- CJK pages: wrapped lines and vertical writing -------------------------------------------


def _is_cjk_like(ch: str) -> bool:
    """CJK ideographs and kana, plus the CJK punctuation and full-width forms around them."""
    cp = ord(ch)
    return is_cjk(ch) or 0x3000 < cp <= 0x303F or 0xFF01 <= cp <= 0xFF65


def _line_text(line: dict[str, Any]) -> str:
    return _CONTROL.sub("", "".join(span.get("text", "") for span in line.get("spans", ())))


def _is_vertical_line(line: dict[str, Any]) -> bool:
    dx, dy = line.get("dir", (1.0, 0.0))
    return line.get("wmode", 0) == 1 or (dy > 0.9 and abs(dx) < 0.2)


def _extract_cjk_page(page: Any, textpage: Any) -> _Page:
    data = page.get_text("dict", textpage=textpage)
    blocks: list[list[_Box]] = []
    for block in data.get("blocks", ()):
        if block.get("type", 0) != 0:
            continue
        lines = []
        for line in block.get("lines", ()):
            text = _line_text(line).strip(" \t\r\n")
            if text:
                x0, y0, x1, y1 = line["bbox"]
                lines.append(_Box(x0, y0, x1, y1, text, _is_vertical_line(line)))
        if lines:
            blocks.append(lines)
    stacked = _stacked_glyphs([line for lines in blocks for line in lines])
    vertical_chars = 0
    total_chars = 0
    for lines in blocks:
        for line in lines:
            n = len(line.text.strip())
            total_chars += n
            if line.vertical or id(line) in stacked:
                vertical_chars += n
    if vertical_chars >= 6 and vertical_chars >= 0.4 * total_chars:
        return _vertical_page(blocks, stacked)
    flat = [line for lines in blocks for line in lines]
    ruby = _ruby_above(flat)
    if ruby:
        blocks = [kept for lines in blocks if (kept := [b for b in lines if id(b) not in ruby])]
    boxes = [_block_box(lines) for lines in blocks]
    ordered, reordered = _reading_order(boxes, float(page.rect.width))
    by_id = {id(box): lines for box, lines in zip(boxes, blocks, strict=True)}
    result = _join_cjk_lines([by_id[id(box)] for box in ordered], reordered=reordered)
    result.ruby = sum(len(line.text) for line in flat if id(line) in ruby)
    return result


def _is_ruby_text(text: str) -> bool:
    return all(_is_cjk_like(ch) for ch in text)


def _ruby_above(lines: list[_Box]) -> set[int]:
    """Ids of small CJK lines set just above a full-size line (horizontal furigana)."""
    horizontal = [b for b in lines if not b.vertical]
    if len(horizontal) < 2:
        return set()
    em = statistics.median(b.y1 - b.y0 for b in horizontal)
    ruby: set[int] = set()
    for s in horizontal:
        if s.y1 - s.y0 >= 0.7 * em or not _is_ruby_text(s.text):
            continue
        for b in horizontal:
            if (
                b.y1 - b.y0 >= 0.7 * em
                and -0.3 * em <= b.y0 - s.y1 <= 0.8 * em
                and b.x0 - 0.5 * em <= s.x0
                and s.x1 <= b.x1 + 0.5 * em
            ):
                ruby.add(id(s))
                break
    return ruby


def _ruby_beside(glyphs: list[_Box], em: float) -> set[int]:
    """Ids of small vertical glyphs set just right of a full-size column (vertical furigana)."""
    small = [g for g in glyphs if g.width < 0.7 * em and _is_ruby_text(g.text)]
    if not small:
        return set()
    base = [g for g in glyphs if g.width >= 0.7 * em]
    bands = [(statistics.fmean(g.cx for g in band), band) for band in _bands(base, em)]
    ruby: set[int] = set()
    for s in small:
        for cx, band in bands:
            if not s.cx - 1.3 * em <= cx <= s.cx - 0.3 * em:
                continue
            if any(g.y0 < s.y1 + 0.5 * em and g.y1 > s.y0 - 0.5 * em for g in band):
                ruby.add(id(s))
                break
    return ruby


def _block_box(lines: list[_Box]) -> _Box:
    return _Box(
        min(b.x0 for b in lines),
        min(b.y0 for b in lines),
        max(b.x1 for b in lines),
        max(b.y1 for b in lines),
        "\n".join(b.text for b in lines),
    )


def _join_cjk_lines(blocks: list[list[_Box]], *, reordered: bool) -> _Page:
    """Lines joined with newlines, except a CJK line that wraps into the next one.

    MuPDF often makes each line of widely leaded CJK text its own block, so wrapping is judged
    on the lines in reading order, across blocks.
    """
    horizontal = [line for lines in blocks for line in lines if not line.vertical]
    parts: list[str] = []
    pieces: list[tuple[int, int, float, float]] = []
    pos = 0
    prev: _Box | None = None
    for lines in blocks:
        start = -1
        for line in lines:
            if prev is not None and not _wraps(prev, line, horizontal):
                parts.append("\n")
                pos += 1
            if start < 0:
                start = pos
            parts.append(line.text)
            pos += len(line.text)
            prev = line
        pieces.append((start, pos, min(b.y0 for b in lines), max(b.y1 for b in lines)))
    return _Page("".join(parts), pieces, reordered=reordered)


def _wraps(a: _Box, b: _Box, lines: list[_Box]) -> bool:
    """True when line ``a`` runs to the right edge and ``b`` continues it at the left edge."""
    if a.vertical or b.vertical:
        return False
    tail, head = a.text[-1], b.text[0]
    if not (_is_cjk_like(tail) and _is_cjk_like(head)) or head in _BULLETS or head == "\u3000":
        return False
    em = a.y1 - a.y0
    if not 0.5 * em <= b.y0 - a.y0 <= 2.5 * em:
        return False
    column = [
        line
        for line in lines
        if min(a.x1, line.x1) - max(a.x0, line.x0) > 0.5 * min(a.width, line.width)
    ]
    left = min(line.x0 for line in column)
    right = max(line.x1 for line in column)
    return a.x1 >= right - 1.5 * em and b.x0 <= left + 0.5 * em


def _stacked_glyphs(lines: list[_Box]) -> set[int]:
    """Ids of one-glyph horizontal CJK lines that stack into columns (glyphs drawn singly)."""
    singles = [
        b
        for b in lines
        if not b.vertical and len(b.text.strip()) == 1 and _is_cjk_like(b.text.strip())
    ]
    if len(singles) < 6:
        return set()
    em = statistics.median(b.width for b in singles) or 1.0
    stacked: set[int] = set()
    for band in _bands(singles, em):
        band.sort(key=lambda b: b.y0)
        for a, b in pairwise(band):
            h = a.y1 - a.y0
            if a.y1 - 0.3 * h <= b.y0 <= a.y1 + 0.8 * h:
                stacked.add(id(a))
                stacked.add(id(b))
    return stacked if len(stacked) >= 6 else set()


def _bands(boxes: list[_Box], em: float) -> list[list[_Box]]:
    """Boxes grouped by x centre, right to left (a band is one column's worth of x)."""
    bands: list[list[_Box]] = []
    for box in sorted(boxes, key=lambda b: -b.cx):
        if bands and abs(bands[-1][0].cx - box.cx) <= 0.5 * em:
            bands[-1].append(box)
        else:
            bands.append([box])
    return bands


@dataclass(slots=True)
class _Column:
    """A run of vertical glyphs read top to bottom, or a horizontal block on a vertical page."""

    x0: float
    y0: float
    x1: float
    y1: float
    text: str
    vertical: bool

    @property
    def cx(self) -> float:
        return (self.x0 + self.x1) / 2


def _vertical_page(blocks: list[list[_Box]], stacked: set[int]) -> _Page:
    glyphs = [b for lines in blocks for b in lines if b.vertical or id(b) in stacked]
    em = statistics.median(b.width for b in glyphs) or 1.0
    # Tate-chu-yoko: two or three upright digits set across one column cell are a glyph of it.
    upright = {
        id(b)
        for lines in blocks
        for b in lines
        if not (b.vertical or id(b) in stacked)
        and len(b.text) <= 4
        and b.width <= 1.6 * em
        and b.y1 - b.y0 <= 1.5 * em
    }
    stacked = stacked | upright
    glyphs += [b for lines in blocks for b in lines if id(b) in upright]
    ruby = _ruby_beside(glyphs, em)
    items = _columns([g for g in glyphs if id(g) not in ruby], em)
    for lines in blocks:
        rest = [b for b in lines if not (b.vertical or id(b) in stacked)]
        if rest:
            box = _block_box(rest)
            items.append(_Column(box.x0, box.y0, box.x1, box.y1, box.text, False))
    tiers: list[list[_Column]] = []
    tier_bottom = 0.0
    for item in sorted(items, key=lambda c: c.y0):
        if tiers and item.y0 < tier_bottom - 0.3 * em:
            tiers[-1].append(item)
            tier_bottom = max(tier_bottom, item.y1)
        else:
            tiers.append([item])
            tier_bottom = item.y1
    parts: list[str] = []
    pieces: list[tuple[int, int, float, float]] = []
    pos = 0
    for tier in tiers:
        tier.sort(key=lambda c: -c.cx)
        columns = [c for c in tier if c.vertical]
        top = _typical([c.y0 for c in columns], em, lowest=True)
        bottom = _typical([c.y1 for c in columns], em, lowest=False)
        for i, item in enumerate(tier):
            if parts:
                prev = tier[i - 1] if i else None
                joined = (
                    prev is not None
                    and prev.vertical
                    and item.vertical
                    and item.y0 - top < 0.5 * em
                    and prev.y1 > bottom - 1.0 * em
                    and not item.text.startswith("\u3000")
                )
                if not joined:
                    parts.append("\n")
                    pos += 1
            parts.append(item.text)
            pieces.append((pos, pos + len(item.text), item.y0, item.y1))
            pos += len(item.text)
    return _Page("".join(parts), pieces, vertical=True, ruby=len(ruby))


def _typical(values: list[float], em: float, *, lowest: bool) -> float:
    """The edge most columns share (the text block's top or bottom), within a third of an em.

    Indented paragraph starts, short paragraph ends and headings set lower all differ from it;
    with no majority, the extreme value stands in.
    """
    if not values:
        return 0.0
    ordered = sorted(values, reverse=not lowest)
    best, best_count = ordered[0], 0
    for v in ordered:
        count = sum(1 for w in ordered if abs(w - v) <= em / 3)
        if count > best_count:
            best, best_count = v, count
    return best


def _columns(glyphs: list[_Box], em: float) -> list[_Column]:
    """Group vertical glyph lines into columns: bands of x, split where a gap opens in y."""
    bands = _bands(glyphs, em)
    columns: list[_Column] = []
    for band in bands:
        band.sort(key=lambda b: b.y0)
        run: list[_Box] = [band[0]]
        for g in band[1:]:
            if g.y0 - run[-1].y1 > 2.5 * em:
                columns.append(_column(run))
                run = [g]
            else:
                run.append(g)
        columns.append(_column(run))
    return columns


def _column(run: list[_Box]) -> _Column:
    text = "".join(g.text for g in run)
    return _Column(
        min(g.x0 for g in run),
        min(g.y0 for g in run),
        max(g.x1 for g in run),
        max(g.y1 for g in run),
        text,
        True,
    )
