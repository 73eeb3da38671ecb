"""Headings of a PDF without an outline, and word spaces rebuilt where the text has none.

A PDF without an outline still prints its headings. Two kinds are taken from the layout:

* type that stands out: a one-line block MuPDF's XHTML makes a heading and that is set larger
  than the book's paragraphs (:func:`.blocks.font_headings`);
* numbered bold lines: a line set wholly in bold that begins with a section number and reads
  like a title (``1 Background``, ``3.4 Basic Pattern Generation``), alone in its block or
  the first line of one, even at body size — the usual section heading of a paper.

Each becomes a contents entry (so records and search hits carry it in their heading path):
a numbered heading's level is its number's depth (``3.4`` → 2); an unnumbered one's is the
rank of its type size among the headings (largest first). The title line of the first page
is the book's title, not an entry.

Word spaces
    MuPDF infers a space from the gap between two glyphs; a title set in large, tightly kerned
    type (or a producer that writes no space glyphs and narrow gaps) comes out as
    ``Two-ColumnDocumentwithLoremIpsum``. For a title or heading whose text looks fused (a
    lower-case letter followed by a capital inside a word, or a word of more than 24 letters),
    :func:`spaced_text` rebuilds the spaces from the glyph positions: a gap wider than a tenth
    of an em and than three times the line's usual gap between letters is a word space.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Sequence
from itertools import pairwise

__all__ = ["heading_depth", "looks_fused", "numbered_bold_lines", "spaced_text"]

_NUMBERED = re.compile(r"(\d{1,2}(?:\.\d{1,2}){0,3})\.?\s+(?=[^\W\d_])")
_FUSED = re.compile(r"[a-zà-ÿ][A-ZÀ-Þ]|[^\W\d_]{25,}")


def heading_depth(title: str) -> int | None:
    """The depth of the section number a heading begins with (``3.4 Foo`` → 2), or None."""
    match = _NUMBERED.match(title.strip())
    return match.group(1).count(".") + 1 if match else None


def numbered_bold_lines(
    text: str,
    spans: Sequence[tuple[int, int]],
    emphasis: Sequence[Sequence[tuple[int, int, bool, bool]]],
) -> list[tuple[int, int, int]]:
    """A page's numbered bold heading lines: ``(start, end, depth)`` in raw offsets.

    Args:
        text: the page's raw text.
        spans: ``(start, end)`` of each text block in ``text``.
        emphasis: per block, its emphasised spans (relative to the block).
    """
    out: list[tuple[int, int, int]] = []
    for (start, end), marks in zip(spans, emphasis, strict=False):
        line_end = text.find("\n", start, end)
        line_end = end if line_end < 0 else line_end
        line = text[start:line_end]
        title = line.strip()
        depth = heading_depth(title)
        if depth is None or len(title) > 100 or title[-1] in ".,;:" or not marks:
            continue
        if sum(1 for ch in title if ch.isalpha()) < 3:
            continue
        letters = [k for k in range(len(line)) if not line[k].isspace()]
        bold = [False] * len(line)
        for s, e, is_bold, _italic in marks:
            if is_bold:
                for k in range(max(s, 0), min(e, len(line))):
                    bold[k] = True
        if all(bold[k] for k in letters):
            lead = len(line) - len(line.lstrip())
            out.append((start + lead, start + lead + len(title), depth))
    return out


def looks_fused(text: str) -> bool:
    """Whether a title's words look run together (``ColumnDocument``, a 25-letter word)."""
    return bool(_FUSED.search(text))


def spaced_text(chars: Sequence[tuple[float, float, str, float]]) -> str:
    """A line's text from its glyphs ``(x0, x1, character, size)`` in order, with a space
    wherever the gap to the next glyph is a word space (see the module docstring); spaces
    the glyphs already have are kept, and never doubled."""
    gaps = [b[0] - a[1] for a, b in pairwise(chars)
            if not a[2].isspace() and not b[2].isspace()]
    usual = statistics.median([max(g, 0.0) for g in gaps] or [0.0])
    out: list[str] = []
    for n, (x0, _x1, ch, size) in enumerate(chars):
        if n and not ch.isspace() and not out[-1].isspace():
            gap = x0 - chars[n - 1][1]
            if gap > 0.1 * size and gap > 3 * usual:
                out.append(" ")
        out.append(ch)
    return " ".join("".join(out).split())
