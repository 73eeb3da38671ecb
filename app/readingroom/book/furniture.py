"""Page furniture: masking running heads, folios, page breaks, note markers and line numbers.

The raw text keeps furniture (it is what the file says); matching must step over it. Masking
replaces each furniture character by U+200B ZERO WIDTH SPACE, which :func:`.text.normalise`
drops, so the masked text has the raw text's length and every offset still points into the
raw text: a sentence interrupted by a folio or a note marker folds to the sentence alone.
"""

from __future__ import annotations

from collections.abc import Iterable

from .model import FurnitureSpan

__all__ = ["MASK", "mask_furniture", "spans_within"]

MASK = "\u200b"


def mask_furniture(text: str, spans: Iterable[FurnitureSpan]) -> str:
    """``text`` with every furniture span blanked by :data:`MASK` (same length)."""
    ranges = sorted((max(0, s), min(len(text), e)) for s, e, _ in spans if e > s)
    if not ranges:
        return text
    out, pos = [], 0
    for start, end in ranges:
        start = max(start, pos)
        if end <= start:
            continue
        out.append(text[pos:start])
        out.append(MASK * (end - start))
        pos = end
    out.append(text[pos:])
    return "".join(out)


def spans_within(spans: Iterable[FurnitureSpan], start: int, end: int,
                 shift: int = 0) -> list[FurnitureSpan]:
    """The furniture spans overlapping ``[start, end)``, clipped and moved by ``shift``."""
    return [(max(s, start) + shift, min(e, end) + shift, kind)
            for s, e, kind in spans if s < end and e > start]
