"""PDF page furniture: running heads, folios and verse line numbers, told by position.

Pure logic on what :mod:`.pdf` records while it streams the pages (no PDF library here), so it
is tested with hand-made pages. The raw text keeps every character; this module only says
where furniture lies (``(start, end, kind)`` spans, see :data:`..model.FurnitureSpan`).

Head and foot bands
    On each page the outermost row of blocks at the top (within the top fifth) and at the
    bottom (within the bottom fifth), set apart from the body by a gap of at least most of a
    line, holds the candidates (:func:`band_lines`). Nothing else on a page can be a running
    head or a folio, so a number in the middle of a page never is one.

Folios
    A band line that is a number (arabic, or roman that renders back to itself), bare or
    decorated (``- 12 -``, ``[12]``) or at the edge of a running head (``12 | Title``,
    ``Title    12``). A folio pattern is an offset ``printed - page index`` shared by at
    least three pages (two in a book of two or three pages; never on a single page); every
    candidate on that offset is a folio.

Running heads
    Band lines whose text, with the folio taken off, recurs in the same band at the same
    height (within 3 pt) on at least two pages; the other lines of a block that holds a
    folio; and a lone top-band line at a height where at least three pages carry furniture.

Verse line numbers
    Lines that are only a number, outside the bands, forming an increasing chain in which the
    count of text lines between two numbers matches their difference (a number every fifth or
    tenth line): at least three such numbers, or two that are multiples of five.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Literal

from ...model import FurnitureSpan
from .layout import PageText

__all__ = [
    "BandLine",
    "Folio",
    "band_lines",
    "find_furniture",
    "infer_labels",
    "parse_folio",
    "verse_line_numbers",
]

Band = Literal["head", "foot"]

_BAND_SHARE = 0.2
_Y_TOLERANCE = 3.0
_MAX_BAND_LINES = 3
_MAX_BAND_CHARS = 200
_MAX_ROMAN = 200

_ROMAN_VALUES = (
    (1000, "m"), (900, "cm"), (500, "d"), (400, "cd"), (100, "c"), (90, "xc"),
    (50, "l"), (40, "xl"), (10, "x"), (9, "ix"), (5, "v"), (4, "iv"), (1, "i"),
)
_DECORATION = r"[\s\-\u2010-\u2015\u2212|\[\]()\u00b7\u2022.*~]*"
_NUMBER = r"(\d{1,4}|[ivxlcdm]{1,8}|[IVXLCDM]{1,8})"
_PURE = re.compile(rf"{_DECORATION}{_NUMBER}{_DECORATION}")
_SEPARATOR = r"\s*(?:[|\u00b7\u2022:\u2013\u2014]\s*)?"
_LEADING = re.compile(rf"\s*(\d{{1,4}}|[ivxlcdm]{{1,8}}|[IVXLCDM]{{1,8}})(\s+{_SEPARATOR})(?=\D)")
_TRAILING = re.compile(rf"(?<=\D)({_SEPARATOR}\s+){_NUMBER}\s*$")
_BARE_NUMBER = re.compile(r"\s*(\d{1,4})\s*")
# "Page 3 of 40", "Seite 3 von 40", "3 / 40", "p. 3": a folio with a word or a total.
_OF_TOTAL = re.compile(
    r"\s*(?:(?:page|seite|pagina|página|p\.|s\.)\s*)?(\d{1,4})"
    r"(?:\s*(?:of|von|/|sur|de|di)\s*\d{1,4})?\s*",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class BandLine:
    """One line of a page's head or foot band, with its place in the page text."""

    band: Band
    y0: float
    y1: float
    start: int
    end: int
    text: str
    block: int
    """The block (piece) of the page it belongs to."""


@dataclass(frozen=True, slots=True)
class Folio:
    """A printed page number found on a page: its value and how it was printed."""

    value: int
    roman: bool
    upper: bool = False
    start: int = 0
    end: int = 0
    """The number's span in the page text."""

    def printed(self, value: int | None = None) -> str:
        """The number as this folio prints it (``value`` instead of its own, if given)."""
        value = self.value if value is None else value
        if not self.roman:
            return str(value)
        text = _to_roman(value)
        return text.upper() if self.upper else text


def _to_roman(number: int) -> str:
    out = []
    for value, letters in _ROMAN_VALUES:
        while number >= value:
            out.append(letters)
            number -= value
    return "".join(out)


def _from_roman(text: str) -> int | None:
    lower = text.lower()
    values = dict((letters, value) for value, letters in _ROMAN_VALUES if len(letters) == 1)
    total, prev = 0, 0
    for ch in reversed(lower):
        value = values.get(ch)
        if value is None:
            return None
        total = total - value if value < prev else total + value
        prev = max(prev, value)
    # Only canonical numerals: "iiii" or "vx" are words or noise, not page numbers.
    return total if total and _to_roman(total) == lower else None


def _number(token: str) -> tuple[int, bool, bool] | None:
    if token.isdigit():
        value = int(token)
        return (value, False, False) if value > 0 else None
    if not (token.islower() or token.isupper()):
        return None
    roman = _from_roman(token)
    # Front matter runs to tens of pages; "mix" (1009) or "dix" (509) are words.
    if roman is None or roman > _MAX_ROMAN:
        return None
    return roman, True, token.isupper()


def parse_folio(text: str) -> tuple[Folio, bool] | None:
    """The page number a band line prints, and whether the line is only that number.

    ``"- 12 -"``, ``"xii"`` and ``"Page 12 of 40"`` are bare folios; ``"12 | Title"`` and
    ``"Title    12"`` carry one at an edge (roman only when bare: a running head may end in
    a roman-looking word).
    Offsets of the returned :class:`Folio` are relative to ``text``.
    """
    match = _OF_TOTAL.fullmatch(text)
    if match and int(match.group(1)) > 0:
        return Folio(int(match.group(1)), False, False, match.start(1), match.end(1)), True
    match = _PURE.fullmatch(text)
    if match:
        parsed = _number(match.group(1))
        if parsed:
            return Folio(*parsed, match.start(1), match.end(1)), True
        return None
    match = _LEADING.match(text)
    if match and match.group(1).isdigit():
        return Folio(int(match.group(1)), False, False, match.start(1), match.end(1)), False
    match = _TRAILING.search(text)
    if match and match.group(2).isdigit():
        return Folio(int(match.group(2)), False, False, match.start(2), match.end(2)), False
    return None


def band_lines(page: PageText, height: float) -> list[BandLine]:
    """The candidate lines of a page's head and foot bands (see the module docstring)."""
    if len(page.pieces) < 2 or height <= 0:
        return []
    # Pieces are never empty (the joins skip blank blocks); no need to look at their text.
    blocks = [(number, *piece) for number, piece in enumerate(page.pieces) if piece[1] > piece[0]]
    if len(blocks) < 2:
        return []
    found: list[BandLine] = []
    for band in ("head", "foot"):
        if band == "head":
            edge = min(blocks, key=lambda b: b[3])
            row = [b for b in blocks if b[3] < edge[4] and b[4] <= _BAND_SHARE * height]
        else:
            edge = max(blocks, key=lambda b: b[4])
            row = [b for b in blocks if b[4] > edge[3] and b[3] >= (1 - _BAND_SHARE) * height]
        if not row or len(row) == len(blocks):
            continue
        rest = [b for b in blocks if b not in row]
        lines: list[BandLine] = []
        for number, start, end, y0, y1 in row:
            chunk = page.text[start:end]
            count = chunk.count("\n") + 1
            if count > _MAX_BAND_LINES or len(chunk) > _MAX_BAND_CHARS:
                lines = []
                break
            pos = start
            for text in chunk.split("\n"):
                if text.strip():
                    lines.append(BandLine(band, y0, y1, pos, pos + len(text), text, number))
                pos += len(text) + 1
        if not lines:
            continue
        line_height = min((b[4] - b[3]) / (page.text.count("\n", b[1], b[2]) + 1) for b in row)
        if band == "head":
            gap = min(b[3] for b in rest) - max(b[4] for b in row)
        else:
            gap = min(b[3] for b in row) - max(b[4] for b in rest)
        if gap >= 0.8 * line_height:
            found.extend(lines)
    return found


def _signature(text: str) -> str:
    """A running head's text without its folio and case: what recurs from page to page."""
    parsed = parse_folio(text)
    if parsed and not parsed[1]:
        folio = parsed[0]
        text = text[: folio.start] + text[folio.end :]
    return " ".join(re.sub(r"[\d|\u00b7\u2022\-\u2013\u2014]+", " ", text).casefold().split())


def _clusters(values: Iterable[tuple[float, int]]) -> dict[int, int]:
    """Group ``(y, key)`` pairs whose y lie within the tolerance; key → cluster number."""
    cluster: dict[int, int] = {}
    first: float | None = None
    number = -1
    for y, key in sorted(values):
        if first is None or y - first > _Y_TOLERANCE:
            first = y
            number += 1
        cluster[key] = number
    return cluster


def find_furniture(
    pages: dict[int, list[BandLine]], text_pages: int
) -> tuple[dict[int, list[FurnitureSpan]], dict[int, Folio]]:
    """Running heads and folios across the pages' band lines.

    Args:
        pages: page index → its :func:`band_lines`.
        text_pages: how many pages of the book have text (the evidence a pattern needs).

    Returns:
        ``(spans, folios)``: furniture spans per page index (sorted), and the folio found on
        each page that has one.
    """
    spans: dict[int, list[FurnitureSpan]] = defaultdict(list)
    folios: dict[int, Folio] = {}
    if text_pages < 2:
        return {}, {}
    need = 2 if text_pages <= 3 else 3
    lines = [(index, line) for index, page in sorted(pages.items()) for line in page]

    # Folios: one offset (printed number - page index) shared by enough pages.
    parsed: dict[int, tuple[Folio, bool]] = {}
    support: dict[tuple[bool, int], set[int]] = defaultdict(set)
    for key, (index, line) in enumerate(lines):
        result = parse_folio(line.text)
        if result is None:
            continue
        parsed[key] = result
        folio = result[0]
        support[(folio.roman, folio.value - index)].add(index)
    accepted = {offset for offset, where in support.items() if len(where) >= need}
    # Roman front matter is often short: two pages do, and one page does where arabic
    # folios prove the band (a lone "iii" at the height of the other folios).
    folio_heights = [
        (lines[key][1].band, lines[key][1].y0)
        for key, (folio, _bare) in parsed.items()
        if (folio.roman, folio.value - lines[key][0]) in accepted
    ]
    for (roman, offset), where in support.items():
        if roman and (roman, offset) not in accepted:
            sample = next(
                lines[key][1] for key, (folio, _) in parsed.items()
                if folio.roman and folio.value - lines[key][0] == offset
            )
            near = any(
                band == sample.band and abs(y - sample.y0) <= _Y_TOLERANCE
                for band, y in folio_heights
            )
            if len(where) >= 2 or (near and max(where) < _first_arabic(support, accepted)):
                accepted.add((roman, offset))
    folio_blocks: set[tuple[int, int]] = set()
    for key, (folio, bare) in parsed.items():
        index, line = lines[key]
        if (folio.roman, folio.value - index) not in accepted or index in folios:
            continue
        folios[index] = Folio(folio.value, folio.roman, folio.upper,
                              line.start + folio.start, line.start + folio.end)
        folio_blocks.add((index, line.block))
        if bare:
            spans[index].append((line.start, line.end, "folio"))
        else:
            spans[index].append((line.start + folio.start, line.start + folio.end, "folio"))
            rest = _without(line, folio)
            spans[index].extend((s, e, "running_head") for s, e in rest)

    # Running heads: the same text in the same band at the same height on several pages.
    heights: dict[Band, dict[int, int]] = {}
    for band in ("head", "foot"):
        heights[band] = _clusters(
            (line.y0, key) for key, (index, line) in enumerate(lines) if line.band == band
        )
    groups: dict[tuple[Band, int, str], set[int]] = defaultdict(set)
    for key, (index, line) in enumerate(lines):
        signature = _signature(line.text)
        if signature:
            groups[(line.band, heights[line.band][key], signature)].add(index)
    slot_pages: dict[tuple[Band, int], set[int]] = defaultdict(set)
    for key, (index, line) in enumerate(lines):
        cluster = heights[line.band][key]
        if key in parsed and index in folios:
            slot_pages[(line.band, cluster)].add(index)
            continue
        signature = _signature(line.text)
        if signature and len(groups[(line.band, cluster, signature)]) >= 2:
            slot_pages[(line.band, cluster)].add(index)
    for key, (index, line) in enumerate(lines):
        if any(s <= line.start < e for s, e, _k in spans.get(index, ())):
            continue
        cluster = heights[line.band][key]
        signature = _signature(line.text)
        repeated = bool(signature) and len(groups[(line.band, cluster, signature)]) >= 2
        beside_folio = (index, line.block) in folio_blocks
        lone_head = (
            line.band == "head"
            and len(slot_pages[(line.band, cluster)]) >= 3
            and len(line.text.strip()) <= 80
        )
        if repeated or beside_folio or lone_head:
            spans[index].append((line.start, line.end, "running_head"))
    return {index: sorted(found) for index, found in spans.items()}, folios


def _first_arabic(support: dict[tuple[bool, int], set[int]], accepted: set) -> int:
    pages = [min(where) for (roman, offset), where in support.items()
             if not roman and (roman, offset) in accepted]
    return min(pages) if pages else 1 << 30


def _without(line: BandLine, folio: Folio) -> list[tuple[int, int]]:
    """The parts of a band line beside its folio (the running head), stripped of spaces."""
    out = []
    for s, e in ((0, folio.start), (folio.end, len(line.text))):
        part = line.text[s:e]
        if part.strip():
            lead = len(part) - len(part.lstrip())
            out.append((line.start + s + lead, line.start + s + len(part.rstrip())))
    return out


def infer_labels(folios: dict[int, Folio], total: int) -> dict[int, str]:
    """Printed page numbers for pages with no PDF page labels, from the folios found.

    Pages with a folio print it; a page between two folios on the same offset (a chapter
    opening, a full-page figure) gets that offset's number; pages after the last folio keep
    its offset, pages before the first take it back while the number stays positive.
    """
    if not folios:
        return {}
    labels: dict[int, str] = {}
    found = sorted(folios.items())
    for index, folio in found:
        labels[index] = folio.printed()
    for (a, fa), (b, fb) in pairwise(found):
        same = fa.roman == fb.roman and fa.value - a == fb.value - b
        if same:
            for index in range(a + 1, b):
                labels[index] = fa.printed(fa.value + index - a)
    first_index, first = found[0]
    for index in range(first_index - 1, -1, -1):
        value = first.value - (first_index - index)
        if value < 1:
            break
        labels[index] = first.printed(value)
    last_index, last = found[-1]
    for index in range(last_index + 1, total):
        labels[index] = last.printed(last.value + index - last_index)
    return labels


def verse_line_numbers(
    texts: Sequence[tuple[int, str, Sequence[FurnitureSpan]]],
) -> dict[int, list[FurnitureSpan]]:
    """Verse line numbers: number-only lines in a chain that counts the lines between them.

    Args:
        texts: ``(page index, page text, furniture already found)`` in reading order.

    Returns:
        ``line_number`` spans per page index.
    """
    numbers: list[tuple[int, int, int, int, int]] = []  # (page, start, end, value, line count)
    count = 0
    for index, text, furniture in texts:
        if not _BARE_LINE.search(text):
            count += text.count("\n") + 1 - _furniture_lines(text, furniture)
            continue
        pos = 0
        for line in text.split("\n"):
            end = pos + len(line)
            if line.strip() and not any(s < end and e > pos for s, e, _k in furniture):
                match = _BARE_NUMBER.fullmatch(line)
                if match:
                    value = int(match.group(1))
                    numbers.append((index, pos + match.start(1), pos + match.end(1), value, count))
                else:
                    count += 1
            pos = end + 1
    found: dict[int, list[FurnitureSpan]] = defaultdict(list)
    chain: list[tuple[int, int, int, int, int]] = []

    def close() -> None:
        # Numbered every n-th line: every number a multiple of one n ≥ 2.
        if math.gcd(*(n[3] for n in chain)) < 2:
            return
        if len(chain) >= 3 or (len(chain) == 2 and all(n[3] % 5 == 0 for n in chain)):
            for index, start, end, _value, _count in chain:
                found[index].append((start, end, "line_number"))

    for number in numbers:
        if chain:
            prev = chain[-1]
            step = number[3] - prev[3]
            between = number[4] - prev[4]
            if step >= 2 and step - 1 <= between <= step + step // 2 + 1:
                chain.append(number)
                continue
            close()
        chain = [number]
    close()
    return dict(found)


_BARE_LINE = re.compile(r"(?m)^\s*\d{1,4}\s*$")


def _furniture_lines(text: str, furniture: Sequence[FurnitureSpan]) -> int:
    """How many of the text's lines furniture covers (they are not lines of verse)."""
    return len({text.count("\n", 0, s) for s, _e, _k in furniture})
