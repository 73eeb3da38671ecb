"""Printed contents pages of a PDF: lists of titles with page numbers.

A page is a contents page when its lines (furniture left out) are entries: a title followed
by a page number, on the same line (after dot leaders or a space) or on the next line (MuPDF
often splits ``1.1 Title . . . . 12`` into three lines), and the page numbers mostly rise.
It must also show it is the book's contents, by one of:

* at least three entries whose titles are outline titles (section numbers aside), making up
  at least 30 % of the page's text lines;
* a contents heading ("Contents", "Table of Contents", "Inhalt", "Inhaltsverzeichnis",
  "Table des matières", "Sommaire", "Índice", "Indice", "Содержание", "目次", …) among its
  first lines, and at least three entries making up at least 40 % of its text lines;
* it follows a contents page, and entries make up at least half its text lines (a contents
  list that runs on).

A page that merely has a few lines ending in numbers (a table, a list of years) satisfies
none of these.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from itertools import pairwise

from ...furniture import MASK, mask_furniture
from ...model import FurnitureSpan

__all__ = ["ContentsJudge", "outline_key"]

_HEADINGS = frozenset({
    "contents", "table of contents", "inhalt", "inhaltsverzeichnis", "table des matières",
    "table des matieres", "sommaire", "índice", "indice", "contenido", "contenidos",
    "sommario", "inhoud", "innehåll", "indholdsfortegnelse", "spis treści", "obsah",
    "содержание", "оглавление", "目次", "目 次", "もくじ", "目录", "目錄", "차례", "목차",
})
_LEADERS = re.compile(r"(?:[.\u00b7\u2024\u2026…_]\s*){3,}")
_PAGE = r"(\d{1,4}|[ivxlcdm]{1,7}|[IVXLCDM]{1,7})"
_PAGE_TOKEN = re.compile(_PAGE)
_LEADER_CHARS = " .\u00b7\u2024\u2026…_"
_SECTION_NUMBER = re.compile(
    r"\s*(?:(?:chapter|part|section|appendix|kapitel|teil|anhang|chapitre|partie|book)\s+)?"
    r"(?:\d+(?:\.\d+)*\.?|[ivxlc]+\.|[a-z]\.|[a-z](?:\.\d+)+\.?)?\s*[:.\u2013\u2014-]?\s*",
    re.IGNORECASE,
)
_ROMAN = {"i": 1, "v": 5, "x": 10, "l": 50, "c": 100, "d": 500, "m": 1000}
# Cheap test first: a page needs lines ending in a number before its entries are read.
_ENDS_IN_NUMBER = re.compile(r"(?m)(?:\d|(?<![^\W\d_])[ivxlcIVXLC]{1,7})[ \t]*$")


def _fold(text: str) -> str:
    """Compatibility forms, case and spacing folded (enough to compare titles)."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def outline_key(title: str) -> str:
    """An outline or entry title without its section number, folded for comparison."""
    folded = _fold(title)
    match = _SECTION_NUMBER.match(folded)
    rest = folded[match.end():] if match else folded
    return rest.strip(" .:") or folded


def _page_value(token: str) -> int:
    if token.isdigit():
        return int(token)
    total, prev = 0, 0
    for ch in reversed(token.lower()):
        value = _ROMAN.get(ch, 0)
        total = total - value if value < prev else total + value
        prev = max(prev, value)
    return total


class ContentsJudge:
    """Judges pages in reading order (it remembers whether the previous page was contents)."""

    def __init__(self, outline_titles: Iterable[str]) -> None:
        self._titles = {key for key in map(outline_key, outline_titles) if len(key) >= 3}
        self._previous = False
        self._last_number = 0

    def judge(self, text: str, furniture: Sequence[FurnitureSpan] = ()) -> bool:
        """True when ``text`` (one page, furniture spans given) is a printed contents page."""
        masked = mask_furniture(text, furniture) if furniture else text
        ending = len(_ENDS_IN_NUMBER.findall(masked))
        if ending < (1 if self._previous else 3):
            self._previous = False
            return False
        lines = [line.replace(MASK, "").strip() for line in masked.split("\n")]
        lines = [line for line in lines if line]
        if not lines or (not self._previous and len(lines) < 4):
            self._previous = False
            return False
        entries, matched, numbers, text_lines = self._entries(lines)
        rising = sum(1 for a, b in pairwise(numbers) if b >= a)
        monotone = len(numbers) < 2 or rising >= 0.75 * (len(numbers) - 1)
        heading = any(_fold(line).strip(" :") in _HEADINGS for line in lines[:3])
        by_outline = matched >= 3 and matched >= 0.3 * text_lines
        by_heading = heading and entries >= 3 and entries >= 0.4 * text_lines
        runs_on = (self._previous and entries >= 1 and entries >= 0.5 * text_lines
                   and (not numbers or numbers[0] >= self._last_number))
        verdict = bool(monotone and text_lines and (by_outline or by_heading or runs_on))
        self._previous = verdict
        if verdict and numbers:
            self._last_number = numbers[-1]
        return verdict

    def _entries(self, lines: list[str]) -> tuple[int, int, list[int], int]:
        """(entries, entries whose title is an outline title, their page numbers in order,
        text lines). Token tests, not backtracking patterns: this runs on every page that
        has lines ending in numbers (maths does)."""
        entries = matched = text_lines = 0
        numbers: list[int] = []
        title: list[str] = []
        for line in lines:
            parts = line.rsplit(None, 1)
            token = parts[-1]
            page = _PAGE_TOKEN.fullmatch(token) is not None
            if page and len(parts) == 1:
                if title:
                    entries += 1
                    matched += self._is_outline(title)
                    numbers.append(_page_value(token))
                    title = []
                # A bare number before any title is a section number ("1.1" split off).
                continue
            if not line.strip(_LEADER_CHARS):
                continue  # a line of dot leaders between a title and its number
            text_lines += 1
            if page and (token.isdigit() or _LEADERS.search(parts[0])):
                entries += 1
                matched += self._is_outline([*title, parts[0].rstrip(_LEADER_CHARS)])
                numbers.append(_page_value(token))
                title = []
                continue
            title.append(line.rstrip(_LEADER_CHARS) if _LEADERS.search(line) else line)
        return entries, matched, numbers, text_lines

    def _is_outline(self, title: list[str]) -> bool:
        """Whether an entry's title lines end in an outline title (one line, or the last two:
        a section number or a part heading may stand on a line of its own above)."""
        if not self._titles:
            return False
        return any(outline_key(" ".join(title[-n:])) in self._titles
                   for n in (1, 2) if len(title) >= n)
