"""Page geometry: reading order of text blocks, and vertical Japanese assembled into columns.

Pure geometry on plain boxes (:class:`Box`, MuPDF page space: x right, y down), so it is
tested with hand-made boxes and no PDF library; :mod:`.pdf` feeds it what PyMuPDF reports.

Reading order
    Blocks keep the content-stream order unless paragraph blocks plainly step back *up* within
    one column (at least three times and in 30 % of steps); then the page is re-ordered
    geometrically: full-width blocks split the page into bands, and in each band the columns
    are read left to right, top to bottom (:func:`reading_order`).

Vertical Japanese (tategaki)
    Glyphs are grouped into columns by x, top to bottom; columns of a tier are read right to
    left, tiers top to bottom, joined with no space or newline. A column that starts below the
    common column top (an indent) or follows one that stops short of the common bottom begins
    a new paragraph. Ruby (half-size kana beside a column, or above a horizontal line) is left
    out (:func:`assemble_cjk_page`, :func:`vertical_page`).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from itertools import pairwise

from ...text import is_cjk

__all__ = [
    "Box",
    "PageText",
    "assemble_cjk_page",
    "join_blocks",
    "reading_order",
    "vertical_page",
]


_BULLETS = frozenset("・●○■□◆◇※—‐")


@dataclass(frozen=True, slots=True)
class Box:
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
class PageText:
    """A page's text and, for the outline, where each block landed in it."""

    text: str
    pieces: list[tuple[int, int, float, float]]
    """``(start, end, y0, y1)`` of each block in ``text``."""
    vertical: bool = False
    reordered: bool = False
    ruby: int = 0
    """Ruby (furigana) glyphs left out of the text."""
    emphasis: list[list[tuple[int, int, bool, bool]]] | None = None
    """Per piece, its bold/italic spans relative to the piece (Latin pages; see
    :mod:`.blocks`); None where the page's Markdown blocks are not built."""
    levels: list[int] | None = None
    """Per piece, MuPDF's heading level for it (1-3 from its type size; 0: a paragraph)."""
    notes: list[tuple[int, int, str]] = field(default_factory=list)
    """Note markers ``(start, end, label)`` in ``text`` (see :mod:`.notes`)."""
    footnotes: dict[int, tuple[str, ...]] = field(default_factory=dict)
    """Piece index → the labels of the footnotes that piece holds."""
    unmapped: int = 0
    """Glyphs without Unicode read as word breaks."""
    columns: bool = False
    """Paragraphs stand side by side: the page is set in columns."""


def join_blocks(blocks: list[tuple[Box, list[str]]], *, reordered: bool = False) -> PageText:
    """Blocks' lines joined with newlines, in the order given, each block's place recorded."""
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
    return PageText("\n".join(parts), pieces, reordered=reordered)


def reading_order(blocks: list[Box], page_width: float) -> tuple[list[Box], bool]:
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


def _column_order(blocks: list[Box], page_width: float) -> list[Box]:
    """Geometric order: bands split by full-width blocks; columns left to right in a band."""
    narrow = sorted((b for b in blocks if b.width < 0.55 * page_width), key=lambda b: b.x0)
    columns: list[list[float]] = []
    for b in narrow:
        if columns and b.x0 <= columns[-1][1]:
            columns[-1][1] = max(columns[-1][1], b.x1)
        else:
            columns.append([b.x0, b.x1])

    def column_of(b: Box) -> int | None:
        hits = [i for i, (c0, c1) in enumerate(columns) if b.x0 < c1 and b.x1 > c0]
        return hits[0] if len(hits) == 1 else None

    spanning = sorted((b for b in blocks if column_of(b) is None), key=lambda b: b.y0)
    bands: list[list[Box]] = [[] for _ in range(len(spanning) + 1)]
    for b in blocks:
        if column_of(b) is None:
            continue
        band_index = sum(1 for s in spanning if s.y0 <= b.y0)
        bands[band_index].append(b)
    ordered: list[Box] = []
    for i, band in enumerate(bands):
        ordered.extend(sorted(band, key=lambda b: (column_of(b), b.y0, b.x0)))
        if i < len(spanning):
            ordered.append(spanning[i])
    return ordered


def _is_cjk_like(ch: str) -> bool:
    """CJK ideographs and kana, plus the CJK punctuation and full-width forms around them."""
    cp = ord(ch)
    return is_cjk(ch) or 0x3000 < cp <= 0x303F or 0xFF01 <= cp <= 0xFF65


def assemble_cjk_page(blocks: list[list[Box]], page_width: float) -> PageText:
    """A CJK page's text from its blocks of lines: vertical columns, or wrapped horizontal lines.

    The page is vertical when at least 40 % of its characters (and at least six) sit on
    vertical lines or on one-glyph lines stacked into columns; its glyphs are then assembled
    into columns read right to left (:func:`vertical_page`). Otherwise horizontal ruby is left
    out, the blocks are put in reading order and lines that wrap are joined.

    Args:
        blocks: each block's lines, as MuPDF groups them (page space, y down).
        page_width: the page's width, for telling full-width blocks from columns.
    """
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
        return vertical_page(blocks, stacked)
    flat = [line for lines in blocks for line in lines]
    ruby = _ruby_above(flat)
    if ruby:
        blocks = [kept for lines in blocks if (kept := [b for b in lines if id(b) not in ruby])]
    boxes = [_block_box(lines) for lines in blocks]
    ordered, reordered = reading_order(boxes, page_width)
    by_id = {id(box): lines for box, lines in zip(boxes, blocks, strict=True)}
    result = _join_cjk_lines([by_id[id(box)] for box in ordered], reordered=reordered)
    result.ruby = sum(len(line.text) for line in flat if id(line) in ruby)
    return result


def _is_ruby_text(text: str) -> bool:
    return all(_is_cjk_like(ch) for ch in text)


def _ruby_above(lines: list[Box]) -> set[int]:
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


def _ruby_beside(glyphs: list[Box], em: float) -> set[int]:
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


def _block_box(lines: list[Box]) -> Box:
    return Box(
        min(b.x0 for b in lines),
        min(b.y0 for b in lines),
        max(b.x1 for b in lines),
        max(b.y1 for b in lines),
        "\n".join(b.text for b in lines),
    )


def _join_cjk_lines(blocks: list[list[Box]], *, reordered: bool) -> PageText:
    """Lines joined with newlines, except a CJK line that wraps into the next one.

    MuPDF often makes each line of widely leaded CJK text its own block, so wrapping is judged
    on the lines in reading order, across blocks.
    """
    horizontal = [line for lines in blocks for line in lines if not line.vertical]
    parts: list[str] = []
    pieces: list[tuple[int, int, float, float]] = []
    pos = 0
    prev: Box | None = None
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
    return PageText("".join(parts), pieces, reordered=reordered)


def _wraps(a: Box, b: Box, lines: list[Box]) -> bool:
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


def _stacked_glyphs(lines: list[Box]) -> set[int]:
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


def _bands(boxes: list[Box], em: float) -> list[list[Box]]:
    """Boxes grouped by x centre, right to left (a band is one column's worth of x)."""
    bands: list[list[Box]] = []
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


def vertical_page(blocks: list[list[Box]], stacked: set[int]) -> PageText:
    """A vertical page's text: columns right to left, tiers top to bottom, ruby left out.

    ``stacked`` holds the ids of horizontal one-glyph lines that belong to columns.
    """
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
    return PageText("".join(parts), pieces, vertical=True, ruby=len(ruby))


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


def _columns(glyphs: list[Box], em: float) -> list[_Column]:
    """Group vertical glyph lines into columns: bands of x, split where a gap opens in y."""
    bands = _bands(glyphs, em)
    columns: list[_Column] = []
    for band in bands:
        band.sort(key=lambda b: b.y0)
        run: list[Box] = [band[0]]
        for g in band[1:]:
            if g.y0 - run[-1].y1 > 2.5 * em:
                columns.append(_column(run))
                run = [g]
            else:
                run.append(g)
        columns.append(_column(run))
    return columns


def _column(run: list[Box]) -> _Column:
    text = "".join(g.text for g in run)
    return _Column(
        min(g.x0 for g in run),
        min(g.y0 for g in run),
        max(g.x1 for g in run),
        max(g.y1 for g in run),
        text,
        True,
    )
