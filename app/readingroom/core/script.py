"""Script detection of a query term: which writing system did the caller choose?

The answer drives warnings such as ``SCRIPT_LATIN_QUERY``: a romanised term searched against a
corpus indexed in Japanese script under-returns. Digits, punctuation and spaces carry no script,
so an ISBN or an NDC number is ``none``.
"""

from __future__ import annotations

import unicodedata
from enum import StrEnum

__all__ = ["Script", "detect_script", "has_latin"]


class Script(StrEnum):
    """The writing system(s) of a term."""

    latin = "latin"
    kana = "kana"
    han = "han"
    han_kana = "han_kana"
    hangul = "hangul"
    mixed = "mixed"
    none = "none"


def _class_of(ch: str) -> str | None:
    cp = ord(ch)
    if (
        0x3040 <= cp <= 0x30FF  # hiragana, katakana (incl. the prolonged sound mark)
        or 0x31F0 <= cp <= 0x31FF  # katakana phonetic extensions
        or 0xFF66 <= cp <= 0xFF9F  # half-width katakana
        or 0x1B000 <= cp <= 0x1B16F  # kana supplement / extended
    ):
        return "kana"
    if (
        0x4E00 <= cp <= 0x9FFF
        or 0x3400 <= cp <= 0x4DBF
        or 0x20000 <= cp <= 0x3FFFF
        or 0xF900 <= cp <= 0xFAFF  # compatibility ideographs
        or 0x2E80 <= cp <= 0x2FDF  # radicals
        or ch in "々〆〇ヶ"
    ):
        return "han"
    if 0xAC00 <= cp <= 0xD7AF or 0x1100 <= cp <= 0x11FF or 0x3130 <= cp <= 0x318F:
        return "hangul"
    if ch.isalpha():
        name = unicodedata.name(ch, "")
        if "LATIN" in name:
            return "latin"
        return "other"
    return None


def detect_script(term: str) -> Script:
    """Classify a term by the letters in it; digits, spaces and punctuation are ignored."""
    classes = {c for c in map(_class_of, term) if c is not None}
    if not classes:
        return Script.none
    if classes == {"latin"}:
        return Script.latin
    if classes == {"kana"}:
        return Script.kana
    if classes == {"han"}:
        return Script.han
    if classes == {"han", "kana"}:
        return Script.han_kana
    if classes == {"hangul"}:
        return Script.hangul
    return Script.mixed


def has_latin(term: str) -> bool:
    """True when the term contains at least one Latin letter (full-width ones included)."""
    return any(_class_of(c) == "latin" for c in term)
