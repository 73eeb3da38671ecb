"""Note markers and footnotes of a PDF page.

A note marker is a superscript run (MuPDF's XHTML ``<sup>``: smaller type, raised, the
superscript flag) set right after a word, a number or its punctuation and followed by no
letter or digit: ``83,190,556²``, ``census³,``. MuPDF's plain text glues it to what it follows
(``83,190,5562``: a figure wrong by a factor of ten), so it is page furniture of kind
``note_ref``: search and locate step over it, the raw text keeps it, and ``book.md`` shows it as
``[^n]`` where its footnote is on the page.

A marker counts only where it cannot be an exponent: a symbol (``* † ‡ § ¶``), or a number of
at most three digits whose footnote is on the same page, followed by a space or punctuation
(not ``x²+y²``) and not raised over a one-letter variable (``R³``). A footnote is a block in
the lower half of the page, set in type smaller than the page's body, below the page's prose,
that begins with a marker's label (plain or raised) followed by words. Footnotes are read after
the body, in their order down the page, whatever order the content stream wrote them in.
"""

from __future__ import annotations

import html
import re
import statistics
from collections.abc import Sequence

__all__ = ["SYMBOL_MARKERS", "body_line_height", "footnote_label", "note_markers", "sup_runs"]

SYMBOL_MARKERS = frozenset("*†‡§¶‖")
_ELEMENT = re.compile(r"<(p|h[1-6])>(.*?)</\1>", re.DOTALL)
_TAG = re.compile(r"</?[a-z0-9]+[^>]*>")
_SUP = re.compile(r"<sup>((?:<[bi]>)*)([^<]{1,6})((?:</[bi]>)*)</sup>")
_DIGITS = re.compile(r"\d{1,3}")
_BEFORE = re.compile(r"[^\W_]|[.,;:!?)\]'\"’”%]")
_AFTER = frozenset(".,;:!?)]'\"’”»")
_WORD_BEFORE = re.compile(r"[^\W_]+$")
_FOOTNOTE_START = re.compile(r"\s*(\d{1,3}|[*†‡§¶‖]{1,3})\s*(?=[^\W\d_]{2,})")


def sup_runs(xhtml: str) -> list[list[tuple[int, str]]]:
    """Each text block of MuPDF's XHTML page as its superscript runs ``(offset, text)``, the
    offset counted in the block's plain text (tags removed, entities decoded)."""
    blocks: list[list[tuple[int, str]]] = []
    for match in _ELEMENT.finditer(xhtml):
        inner = match.group(2)
        runs: list[tuple[int, str]] = []
        if "<sup>" in inner:
            for run in _SUP.finditer(inner):
                text = html.unescape(run.group(2))
                offset = len(html.unescape(_TAG.sub("", inner[: run.start(2)])))
                runs.append((offset, text))
        blocks.append(runs)
    return blocks


def _label(text: str) -> str | None:
    text = text.strip()
    if _DIGITS.fullmatch(text) or (text and all(ch in SYMBOL_MARKERS for ch in text)):
        return text
    return None


def note_markers(raw: str, runs: Sequence[tuple[int, str]]) -> list[tuple[int, int, str]]:
    """The block's superscript runs that stand as note markers, placed in its raw text.

    Args:
        raw: the block's raw text (lines joined by ``\\n``, as the XHTML joins them by a
            space).
        runs: the block's :func:`sup_runs`.

    Returns:
        ``(start, end, label)`` relative to ``raw``, in order: runs after a word, a number or
        its punctuation, followed by no letter or digit. A run not found where the XHTML puts
        it is looked for after the previous one.
    """
    out: list[tuple[int, int, str]] = []
    pos = 0
    for offset, text in runs:
        label = _label(text)
        if label is None:
            continue
        lead = len(text) - len(text.lstrip())
        at = offset + lead
        if raw.startswith(label, at) and at >= pos:
            pass
        else:
            at = raw.find(label, max(pos, at - 8))
            if at < 0:
                continue
        end = at + len(label)
        before = raw[at - 1] if at > 0 else ""
        after = raw[end] if end < len(raw) else ""
        if not before or not _BEFORE.fullmatch(before):
            continue
        if after and not (after.isspace() or after in _AFTER):
            continue  # x²+y², 10⁻³: an exponent
        word = _WORD_BEFORE.search(raw, 0, at)
        if word is not None and len(word.group()) == 1 and word.group().isalpha():
            continue  # x², R³: a variable's exponent
        out.append((at, end, label))
        pos = end
    return out


def footnote_label(raw: str, runs: Sequence[tuple[int, str]]) -> str | None:
    """The label a block begins with when it reads like a footnote ("2 Figure from …",
    a raised "²Figure from …"), else None."""
    first = raw.split("\n", 1)[0]
    match = _FOOTNOTE_START.match(first)
    if match is None or sum(ch.isalpha() for ch in first) < 4:
        return None
    if runs and runs[0][0] == 0:
        label = _label(runs[0][1])
        if label is not None and label != match.group(1):
            return None
    return match.group(1)


def body_line_height(heights: Sequence[tuple[float, int]]) -> float | None:
    """The page's body line height: the median line height of its blocks of two or more
    lines (``(block height, lines)``), None without such blocks."""
    values = [h / n for h, n in heights if n >= 2]
    return statistics.median(values) if values else None
