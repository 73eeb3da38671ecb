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
from collections.abc import Iterable, Sequence
from itertools import pairwise

from ..furniture import mask_furniture
from ..model import FurnitureSpan
from ..text import normalise

__all__ = ["ContentsJudge", "outline_key"]

_HEADINGS = frozenset({
    "contents", "table of contents", "inhalt", "inhaltsverzeichnis", "table des matières",
    "table des matieres", "sommaire", "índice", "indice", "contenido", "contenidos",
    "sommario", "inhoud", "innehåll", "indholdsfortegnelse", "spis treści", "obsah",
    "содержание", "оглавление", "目次", "目 次", "もくじ", "目录", "目錄", "차례", "목차",
})
_LEADERS = re.compile(r"(?:[.\u00b7\u2024\u2026…_]\s*){3,}")
_PAGE = r"(\d{1,4}|[ivxlcdm]{1,7}|[IVXLCDM]{1,7})"
_NUMBER_ONLY = re.compile(rf"\s*{_PAGE}\s*")
_TRAILING = re.compile(rf"(.*?\S)(?:\s*(?:[.\u00b7\u2024\u2026…_]\s*){{3,}}\s*|\s+){_PAGE}\s*")
_SECTION_NUMBER = re.compile(
    r"\s*(?:(?:chapter|part|section|appendix|kapitel|teil|anhang|chapitre|partie|book)\s+)?"
    r"(?:\d+(?:\.\d+)*\.?|[ivxlc]+\.|[a-z]\.|[a-z](?:\.\d+)+\.?)?\s*[:.\u2013\u2014-]?\s*",
    re.IGNORECASE,
)
_ROMAN = {"i": 1, "v": 5, "x": 10, "l": 50, "c": 100, "d": 500, "m": 1000}


def outline_key(title: str) -> str:
    """An outline or entry title without its section number, normalised for comparison."""
    folded = normalise(title)
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
        lines = [line.replace("\u200b", "").strip() for line in masked.split("\n")]
        lines = [line for line in lines if line]
        if not lines or (not self._previous and len(lines) < 4):
            self._previous = False
            return False
        entries, matched, numbers = self._entries(lines)
        text_lines = sum(1 for line in lines if not _NUMBER_ONLY.fullmatch(line)
                         and not _LEADERS.fullmatch(line))
        rising = sum(1 for a, b in pairwise(numbers) if b >= a)
        monotone = len(numbers) < 2 or rising >= 0.75 * (len(numbers) - 1)
        heading = any(normalise(line).strip(" :") in _HEADINGS for line in lines[:3])
        by_outline = matched >= 3 and matched >= 0.3 * text_lines
        by_heading = heading and entries >= 3 and entries >= 0.4 * text_lines
        runs_on = (self._previous and entries >= 1 and entries >= 0.5 * text_lines
                   and (not numbers or numbers[0] >= self._last_number))
        verdict = bool(monotone and text_lines and (by_outline or by_heading or runs_on))
        self._previous = verdict
        if verdict and numbers:
            self._last_number = numbers[-1]
        return verdict

    def _entries(self, lines: list[str]) -> tuple[int, int, list[int]]:
        """(entries, entries whose title is an outline title, their page numbers in order)."""
        entries = matched = 0
        numbers: list[int] = []
        title: list[str] = []
        for line in lines:
            bare = _NUMBER_ONLY.fullmatch(line)
            if bare:
                if title:
                    entries += 1
                    matched += self._is_outline(" ".join(title))
                    numbers.append(_page_value(bare.group(1)))
                    title = []
                # A bare number before any title is a section number ("1.1" split off).
                continue
            if _LEADERS.fullmatch(line):
                continue
            trailing = _TRAILING.fullmatch(line)
            if trailing and (_LEADERS.search(line) or trailing.group(2).isdigit()):
                head = _LEADERS.sub(" ", trailing.group(1))
                entries += 1
                matched += self._is_outline(" ".join([*title, head]))
                numbers.append(_page_value(trailing.group(2)))
                title = []
                continue
            stripped = _LEADERS.sub(" ", line).strip()
            if title and self._is_outline(" ".join(title)):
                title = []  # the previous title stands alone (a part heading without a page)
            title.append(stripped)
        return entries, matched, numbers

    def _is_outline(self, title: str) -> bool:
        return bool(self._titles) and outline_key(title) in self._titles
