"""Text normalisation shared by the search index and source verification.

Raw source text is the truth; every comparison happens on a *normalised* view of it, and
:func:`normalise_with_offsets` keeps the map back to raw character positions so a match in the
normalised view becomes a character range in the raw text.

The fold, per character (a base character with its combining marks):

- NFKC (full-width forms, Kangxi radicals, ligatures such as ﬁ, compatibility ideographs) and
  casefold;
- soft hyphens, zero-width and bidi control characters, variation selectors removed;
- spaces: NBSP, thin, narrow, figure, ideographic … spaces become a space (``space``);
- punctuation (``punctuation``): the apostrophes and single quotes ’ ‘ ‚ ‛ ′ ` ´ ‹ › and the
  Hebrew geresh ׳ become ``'``; the double quotes “ ” „ ‟ « » ″ 〝 〞 and the gershayim ״
  become ``"``; every dash and hyphen
  (— – ― ‒ − ⸺ ⸻ ‐ ‑ ﹘, Hebrew maqaf) becomes ``-``; … ‥ ⋯ become ``...``. A user types the
  plain form; the book prints the typographic one; both fold alike;
- Japanese variant kanji (``kanji_variant``): kyūjitai to shinjitai, 假 → 仮, 國 → 国
  (:data:`.variants.KANJI_VARIANTS`, from the Jōyō Kanji Table);
- Arabic and Hebrew (``diacritics``): harakat, Quranic marks, niqqud and cantillation
  removed, tatweel removed; Arabic alef with hamza or madda → bare alef (``letter_variant``).

Then, on the folded characters:

- end-of-line hyphenation is joined: a letter, one hyphen, a line break, a letter
  ("exam-\\nple" → "example"). A hyphen inside a word on one line ("well-known",
  "Match-Box") is kept;
- a run of dashes and hyphens ("--", "---", "——") is one ``-``, and whitespace on either side
  of it, or of an ellipsis or a quotation mark, is dropped: "word -- word", "word - word",
  "word—word" and "word — word" all fold to ``word-word``; « Oui » and "Oui" fold alike;
- whitespace before ``; : ! ?`` is dropped (French spacing);
- whitespace runs collapse to one space, none at either end, and whitespace between two CJK
  characters is dropped (vertical and wrapped Japanese lines); CJK and full-width punctuation
  (。」．, judged before NFKC) count as CJK for that join (:func:`cjk_joins`), so a quote that
  runs across a paragraph, line or block break after 。 matches typed without a space.

:func:`describe_folds` names the folds that change a text, so an answer can say that a match
needed one (a curly apostrophe, a traditional kanji …).
"""

from __future__ import annotations

import itertools
import re
import unicodedata

from .variants import ARABIC_LETTER_VARIANTS, KANJI_VARIANTS

__all__ = ["FOLD_NAMES", "cjk_joins", "describe_folds", "folds_between", "is_cjk", "normalise",
           "normalise_with_offsets", "raw_span", "strip_controls"]

_DROP = frozenset(
    "\u00ad\u200b\u200c\u200d\u2060\ufeff"  # soft hyphen, zero-width characters, BOM
    "\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"  # bidi controls
    # Variation selectors (incl. ideographic variation sequences: 葛 + IVS is still 葛).
    + "".join(map(chr, range(0xFE00, 0xFE10)))
    + "".join(map(chr, range(0xE0100, 0xE01F0)))
)
_CJK_PUNCTUATION = frozenset("\u30fb\u30a0\u309b\u309c")  # ・ ゠ ゛ ゜ separate words
_SHY = "\u00ad"
_HYPHENS = frozenset("-\u2010\u2011")
"""Hyphens proper: only these join a word broken at the end of a line."""

# Applied to the raw character before NFKC (NFKC would turn ´ into space + accent, ″ into ′′).
_PRE = {
    "\u00b4": "'", "`": "'", "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'",
    "\u2032": "'", "\u2035": "'", "\u2039": "'", "\u203a": "'", "\uff07": "'",
    "\u05f3": "'", "\u05f4": '"',  # Hebrew geresh and gershayim, typed as ' and "
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u00ab": '"', "\u00bb": '"',
    "\u2033": '"', "\u2036": '"', "\u301d": '"', "\u301e": '"', "\u301f": '"', "\uff02": '"',
    "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2015": "-",
    "\u2212": "-", "\u2e3a": "-", "\u2e3b": "-", "\ufe58": "-", "\ufe63": "-", "\uff0d": "-",
    "\u05be": "-", "\u2043": "-",
    "\u2026": "...", "\u2025": "...", "\u22ef": "...", "\ufe19": "...",
}
_PUNCT_SOURCES = frozenset(_PRE)
# Arabic harakat and Quranic marks, Hebrew niqqud and cantillation (the non-spacing marks of
# these ranges; the punctuation among them — maqaf, paseq, sof pasuq — is not a mark).
_MARK_RANGES = ((0x0591, 0x05C7), (0x0610, 0x061A), (0x064B, 0x065F), (0x0670, 0x0670),
                (0x06D6, 0x06ED), (0x08D3, 0x08FF))
_DIACRITICS = frozenset(
    chr(cp) for lo, hi in _MARK_RANGES for cp in range(lo, hi + 1)
    if unicodedata.category(chr(cp)) == "Mn"
) | {"\u0640"}  # tatweel
_POST = {**KANJI_VARIANTS, **ARABIC_LETTER_VARIANTS}

FOLD_NAMES = ("punctuation", "space", "width", "compatibility", "kanji_variant", "diacritics",
              "letter_variant", "hyphenation", "invisible")
"""Every name :func:`describe_folds` may return."""


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


_C0_C1 = frozenset(chr(c) for c in (*range(0x20), *range(0x7F, 0xA0))) - {"\t", "\n"}
"""C0 and C1 controls (ESC, BEL, BS, CSI …) and DEL; tab and newline are text."""


def strip_controls(text: str) -> str:
    """Remove bidi, zero-width, C0 and C1 controls but tab and newline (for text shown to an
    assistant or a terminal)."""
    return "".join(c for c in text if (c not in _DROP or c == "\u00ad" or c >= "\ufe00")
                   and c not in _C0_C1)


def _fold_cluster(cluster: str) -> str:
    """The folded form of one base character with its combining marks."""
    base = _PRE.get(cluster[0])
    if base is not None:
        cluster = base + cluster[1:]
    folded = unicodedata.normalize("NFKC", cluster).casefold()
    out = []
    for ch in folded:
        if ch == _SHY:
            out.append(ch)  # kept for step two: it may mark a word broken at a line end
            continue
        if ch in _DROP or ch in _DIACRITICS:
            continue
        if ch.isspace():
            out.append(" ")
            continue
        ch = _PRE.get(ch, ch)  # NFKC can produce a typographic form (＂ → ", ︙ …)
        out.append(_POST.get(ch, ch))
    return "".join(out)


class _Fold1(dict):
    """Code point → its fold when that is one character or none, for ``str.translate``."""

    def __missing__(self, cp: int) -> str:
        folded = _fold_cluster(chr(cp))
        value = folded if len(folded) <= 1 else "\ufffd"
        self[cp] = value
        return value


# Arabic marks that NFKC composes with a preceding letter (ا + ٔ → أ): never dropped alone.
_COMPOSING = frozenset("\u0653\u0654\u0655")


class _Kind(dict):
    """Code point → "." (folds to one character), "d" (folds to nothing: controls, Arabic and
    Hebrew marks), "m" (another combining mark, folded with its letter) or "x" (expands)."""

    def __missing__(self, cp: int) -> str:
        ch = chr(cp)
        folded = _fold_cluster(ch)
        if ch in _COMPOSING:
            kind = "m"
        elif not folded:
            kind = "d"
        elif unicodedata.combining(ch):
            kind = "m"
        else:
            kind = "." if len(folded) == 1 else "x"
        self[cp] = kind
        return kind


_FOLD1 = _Fold1()
_KIND = _Kind()
_KEEP = str.maketrans({".": "\x01", "d": "\x00"})
_SPECIAL = re.compile(r"[.x]?d*m[md]*|x")
"""A letter with combining marks that fold with it (NFKC composes é, أ), or an expanding
character; everything between is folded by ``str.translate`` (marks that fold to nothing are
deleted there, their offsets left out with ``itertools.compress``)."""


def _plain(text: str, kinds: str, s: int, e: int, parts: list[str], offs: list[int]) -> None:
    """Fold ``text[s:e]``, made only of "." and "d" characters, at C speed."""
    parts.append(text[s:e].translate(_FOLD1))
    k = kinds[s:e]
    if "d" in k:
        offs.extend(itertools.compress(range(s, e), k.translate(_KEEP).encode("latin-1")))
    else:
        offs.extend(range(s, e))


def _fold_chars(text: str) -> tuple[str, list[int]]:
    """Step one: every cluster folded; (folded, raw offset of each folded character)."""
    kinds = text.translate(_KIND)
    n = len(text)
    if "m" not in kinds and "x" not in kinds:
        if "d" not in kinds:
            return text.translate(_FOLD1), list(range(n))
        parts: list[str] = []
        offs: list[int] = []
        _plain(text, kinds, 0, n, parts, offs)
        return parts[0], offs
    parts = []
    offs = []
    pos = 0
    for m in _SPECIAL.finditer(kinds):
        s, e = m.span()
        if s > pos:
            _plain(text, kinds, pos, s, parts, offs)
        folded = _fold_cluster(text[s:e])
        parts.append(folded)
        offs.extend([s] * len(folded))
        pos = e
    if pos < n:
        _plain(text, kinds, pos, n, parts, offs)
    return "".join(parts), offs


_CJK_CLASS = ("\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
              "\uff66-\uff9f\uac00-\ud7af\u1100-\u11ff\U00020000-\U0003ffff\u3005\u3006\u3007")
_JOIN_CLASS = _CJK_CLASS + "\u3000-\u303f\uff00-\uffef!-/:-@\\[-`{-~"
"""Folded characters that may stand for a CJK character or CJK punctuation (full-width ASCII
punctuation folds to ASCII): a single space between two of them is a candidate joint, which
:func:`cjk_joins` decides on the raw characters."""
# The places where step two changes the folded text (a plain single space between two
# ordinary characters, a lone hyphen inside a word and a bare "..." are left alone, so most
# text has few of them): punctuation with whitespace around it or repeated, whitespace before
# ; : ! ?, and whitespace that goes or shrinks.
_JOINTS = (
    # From a space: whitespace before punctuation that drops it, before ; : ! ?, at the end,
    # doubled, or between two CJK characters. The look-ahead right after the first space
    # rejects the common case (one space before a letter) at once.
    re.compile(
        r" (?:(?=[ \-.'\"]) *(?:-+|\.(?: ?\.){2,}|['\"]) *|(?=[ ;:!?]) *(?=[;:!?])| *$"
        rf"|(?= ) *|(?=[{_JOIN_CLASS}])(?<=[{_JOIN_CLASS}] ))"),
    re.compile(r"-(?:-+ *| +)"),  # a dash run, or a hyphen with whitespace after it
    re.compile("\u00ad+ *"),  # soft hyphens: dropped, and a line break after one joins
    re.compile(r"\.(?: ?\.){2,} *"),  # an ellipsis
    re.compile(r"['\"] +"),  # a quotation mark with whitespace after it
)
"""The places where step two changes the folded text (a plain single space between two
ordinary characters, a lone hyphen inside a word and a bare quotation mark are left alone, so
most text has few). Separate patterns, each starting with one literal character: the regex
engine scans for that character at C speed, where one alternation would try every position."""


class _CjkCache(dict):
    def __missing__(self, ch: str) -> bool:
        value = self[ch] = is_cjk(ch)
        return value


_IS_CJK = _CjkCache()


class _CjkPunctuation(dict):
    def __missing__(self, ch: str) -> bool:
        cp = ord(ch)
        value = self[ch] = 0x3000 <= cp <= 0x303F or (
            0xFF00 <= cp <= 0xFFEF and not ch.isalnum())
        return value


_CJK_PUNCT = _CjkPunctuation()


def cjk_joins(folded: str, raw: str) -> bool:
    """Whether whitespace next to this character joins as between CJK characters.

    ``folded`` is the character after the fold, ``raw`` the source character it came from:
    CJK characters count, and so does CJK and full-width punctuation (U+3000–303F, and the
    non-alphanumeric characters of U+FF00–FFEF), judged *before* NFKC, which turns ．into
    ``.``. So the line or paragraph break in 「…住みにくい。⏎住みにくさが…」 is dropped as it is
    between two kanji, and a quote typed without it matches.
    """
    return _IS_CJK[folded] or _CJK_PUNCT[raw]


def _joints(text: str, chars: str, offs: list[int]) -> tuple[str, list[int]]:
    """Step two: hyphenation, dashes, ellipses, quotes and whitespace (see the module doc)."""
    parts: list[str] = []
    out: list[int] = []
    pos = 0
    n = len(chars)
    if chars.startswith(" "):
        pos = n - len(chars.lstrip(" "))
    found = sorted(m.span() for pattern in _JOINTS for m in pattern.finditer(chars, pos))
    for s, e in found:
        if s < pos:
            continue  # inside the previous joint
        if s > pos:
            parts.append(chars[pos:s])
            out.extend(offs[pos:s])
        pos = e
        if not chars[s:e].strip(" "):  # whitespace only
            if e < n and chars[e] in ";:!?":
                continue
            prev = parts[-1][-1] if parts else ""
            nxt = chars[e] if e < n else ""
            if prev and nxt and not (cjk_joins(prev, text[out[-1]])
                                     and cjk_joins(nxt, text[offs[e]])):
                parts.append(" ")
                out.append(offs[s])
            continue
        c0 = s
        while chars[c0] == " ":
            c0 += 1
        lead = chars[c0]
        if lead == "-":
            if (c0 == s and e > c0 + 1 and chars[c0 + 1] == " " and s > 0
                    and chars[s - 1].isalpha() and e < n and chars[e].isalpha()
                    and text[offs[c0]] in _HYPHENS and "\n" in text[offs[c0]:offs[e]]):
                continue  # end-of-line hyphenation: the two halves join
            parts.append("-")
            out.append(offs[c0])
        elif lead == _SHY:
            if e > c0 + 1 and chars[e - 1] == " ":  # whitespace after the soft hyphen
                prev = parts[-1][-1] if parts else ""
                nxt = chars[e] if e < n else ""
                if prev.isalpha() and nxt.isalpha() and "\n" in text[offs[c0]:offs[e]]:
                    continue  # a word broken at a line end: the halves join
                if (c0 == s and prev and prev != " " and nxt
                        and not (_IS_CJK[prev] and _IS_CJK[nxt])):
                    parts.append(" ")
                    out.append(offs[e - 1])
        elif lead == ".":
            dots = [i for i in range(c0, e) if chars[i] == "."][:3]
            parts.append("...")
            out.extend(offs[i] for i in dots)
        else:  # a quotation mark
            parts.append(lead)
            out.append(offs[c0])
    if not parts and pos == 0:
        return chars, offs
    if pos < n:
        parts.append(chars[pos:])
        out.extend(offs[pos:])
    return "".join(parts), out


def normalise_with_offsets(text: str) -> tuple[str, list[int]]:
    """Normalise ``text`` and map every output character to its raw position.

    Returns:
        ``(folded, offsets)`` where ``offsets[i]`` is the raw index of the character that
        produced ``folded[i]`` and ``offsets[len(folded)] == len(text)`` (a sentinel). Use
        :func:`raw_span` to turn a folded range into a raw one.
    """
    chars, offs = _fold_chars(text)
    folded, out = _joints(text, chars, offs)
    if out is offs:
        out = list(offs)
    out.append(len(text))
    return folded, out


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


# ---------------------------------------------------------------------- describing folds
_SPACES_PLAIN = frozenset(" \t\n\r\f\v")
_WIDTH_BLOCK = (0xFF00, 0xFFEF)
_ASCII_PUNCT_FOLD = re.compile(r"--|\s-|-[^\S\n]|\.\s\.|\s['\"]|['\"]\s|\s[;:!?]")
_EOL_HYPHEN = re.compile(r"[^\W\d_][-\u2010\u2011][^\S\n]*\n\s*[^\W\d_]")


def _char_fold_name(ch: str) -> str:
    if ch in _DROP:
        return "invisible"
    if ch in _DIACRITICS:
        return "diacritics"
    if ch in ARABIC_LETTER_VARIANTS:
        return "letter_variant"
    if ch in KANJI_VARIANTS:
        return "kanji_variant"
    if ch in _PUNCT_SOURCES:
        return "punctuation"
    if ch.isspace():
        return "" if ch in _SPACES_PLAIN else "space"
    nfkc = unicodedata.normalize("NFKC", ch)
    if nfkc == ch:
        return ""
    if _WIDTH_BLOCK[0] <= ord(ch) <= _WIDTH_BLOCK[1]:
        return "width"
    if nfkc and nfkc[0] in KANJI_VARIANTS:
        return "kanji_variant"
    return "compatibility"


class _FoldNames(dict):
    def __missing__(self, ch: str) -> str:
        name = self[ch] = _char_fold_name(ch)
        return name


_FOLD_NAME = _FoldNames()


def describe_folds(text: str) -> list[str]:
    """The names of the folds that change ``text`` (case folding and plain whitespace aside).

    Names, in :data:`FOLD_NAMES` order: ``punctuation`` (typographic quotes, dashes, ellipses,
    "--", spacing around them), ``space`` (NBSP, thin and ideographic spaces), ``width``
    (full-width and half-width forms), ``compatibility`` (other NFKC forms: ligatures,
    compatibility ideographs, Kangxi radicals), ``kanji_variant`` (kyūjitai),
    ``diacritics`` (Arabic and Hebrew marks, tatweel), ``letter_variant`` (Arabic alef forms),
    ``hyphenation`` (a word broken at a line end), ``invisible`` (soft hyphens, zero-width and
    bidi controls).

    Example: ``describe_folds("it’s 假名")`` → ``["punctuation", "kanji_variant"]``.
    """
    found = {_FOLD_NAME[ch] for ch in set(text)}
    found.discard("")
    if "punctuation" not in found and _ASCII_PUNCT_FOLD.search(text):
        found.add("punctuation")
    if _EOL_HYPHEN.search(text):
        found.add("hyphenation")
    return [name for name in FOLD_NAMES if name in found]


def folds_between(typed: str, found: str) -> list[str]:
    """The folds that made ``typed`` match ``found`` (both raw; their folds are equal).

    Aligns the two folded texts character by character and names the folds of the raw
    characters that differ, so a curly apostrophe in both is not reported, but a straight
    one against a curly one is. When the folds do not align (they are not equal), the folds
    of either text are returned.
    """
    a, ao = normalise_with_offsets(typed)
    b, bo = normalise_with_offsets(found)
    if a != b:
        return [n for n in FOLD_NAMES if n in set(describe_folds(typed))
                | set(describe_folds(found))]
    names: set[str] = set()
    for i in range(len(a)):
        ca, cb = typed[ao[i]:ao[i + 1]], found[bo[i]:bo[i + 1]]
        if ca.casefold().strip() != cb.casefold().strip():
            names.update(describe_folds(ca))
            names.update(describe_folds(cb))
    if _EOL_HYPHEN.search(typed) or _EOL_HYPHEN.search(found):
        names.add("hyphenation")
    return [n for n in FOLD_NAMES if n in names]
