"""Text normalisation shared by the search index and source verification.

Raw source text is the truth; every comparison happens on a *normalised* view of it, and
:func:`normalise_with_offsets` keeps the map back to raw character positions so a match in the
normalised view becomes a character range in the raw text.

The fold, in order: NFKC (full-width forms, Kangxi radicals, ligatures such as ﬁ, U+3000 →
space) and casefold per base character with its combining marks; soft hyphens, zero-width and
bidi control characters removed; a hyphen between letters removed together with any line break
after it ("exam-\\nple" and "well-known" both fold to one word); whitespace runs collapsed to one
space, and whitespace between two CJK characters dropped (vertical and wrapped Japanese lines).
"""

from __future__ import annotations

import unicodedata

__all__ = ["is_cjk", "normalise", "normalise_with_offsets", "raw_span", "strip_controls"]

_DROP = frozenset(
    "\u00ad\u200b\u200c\u200d\u2060\ufeff"  # soft hyphen, zero-width characters, BOM
    "\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"  # bidi controls
    # Variation selectors (incl. ideographic variation sequences: 葛 + IVS is still 葛).
    + "".join(map(chr, range(0xFE00, 0xFE10)))
    + "".join(map(chr, range(0xE0100, 0xE01F0)))
)
_CJK_PUNCTUATION = frozenset("\u30fb\u30a0\u309b\u309c")  # ・ ゠ ゛ ゜ separate words
_HYPHENS = frozenset("-\u2010\u2011")


def is_cjk(ch: str) -> bool:
    """True for Han, Hiragana, Katakana and Hangul characters (the bigram-tokenised scripts)."""
    cp = ord(ch)
    if ch in _CJK_PUNCTUATION:
        return False
    return (
        0x3040 <= cp <= 0x30FF  # hiragana, katakana
        or 0x31F0 <= cp <= 0x31FF
        or 0x3400 <= cp <= 0x4DBF
        or 0x4E00 <= cp <= 0x9FFF
        or 0xF900 <= cp <= 0xFAFF
        or 0xFF66 <= cp <= 0xFF9F  # half-width katakana (NFKC maps them anyway)
        or 0xAC00 <= cp <= 0xD7AF  # hangul syllables
        or 0x1100 <= cp <= 0x11FF
        or 0x20000 <= cp <= 0x3FFFF
        or ch in "々〆〇ー"
    )


def strip_controls(text: str) -> str:
    """Remove bidi and zero-width controls (for text shown to an assistant)."""
    return "".join(c for c in text if c not in _DROP or c == "\u00ad" or c >= "\ufe00")


def _clusters(text: str):
    """Yield (raw_start, cluster) where a cluster is a base character and its combining marks."""
    start = 0
    n = len(text)
    while start < n:
        end = start + 1
        while end < n and unicodedata.combining(text[end]):
            end += 1
        yield start, text[start:end]
        start = end


def normalise_with_offsets(text: str) -> tuple[str, list[int]]:
    """Normalise ``text`` and map every output character to its raw position.

    Returns:
        ``(folded, offsets)`` where ``offsets[i]`` is the raw index of the character that
        produced ``folded[i]`` and ``offsets[len(folded)] == len(text)`` (a sentinel). Use
        :func:`raw_span` to turn a folded range into a raw one.
    """
    chars: list[str] = []
    offs: list[int] = []
    for pos, cluster in _clusters(text):
        if cluster[0] in _DROP:
            continue
        folded = unicodedata.normalize("NFKC", cluster).casefold()
        for ch in folded:
            if ch in _DROP:
                continue
            chars.append(" " if ch.isspace() else ch)
            offs.append(pos)
    out_c: list[str] = []
    out_o: list[int] = []
    i, n = 0, len(chars)
    while i < n:
        ch = chars[i]
        if ch in _HYPHENS and out_c and out_c[-1].isalpha():
            j = i + 1
            while j < n and chars[j] == " ":
                j += 1
            if j < n and chars[j].isalpha() and (j == i + 1 or _had_newline(text, offs, i, j)):
                i = j  # drop the hyphen (and the line break after it)
                continue
        if ch == " ":
            j = i
            while j < n and chars[j] == " ":
                j += 1
            prev = out_c[-1] if out_c else ""
            nxt = chars[j] if j < n else ""
            if prev and nxt and not (is_cjk(prev) and is_cjk(nxt)):
                out_c.append(" ")
                out_o.append(offs[i])
            i = j
            continue
        out_c.append(ch)
        out_o.append(offs[i])
        i += 1
    out_o.append(len(text))
    return "".join(out_c), out_o


def _had_newline(text: str, offs: list[int], i: int, j: int) -> bool:
    return "\n" in text[offs[i] : offs[j]]


def normalise(text: str) -> str:
    """The normalised form of ``text`` (see the module docstring)."""
    return normalise_with_offsets(text)[0]


def raw_span(offsets: list[int], start: int, end: int, raw_len: int) -> tuple[int, int]:
    """Map a folded range ``[start, end)`` to the raw range that produced it."""
    raw_start = offsets[start]
    raw_end = offsets[end] if end < len(offsets) - 1 else raw_len
    if end > start:
        # Extend to the end of the last folded character's raw cluster.
        last = offsets[end - 1]
        raw_end = max(raw_end, last + 1)
    return raw_start, raw_end
