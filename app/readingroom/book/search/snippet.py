"""Snippets: a tidy window of a record's raw text where the query's terms are, matches marked.

The window is the one with the most distinct query terms; among those, the one where more
consecutive query terms stand as typed (the phrase), then the one whose terms are rarer in the
record, then the earliest. A one-term query shows its first match.

Matching follows the index's token semantics (:func:`find_term`), on the stored normalised
text; the offset map carries each match back to the raw text the reader quotes.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re
import unicodedata
from array import array
from collections.abc import Sequence

from ..text import is_cjk
from .tokenize import CHAR_CLASSES, QueryTerm, Segment, plural_stem

__all__ = [
    "SNIPPET_CHARS",
    "find_term",
    "has_hidden",
    "make_snippet",
]

SNIPPET_CHARS = 200
"""About how many characters of raw text a snippet shows."""
_LEAD = 60
_MARK_OPEN, _MARK_CLOSE = "\ufdd0", "\ufdd1"  # noncharacters: never in real text
_MARKS = _MARK_OPEN + _MARK_CLOSE
_MAX_MARKS = 20
_MAX_SPANS = 64  # per term, when choosing the window


@functools.cache
def _hidden_chars() -> dict[int, None]:
    """Characters a snippet must not carry, as a ``str.translate`` table that deletes them:
    format characters (bidi controls, zero-width characters, soft hyphen, BOM, tags) and
    control characters other than whitespace.

    Built once from the Unicode database, over the planes where such characters exist. A
    translate table, not a regex: a character class this size makes the regex engine the
    slowest step of a search.
    """
    return {
        cp: None
        for cp in itertools.chain(range(0x20000), range(0xE0000, 0xE1000))
        if (cat := unicodedata.category(chr(cp))) == "Cf"
        or (cat == "Cc" and not chr(cp).isspace())
    }


@functools.cache
def _hidden_set() -> frozenset[str]:
    """The same characters as a set, for the fast check that a snippet has none."""
    return frozenset(map(chr, _hidden_chars()))


def find_term(norm: str, term: QueryTerm, pos: int) -> tuple[int, int] | None:
    """The first occurrence of ``term`` at or after ``pos``, with the index's token semantics.

    A word matches a whole word; a CJK run matches anywhere inside CJK text; in a multi-part
    phrase the parts must follow each other with only separators between, and a CJK part must
    be a whole run, except that the phrase may begin or end inside a run.
    """
    segments = term.segments
    first = segments[0][1]
    began = pos
    while True:
        start = norm.find(first, pos)
        if start < 0:
            if term.kind != "word":
                return None
            return _find_compound(norm, first, pos) or _find_plural(norm, first, began)
        if term.kind in ("cjk_phrase", "cjk_char"):
            return start, start + len(first)
        end = _match_at(norm, segments, start)
        if end is not None:
            return start, end
        pos = start + 1


@functools.lru_cache(maxsize=256)
def _compound_pattern(word: str) -> re.Pattern[str]:
    return re.compile("[-\u2010\u2011]?".join(map(re.escape, word)))


def _find_compound(norm: str, word: str, pos: int) -> tuple[int, int] | None:
    """A hyphenated compound whose joined whole is ``word`` ("match-box" for "matchbox"),
    as the index finds it."""
    if len(word) < 2 or "-" not in norm:  # the fold makes every in-word hyphen "-"
        return None
    for found in _compound_pattern(word).finditer(norm, pos):
        s, e = found.span()
        if e - s > len(word) and _class_at(norm, s - 1) != "w" and _class_at(norm, e) != "w":
            return s, e
    return None


_WORD_RUN = re.compile(r"[^\W_]+")


def _find_plural(norm: str, word: str, pos: int) -> tuple[int, int] | None:
    """A whole word with the same singular as ``word`` ("metatopic" for "metatopics"), as
    the index finds it (:func:`.tokenize.plural_stem`)."""
    stem = plural_stem(word)
    if stem == word and not word.isascii():
        return None
    root = stem[:-1] if stem.endswith("y") else stem  # study/studies
    if len(root) < 3:
        return None
    at = norm.find(root, pos)
    while at >= 0:
        if _class_at(norm, at - 1) != "w":
            m = _WORD_RUN.match(norm, at)
            if m and plural_stem(m.group()) == stem:
                return m.span()
        at = norm.find(root, at + 1)
    return None


def _class_at(norm: str, i: int) -> str:
    return CHAR_CLASSES[ord(norm[i])] if 0 <= i < len(norm) else " "


def _match_at(norm: str, segments: tuple[Segment, ...], p: int) -> int | None:
    n = len(norm)
    last = len(segments) - 1
    multi = last > 0
    for j, (cjk, text) in enumerate(segments):
        if j:
            while p < n and CHAR_CLASSES[ord(norm[p])] == " ":
                p += 1
            if not norm.startswith(text, p):
                return None
        e = p + len(text)
        if cjk:
            whole_left = multi and (j > 0 or len(text) == 1)
            whole_right = multi and (j < last or len(text) == 1)
            if (whole_left and _class_at(norm, p - 1) == "c") or (
                whole_right and _class_at(norm, e) == "c"
            ):
                return None
        elif _class_at(norm, p - 1) == "w" or _class_at(norm, e) == "w":
            return None
        p = e
    return p


def _best_anchor(norm: str, found: list[tuple[QueryTerm, tuple[int, int]]]) -> tuple[int, int]:
    """The match the snippet starts from: see the module docstring."""
    spans: list[tuple[int, int, int]] = []  # (start, end, term number in the query)
    counts = []
    for k, (term, first) in enumerate(found):
        span: tuple[int, int] | None = first
        mine = 0
        while span is not None and mine < _MAX_SPANS:
            spans.append((span[0], span[1], k))
            mine += 1
            span = find_term(norm, term, span[0] + 1)
        counts.append(mine)
    spans.sort()
    reach = SNIPPET_CHARS - _LEAD
    best: tuple[float, ...] | None = None
    anchor = spans[0]
    j = 0
    for i, (s0, _, _) in enumerate(spans):
        j = max(j, i)
        while j < len(spans) and spans[j][1] <= s0 + reach:
            j += 1
        inside = spans[i:j] or [spans[i]]
        terms = {k for _, _, k in inside}
        ends = {(e, k) for _, e, k in inside}
        phrase = sum(1 for st, _, k in inside
                     if any((e, k - 1) in ends for e in range(st - 2, st)))
        rarity = sum(1.0 / counts[k] for k in terms)
        key = (len(terms), phrase, rarity, -s0)
        if best is None or key > best:
            best, anchor = key, spans[i]
    return anchor[0], anchor[1]


def has_hidden(text: str) -> bool:
    """True when ``text`` has a character a snippet must not carry (checked once per record,
    so a snippet of a clean record skips the check)."""
    return not _hidden_set().isdisjoint(text)


def make_snippet(text: str, norm: str, offmap: tuple[array, array],
                 terms: Sequence[QueryTerm], *, hidden: bool = True,
                 raw_matches: list[tuple[QueryTerm, str]] | None = None
                 ) -> tuple[str, list[str]]:
    """A tidy window of raw text where most query terms are, matches marked, and the terms
    found (see the module docstring). ``hidden=False`` promises that ``text`` has no
    character to hide (:func:`has_hidden`). With ``raw_matches``, each found term and the
    raw text of its first match are appended to it."""
    found = [(term, first_span) for term in terms
             if (first_span := find_term(norm, term, 0)) is not None]
    n = len(norm)
    if found:
        s0, e0 = min(span for _, span in found) if len(found) == 1 else _best_anchor(norm, found)
        ws = max(0, s0 - _LEAD)
        we = min(n, max(ws + SNIPPET_CHARS, e0 + 20))
    else:
        ws, we = 0, min(n, SNIPPET_CHARS)
    spans: list[tuple[int, int]] = []
    for term, first in found:
        span: tuple[int, int] | None = first if first[0] >= ws else find_term(norm, term, ws)
        while span is not None and span[0] < we and len(spans) < _MAX_MARKS:
            if span[1] <= we:
                spans.append(span)
            span = find_term(norm, term, span[0] + 1)
    starts, deltas = offmap

    def raw(i: int) -> int:
        return i + deltas[bisect.bisect_right(starts, i) - 1]

    if raw_matches is not None:
        raw_matches += [(term, text[raw(s):raw(e - 1) + 1]) for term, (s, e) in found]

    pieces = []
    cur = raw(ws)
    stop = raw(we)
    for s, e in _merge(spans):
        rs = raw(s)
        if rs < cur:
            continue
        # End after the last matched character's raw cluster (its combining marks included).
        re_, nxt = raw(e - 1) + 1, raw(e)
        while re_ < nxt and unicodedata.combining(text[re_]):
            re_ += 1
        pieces += [text[cur:rs], _MARK_OPEN, text[rs:re_], _MARK_CLOSE]
        cur = re_
    pieces.append(text[cur:max(cur, stop)])
    joined = "".join(pieces)
    if hidden and not _hidden_set().isdisjoint(joined):
        joined = joined.translate(_hidden_chars())
    body = _tidy(joined)
    if ws > 0:
        body = "…" + body
    if stop < len(text) and not text[stop:].isspace():
        body += "…"
    return body, [term.text for term, _ in found]


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for s, e in sorted(spans):
        if out and s <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def _tidy(s: str) -> str:
    """Whitespace collapsed, none left between two CJK characters; marks become « »."""
    s = " ".join(s.split())
    if " " in s and not s.isascii():
        s = _WIDE_SPACE.sub(_space_between, s)
    return s.replace(_MARK_OPEN, "«").replace(_MARK_CLOSE, "»")


# A space between two characters at or above U+1100, where CJK starts: a candidate to drop.
_WIDE_SPACE = re.compile("(?<=[\u1100-\U0010ffff]) (?=[\u1100-\U0010ffff])")


def _space_between(m: re.Match[str]) -> str:
    text, i = m.string, m.start()
    before = text[:i].rstrip(_MARKS)[-1:]
    after = text[i + 1:].lstrip(_MARKS)[:1]
    return "" if before and after and is_cjk(before) and is_cjk(after) else " "
