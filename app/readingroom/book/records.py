"""From source units and contents to bounded records and the Markdown view (``book.md``).

Raw text is the truth: a record is a span of raw unit text, and ``book.md`` is derived from the
same spans. Where an ingester renders a unit's structure as Markdown blocks
(``SourceUnit.blocks``, each with its raw span), records are cut at block boundaries and their
Markdown is their blocks' Markdown, so a chapter of any length keeps its paragraphs, emphasis,
lists, quotes, verse lines, tables and notes. A unit with only a whole-unit rendering
(``SourceUnit.markdown``) uses it when one record holds the whole unit. Either rendering is used
only if it *covers* the raw text it stands for (its letters and digits amount to at least
:data:`COVERAGE_FLOOR` of the raw text's); otherwise the raw text stands in, laid out as
paragraphs, and the unit is reported in ``markdown_fallback_units``.

The view, not the records, is tidied for reading:

- one heading per heading: a section's heading line is written once, and a unit's own first
  heading that repeats it is left out;
- running heads, folios and page-break markers are left out of the prose (PDF pages keep their
  ``<!-- page index=… label=… -->`` markers, EPUB printed pages a ``<!-- page label=… -->``
  before the block they begin in); note references in raw text read as ``<sup>…</sup>``; verse
  line numbers stay;
- verse keeps its lines: each verse line is a line of its own ending in a hard break (two
  trailing spaces, no ``<br>``), one stanza per paragraph, a blank line between stanzas. This
  holds for raw text and for verse an ingester gives as one block per line (three or more
  short one-line blocks in a row, most not ending a sentence; short lines of dialogue stay
  paragraphs); a block whose Markdown already breaks its lines is kept as it is;
- an over-long block (a long list, table or paragraph) is cut between items, rows (the table
  header repeated) or sentences where the cut can be placed in the raw text, and the parts of
  a list or paragraph are joined again in the view;
- raw PDF text: a paragraph's wrapped lines are joined into one paragraph (a short line ends a
  paragraph), end-of-line hyphenation ("exam-⏎ple") is joined, paragraphs are separated by a
  blank line, and short lines in a row (contents entries, figure labels, formulas) stay lines
  (hard breaks); raw EPUB text: every raw line is a paragraph, verse as above;
- long lines are soft-wrapped at spaces only, never between two CJK characters (a Markdown
  renderer turns a line break into a space) and never so that a continuation line would read
  as Markdown syntax;
- a PDF page without a text layer appears as a placeholder (and as an empty record of its own,
  in reading order): page index, label, "no text layer — render to read".

A section never mixes contents/navigation units with body units: at a change of
``SourceUnit.role`` a new section begins, with an honest heading (the contents page's own
heading, else "Contents"), and its records carry ``role="contents"``.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from statistics import median
from typing import Any

from .furniture import spans_within
from .ingest.pdf_blocks import book_compounds, line_hyphen
from .model import Record, SourceDocument, SourceUnit, TextSource, TocEntry, UnitRole
from .text import is_cjk, strip_controls

__all__ = ["COVERAGE_FLOOR", "MAX_RECORD_CHARS", "NO_TEXT_LAYER", "BookText", "build_book_text"]

MAX_RECORD_CHARS = 4000
"""A record is split when longer; parts break at block, page, paragraph or line boundaries."""
MIN_SPLIT_CHARS = 1200
"""A part is not cut shorter than this unless its section ends."""
COVERAGE_FLOOR = 0.95
WRAP = 100
"""Prose lines of ``book.md`` are soft-wrapped near this width (at spaces only)."""
NO_TEXT_LAYER = "no text layer — render to read"
"""What the placeholder of an image-only page says (book.md and the Book Skill)."""

_MD_SYNTAX = re.compile(r"!\[[^\]]*\]\([^)]*\)|\]\([^)]*\)|[#*_>`|\[\]-]")
_NOT_LETTERS = re.compile(r"[\W_]+")
_CONTROLS = re.compile("[\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069]")
"""What :func:`.text.strip_controls` removes (checked first: most text has none)."""
_HIDDEN_FURNITURE = frozenset({"running_head", "folio", "page_break"})
_ROLE_TITLES = {"contents": "Contents", "index": "Index"}
"""Roles that never share a section with body text, and the heading one gets without its
own (a back-of-book index is readable but, like contents, out of search by default)."""
_HEADING = re.compile(r"^(#{1,6})(\s.*)$")
_BOLD_LINE = re.compile(r"^(\*\*)([^*\n]{3,40})\*\*$")
_FENCE = ("```", "~~~")
_SYNTAX_START = re.compile(r"^\s{0,3}([#>]|[-*+] |\d+[.)] |```|~~~|<!--|---\s*$|===\s*$)")
_WORD_SYNTAX = re.compile(r"^([#>+=|<]|[-*]+$|\d+[.)]$|```|~~~)")
_LIST_PREFIX = re.compile(r"^((?:\s*>)*\s*)((?:[-*+]|\d+[.)])\s+)?")
_BULLET_START = re.compile(r"^([•◦▪‣·∙–—-]\s|\(?[0-9ivxlcIVXLC]{1,4}[.)]\s)")
_NUMBER = r"(?:\d+(?:\.\d+)*\.?|[IVXLC]+\.|§\s*\d+)"
_NUMBER_LINE = re.compile(rf"(?:^|\n)[ \t]*({_NUMBER})[ \t]*\n?[ \t]*$")
_TITLE_NUMBER = re.compile(rf"^\s*({_NUMBER})(?:\s|$)")
_LEADER = re.compile(r"(?:\.\s?){4,}|…{2,}|_{4,}")
"""A dot leader: a contents entry, never a line of wrapped prose."""
_VERSE_LINE_CHARS = 60
_CJK_CLOSE = frozenset("。！？」』")
_SENTENCE_CLOSE = frozenset(".!?…\"”’'»)]。！？」』")
"""Raw EPUB lines up to this length, three or more in a row, keep their line breaks."""


@dataclass
class BookText:
    """Records, the Markdown view and what the builder noticed."""

    records: list[Record]
    markdown: str
    markdown_fallback_units: list[int] = field(default_factory=list)
    """Units (some or all of) whose Markdown rendering was not used: raw text stands in."""
    section_count: int = 0


@dataclass(frozen=True)
class _Section:
    heading_path: tuple[str, ...]
    level: int
    title: str | None
    start: tuple[int, int]  # (unit, char)
    end: tuple[int, int]
    role: str = "body"


@dataclass(frozen=True)
class _Piece:
    """A stretch of one unit's raw text and how the view shows it."""

    unit: int
    start: int
    end: int
    kind: str
    """``md`` (an atomic rendered block), ``raw`` (raw text, may be cut anywhere sensible),
    ``ident`` (raw text that is Markdown already), ``gap`` (nothing to show) or ``image``
    (the placeholder of an image-only page)."""
    markdown: str = ""
    glued: bool = False
    """The rest of the block before it (a long paragraph or list cut in two): no blank line."""


# --------------------------------------------------------------------------- sections


def _image_only(unit: SourceUnit) -> bool:
    return unit.kind == "pdf_page" and not unit.has_text_layer and not unit.text.strip()


def _sections(doc: SourceDocument) -> list[_Section]:
    """Contents entries as spans of the source, in reading order."""
    units = doc.units
    last = (len(units) - 1, len(units[-1].text)) if units else (0, 0)
    starts: list[tuple[TocEntry, tuple[int, int]]] = []
    for e in doc.toc:
        if 0 <= e.unit_index < len(units):
            text = units[e.unit_index].text
            offset = _with_number(text, min(max(e.char_offset, 0), len(text)), e.title)
            starts.append((e, (e.unit_index, offset)))
    starts.sort(key=lambda item: item[1])
    sections: list[_Section] = []
    if not starts:
        # No contents: one section per unit, named after the unit.
        for u in units:
            title = _unit_title(u)
            sections.append(_Section((title,), 1, title, (u.index, 0), (u.index, len(u.text))))
        return sections
    if starts[0][1] != (0, 0):
        sections.append(_Section(("(front matter)",), 1, None, (0, 0), starts[0][1]))
    stack: list[tuple[int, str]] = []
    for i, (entry, pos) in enumerate(starts):
        end = starts[i + 1][1] if i + 1 < len(starts) else last
        while stack and stack[-1][0] >= entry.level:
            stack.pop()
        title = " ".join(strip_controls(entry.title).split()) or "(untitled)"
        stack.append((entry.level, title))
        sections.append(
            _Section(tuple(t for _, t in stack), entry.level, title, pos, end)
        )
    return sections


def _with_number(text: str, offset: int, title: str) -> int:
    """Move a section start back over a section number printed just before it ("1\\nFoo").

    A contents entry that points at its title's words must not leave the title's number at
    the end of the section before. A title that has a number of its own takes only that one
    (a figure's axis label before a numbered heading stays where it is).
    """
    if offset <= 0:
        return offset
    m = _NUMBER_LINE.search(text, max(0, offset - 24), offset)
    if m is None or m.end() != offset:
        return offset
    own = _TITLE_NUMBER.match(title)
    if own and own.group(1).rstrip(".") != m.group(1).rstrip("."):
        return offset
    return m.start(1)


def _by_role(units: Sequence[SourceUnit], sections: list[_Section]) -> list[_Section]:
    """Split sections where the units' role changes (contents pages never join body text)."""
    out: list[_Section] = []
    for sec in sections:
        u0, u1 = sec.start[0], _tidy_end(units, sec.start, sec.end)[0]
        roles = _run_roles(units, u0, u1)
        if all(r == roles[0] for r in roles):
            role = roles[0]
            title = sec.title
            if role in _ROLE_TITLES and title is None:
                title = _own_heading(units[u0]) or _ROLE_TITLES[role]
                out.append(_Section((title,), sec.level, title, sec.start, sec.end, role))
            else:
                out.append(_Section(sec.heading_path, sec.level, title, sec.start, sec.end,
                                    role))
            continue
        run_start = u0
        for u in range(u0 + 1, u1 + 2):
            if u <= u1 and roles[u - u0] == roles[run_start - u0]:
                continue
            role = roles[run_start - u0]
            start = sec.start if run_start == u0 else (run_start, 0)
            end = sec.end if u > u1 else (u - 1, len(units[u - 1].text))
            if run_start == u0 and (sec.title is not None or role == "body"):
                path, title = sec.heading_path, sec.title
            else:
                unit = units[run_start]
                title = _own_heading(unit) or _ROLE_TITLES.get(role) or _unit_title(unit)
                path = (*sec.heading_path[:-1], title)
            out.append(_Section(path, sec.level, title, start, end, role))
            run_start = u
    return out


def _run_roles(units: Sequence[SourceUnit], u0: int, u1: int) -> list[str]:
    """The roles of units ``u0..u1``; a unit without text goes with the unit before it."""
    known = [None if not units[u].text.strip() and not _image_only(units[u]) else units[u].role
             for u in range(u0, u1 + 1)]
    current = next((r for r in known if r is not None), units[u0].role)
    roles: list[str] = []
    for role in known:
        current = role or current
        roles.append(current)
    return roles


def _own_heading(unit: SourceUnit) -> str | None:
    """The unit's own first heading (from its blocks or its Markdown), as plain text.

    A PDF page without either offers its first line when that reads as a title (short, with
    letters, not a contents entry ending in a page number).
    """
    if unit.kind == "pdf_page" and not unit.blocks and unit.markdown is None:
        hidden = [(s, e, k) for s, e, k in unit.furniture if k in _HIDDEN_FURNITURE]
        text = _view_furniture(unit.text[:400], hidden, 0, min(len(unit.text), 400))
        first = next((line.strip() for line in text.split("\n") if line.strip()), "")
        if 3 <= len(first) <= 40 and re.search(r"[^\W\d_]", first) and not (
                first[-1].isdigit() or _has_leader(first)):
            return first
        return None
    candidates = [md for _, _, md in unit.blocks[:8]] if unit.blocks else (
        (unit.markdown or "").split("\n\n", 8)[:8])
    for n, md in enumerate(candidates):
        m = _HEADING.match(md.strip().split("\n", 1)[0])
        if m is None and n == 0 and unit.kind == "pdf_page":
            m = _BOLD_LINE.match(md.strip())  # a PDF's title in bold type
        if m:
            title = " ".join(_MD_SYNTAX.sub("", m.group(2)).replace("\\", "").split())
            if title:
                return title[:120]
    return None


def _unit_title(unit: SourceUnit) -> str:
    if unit.kind == "pdf_page":
        return f"Page {unit.label or unit.index + 1}"
    if unit.kind == "epub_chapter":
        return f"Chapter {unit.index + 1} ({unit.href})" if unit.href else f"Chapter {unit.index}"
    return f"Section {unit.index + 1}"


def _slices(units: Sequence[SourceUnit], start: tuple[int, int], end: tuple[int, int]):
    """(unit, char_start, char_end) slices covering [start, end)."""
    u0, c0 = start
    u1, c1 = end
    for u in range(u0, u1 + 1):
        text_len = len(units[u].text)
        a = c0 if u == u0 else 0
        b = c1 if u == u1 else text_len
        if b > a or u == u0:
            yield u, a, b


def _span_text(units: Sequence[SourceUnit], start: tuple[int, int], end: tuple[int, int]) -> str:
    return "\n".join(units[u].text[a:b] for u, a, b in _slices(units, start, end))


def _tidy_end(units: Sequence[SourceUnit], start: tuple[int, int],
              end: tuple[int, int]) -> tuple[int, int]:
    """An end at the very start of a later unit is the end of the unit before it (an
    image-only page before it, which has no text, is kept in)."""
    u, c = end
    while c == 0 and u > start[0]:
        u -= 1
        if _image_only(units[u]):
            return u, 0
        c = len(units[u].text)
    return u, c


# --------------------------------------------------------------------------- pieces


def _letters(text: str) -> int:
    return len(_NOT_LETTERS.sub("", text))


def _covers(markdown: str, raw: str) -> bool:
    """Whether ``markdown`` shows (nearly) every letter and digit of ``raw``."""
    raw_n = _letters(raw)
    if raw_n == 0:
        return True
    return _letters(_MD_SYNTAX.sub("", markdown)) / raw_n >= COVERAGE_FLOOR


class _Pieces:
    """Every unit's text as pieces (blocks, the raw gaps between them, whole-unit Markdown)."""

    def __init__(self, units: Sequence[SourceUnit]) -> None:
        self.units = units
        self.fallback: set[int] = set()
        self._cache: dict[int, tuple[list[_Piece], list[int]]] = {}

    def of(self, u: int) -> tuple[list[_Piece], list[int]]:
        if u not in self._cache:
            pieces = self._build(u, self.units[u])
            self._cache[u] = (pieces, [p.start for p in pieces])
        return self._cache[u]

    def _build(self, u: int, unit: SourceUnit) -> list[_Piece]:
        text = unit.text
        if _image_only(unit):
            return [_Piece(u, 0, len(text), "image")]
        blocks = _valid_blocks(unit)
        if blocks:
            if _covers("\n".join(md for _, _, md in blocks),
                       "".join(text[s:e] for s, e, _ in blocks)):
                return self._from_blocks(u, unit, blocks)
            self.fallback.add(u)
        elif unit.markdown is not None:
            if unit.markdown == text:
                return [_Piece(u, 0, len(text), "ident")]
            if len(text) <= MAX_RECORD_CHARS and _covers(unit.markdown, text):
                return [_Piece(u, 0, len(text), "md", unit.markdown)]
            self.fallback.add(u)
        return [_Piece(u, 0, len(text), "raw")]

    def _from_blocks(self, u: int, unit: SourceUnit, blocks) -> list[_Piece]:
        text = unit.text
        out: list[_Piece] = []
        pos = 0
        hidden = [(s, e) for s, e, k in unit.furniture if k in _HIDDEN_FURNITURE]
        for s, e, md in blocks:
            if s > pos:
                out.append(self._gap(u, text, pos, s, hidden))
            # A block (nearly) as long as a record is cut into smaller blocks (list items,
            # table rows, sentences) where its Markdown aligns with the raw text, so that it
            # can share a record with the heading before it; one longer than a record that
            # cannot be cut stands in as raw text, cut as raw text.
            split = _split_block(text, s, e, md) if e - s > _BLOCK_SPLIT else None
            if split is not None:
                out += [_Piece(u, a, b, "md", m, glued=g) for a, b, m, g in split]
            elif e - s > MAX_RECORD_CHARS:
                self.fallback.add(u)
                out.append(_Piece(u, s, e, "raw"))
            else:
                out.append(_Piece(u, s, e, "md", md))
            pos = e
        if pos < len(text):
            out.append(self._gap(u, text, pos, len(text), hidden))
        return out

    @staticmethod
    def _gap(u: int, text: str, a: int, b: int, hidden) -> _Piece:
        """Raw text between blocks: nothing to show when it is only space or furniture."""
        gap = text[a:b]
        if gap.strip():
            for s, e in hidden:
                if s < b and e > a:
                    lo, hi = max(s, a) - a, min(e, b) - a
                    gap = gap[:lo] + " " * (hi - lo) + gap[hi:]
        return _Piece(u, a, b, "raw" if gap.strip() else "gap")


_LETTER_RUN = re.compile(r"[^\W_]+")
_ITEM_START = re.compile(r"^(?:[-*+]|\d+[.)])\s")
_NESTED_ITEM_START = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s")
_SENTENCE_END = re.compile(r"(?<=[.!?;:。！？])\s+|(?<=[。！？])")
_CHUNK_MARKER = re.compile(r"^[\s>|]*(?:(?:[-*+]|\d+[.)])\s+)?")
_BLOCK_TARGET = MAX_RECORD_CHARS // 2
_BLOCK_SPLIT = MAX_RECORD_CHARS - 400
"""Blocks longer than this are cut (when they can be), leaving room for a heading."""


def _chunks(md: str) -> tuple[list[str], str, str, bool] | None:
    """A long block's Markdown as (chunks, separator, repeated header, glued), or None."""
    if "```" in md or "~~~" in md:
        return None
    lines = md.split("\n")
    if "\n\n" in md:
        return md.split("\n\n"), "\n\n", "", False
    if lines[0].startswith("|") and len(lines) > 3 and lines[1].startswith("|"):
        return lines[2:], "\n", "\n".join(lines[:2]), False
    if len(lines) == 1:
        return _SENTENCE_END.split(md), " ", "", True
    if _ITEM_START.match(lines[0]):
        for item in (_ITEM_START, _NESTED_ITEM_START):  # top-level items, else any item
            chunks: list[str] = []
            for line in lines:
                if item.match(line) or not chunks:
                    chunks.append(line)
                else:
                    chunks[-1] += "\n" + line
            if max(len(c) for c in chunks) <= _BLOCK_TARGET:
                break
        return chunks, "\n", "", True
    return lines, "\n", "", True


def _split_block(text: str, s: int, e: int,
                 md: str) -> list[tuple[int, int, str, bool]] | None:
    """Cut one over-long block into blocks of about :data:`_BLOCK_TARGET` raw characters.

    The Markdown is cut between paragraphs, list items, table rows (the header repeated),
    lines or sentences; each cut is placed in the raw text by the first letters of the chunk
    after it, found in order. None when a chunk cannot be placed or is itself too long.
    """
    split = _chunks(md)
    if split is None:
        return None
    chunks, sep, header, glued = split
    chunks = [c for c in chunks if c]
    if len(chunks) < 2:
        return None
    runs = [(m.start(), m.group()) for m in _LETTER_RUN.finditer(text, s, e)]
    letters = "".join(run for _, run in runs)
    run_at: list[int] = []
    acc = 0
    for _, run in runs:
        run_at.append(acc)
        acc += len(run)
    cuts: list[int | None] = [s]
    pos = 0
    for chunk in chunks[1:]:
        key = _NOT_LETTERS.sub("", _MD_SYNTAX.sub("", _CHUNK_MARKER.sub("", chunk).replace(
            "\\", "")))[:24]
        if not key:
            cuts.append(None)
            continue
        k = letters.find(key, pos)
        if k < 0:
            return None
        pos = k + len(key)
        i = bisect.bisect_right(run_at, k) - 1
        raw = runs[i][0] + (k - run_at[i])
        line_start = text.rfind("\n", cuts[-1] if cuts[-1] is not None else s, raw) + 1
        if line_start > 0 and not _LETTER_RUN.search(text, line_start, raw):
            raw = line_start
        cuts.append(raw)
    out: list[tuple[int, int, str, bool]] = []
    group: list[str] = []
    g_start = s
    for i, chunk in enumerate(chunks):
        start = cuts[i]
        if start is not None and group and start - g_start >= _BLOCK_TARGET:
            out.append((g_start, start, sep.join(group), glued and bool(out)))
            g_start, group = start, []
        group.append(chunk if not (header and not group and out) else header + "\n" + chunk)
    out.append((g_start, e, sep.join(group), glued and bool(out)))
    if any(b - a > MAX_RECORD_CHARS or b < a for a, b, _, _ in out):
        return None
    return out


def _valid_blocks(unit: SourceUnit) -> list[tuple[int, int, str]]:
    """The unit's blocks if they are in order, inside the text and do not overlap; else []."""
    pos, n = 0, len(unit.text)
    for s, e, _ in unit.blocks:
        if not (pos <= s <= e <= n):
            return []
        pos = e
    return list(unit.blocks)


def _section_pieces(pieces: _Pieces, units: Sequence[SourceUnit], sec: _Section) -> list[_Piece]:
    """The pieces of ``sec``; a rendered piece cut by the section's edge stands in as raw."""
    out: list[_Piece] = []
    (u0, c0), (u1, c1) = sec.start, _tidy_end(units, sec.start, sec.end)
    for u in range(u0, u1 + 1):
        n = len(units[u].text)
        a = c0 if u == u0 else 0
        b = c1 if u == u1 else n
        unit_pieces, starts = pieces.of(u)
        i = bisect.bisect_left(starts, a)
        if i > 0 and unit_pieces[i - 1].end > a:
            i -= 1
        for p in unit_pieces[i:]:
            if p.start > b or (p.start == b and not (b == n and p.end == b)):
                break
            lo, hi = max(p.start, a), min(p.end, b)
            if lo == p.start and hi == p.end:
                out.append(p)
            elif p.kind in ("md", "image"):
                # A section edge inside a block: that block's raw text stands in, in two parts.
                if hi > lo and units[u].text[lo:hi].strip():
                    pieces.fallback.add(u)
                out.append(_Piece(u, lo, hi, "raw"))
            else:
                out.append(_Piece(u, lo, hi, p.kind))
    return out


# --------------------------------------------------------------------------- records


def _cut_points(text: str, lo: int, hi: int) -> int:
    """The best place to end a part inside text[lo:hi]: a paragraph, a line, a space."""
    window = text[lo:hi]
    for sep in ("\n\n", "\n", "。", ". ", " "):
        k = window.rfind(sep)
        if k > 0:
            return lo + k + len(sep)
    return hi


def _parts(units: Sequence[SourceUnit], pieces: list[_Piece]) -> list[list[_Piece]]:
    """Group a section's pieces into records of at most :data:`MAX_RECORD_CHARS`.

    Rendered blocks stay whole; raw text is cut at a page, paragraph, line or space; an
    image-only page is a record of its own.
    """
    parts: list[list[_Piece]] = []
    cur: list[_Piece] = []
    size = 0

    def close() -> None:
        nonlocal cur, size
        if cur:
            parts.append(cur)
        cur, size = [], 0

    for p in pieces:
        length = p.end - p.start
        if p.kind == "image":
            close()
            parts.append([p])
            continue
        if size + length <= MAX_RECORD_CHARS:
            cur.append(p)
            size += length
            continue
        if p.kind in ("md", "gap"):
            # A heading ending the part goes with the text it heads.
            k = len(cur)
            while k > 0 and (cur[k - 1].kind == "gap" or (
                    cur[k - 1].kind == "md" and cur[k - 1].markdown.startswith("#"))):
                k -= 1
            if k > 0 and k < len(cur) and any(c.kind == "md" for c in cur[k:]):
                carried = cur[k:]
                cur = cur[:k]
                close()
                cur, size = carried, sum(c.end - c.start for c in carried)
            else:
                close()
            cur.append(p)
            size += length
            continue
        text = units[p.unit].text
        pos = p.start
        while p.end - pos + size > MAX_RECORD_CHARS:
            room = MAX_RECORD_CHARS - size
            if size >= MIN_SPLIT_CHARS and room < MIN_SPLIT_CHARS and pos == p.start:
                close()  # end the part at the page or block boundary rather than inside
                continue
            cut = _cut_points(text, pos + max(room // 2, 1), pos + room)
            cur.append(_Piece(p.unit, pos, cut, p.kind))
            close()
            pos = cut
        if p.end > pos or not cur:
            cur.append(p if pos == p.start else _Piece(p.unit, pos, p.end, p.kind))
            size += p.end - pos
    close()
    return parts


def build_book_text(doc: SourceDocument) -> BookText:
    """Cut the document into records and write its Markdown view.

    Records follow the contents; long sections are split (ids ``r0007``, ``r0007-2``, …) at
    block boundaries where the unit's structure is known. ``book.md`` carries one heading per
    section, PDF page markers as HTML comments, and each record's Markdown; each record knows
    its line range in it.
    """
    units = doc.units
    sections = _by_role(units, _sections(doc)) if units else []
    view = _View(units)
    pieces = _Pieces(units)
    lines: list[str] = []
    if doc.title:
        lines += [f"# {_md_escape_heading(strip_controls(doc.title))}", ""]
    records: list[Record] = []
    for s_no, sec in enumerate(sections, start=1):
        depth = min(sec.level + (1 if doc.title else 0), 6) if sec.title is not None else 0
        sec_pieces = _section_pieces(pieces, units, sec)
        nest = _Nesting(sec_pieces, sec.title, depth or (1 if doc.title else 0))
        if sec.title is not None:
            lines += [f"{'#' * depth} {_md_escape_heading(nest.numbered_title or sec.title)}",
                      ""]
        if _stacked(units, sections, s_no):
            continue  # a heading only, where the next section starts: no empty record
        parts = _parts(units, sec_pieces) or [[_Piece(sec.start[0], sec.start[1],
                                                     sec.start[1], "gap")]]
        for p_no, part in enumerate(parts, start=1):
            rid = f"r{s_no:04d}" if p_no == 1 else f"r{s_no:04d}-{p_no}"
            start = (part[0].unit, part[0].start)
            end = (sec.end if p_no == len(parts) and part[-1].kind != "image"
                   else (part[-1].unit, part[-1].end))
            end = _tidy_end(units, start, end)
            md_start = len(lines) + 1
            body = view.render(part, nest)
            if body:
                lines += [*body, ""]
                md_end = len(lines) - 1
            else:  # nothing to show (a heading without text): the record is its heading line
                md_end = len(lines) - 1 if lines and not lines[-1] else len(lines)
                md_start = md_end = max(1, md_end)
            text, furniture, readings = _record_text(units, start, end)
            source, ocr = _text_source(units, start, end)
            records.append(
                Record(
                    record_id=rid,
                    order=len(records),
                    heading_path=sec.heading_path,
                    text=text,
                    unit_start=start[0],
                    char_start=start[1],
                    unit_end=end[0],
                    char_end=end[1],
                    md_line_start=md_start,
                    md_line_end=md_end,
                    role=_record_role(sec.role),
                    furniture=furniture,
                    readings=readings,
                    text_source=source,
                    ocr=ocr,
                )
            )
    markdown = "\n".join(lines).rstrip("\n") + "\n"
    return BookText(records, markdown, sorted(pieces.fallback), len(sections))


def _record_role(role: str) -> UnitRole:
    if role == "contents":
        return "contents"
    return "index" if role == "index" else "body"


def _text_source(units: Sequence[SourceUnit], start: tuple[int, int],
                 end: tuple[int, int]) -> tuple[TextSource, dict[str, Any] | None]:
    """Where a record's text comes from, and for OCR text what read it: the engine label of
    its OCR'd pages, the pages, and their mean word confidence weighted by words."""
    spanned = [units[u] for u, _a, _b in _slices(units, start, end)]
    read = [u for u in spanned if u.text_source == "ocr" and u.ocr]
    if not read:
        return "file", None
    own = [u for u in spanned if u.text.strip() and u.text_source != "ocr"]
    first = read[0].ocr or {}
    weights = [(u.ocr.get("mean_word_confidence"), u.ocr.get("words") or 0) for u in read
               if u.ocr]
    known = [(c, w) for c, w in weights if c is not None]
    words = sum(w for _c, w in known)
    mean = round(sum(c * w for c, w in known) / words, 1) if words else None
    summary = {key: first[key] for key in ("engine", "engine_version", "engine_build",
                                           "language") if key in first}
    summary.update(pages=[u.index for u in read], mean_word_confidence=mean)
    return ("mixed" if own else "ocr"), summary


def _stacked(units: Sequence[SourceUnit], sections: list[_Section], s_no: int) -> bool:
    """Whether PDF section ``s_no`` (1-based) is empty and the next one starts where it does
    (two outline entries at one place): it is shown as a heading, with no record of its own
    (search would match its heading alone and rank it above the text)."""
    sec = sections[s_no - 1]
    if s_no >= len(sections) or sec.start != sec.end:
        return False
    unit = units[sec.start[0]] if sec.start[0] < len(units) else None
    return unit is not None and unit.kind == "pdf_page" and not _image_only(unit) and (
        sections[s_no].start == sec.start)


def _record_text(units: Sequence[SourceUnit], start: tuple[int, int],
                 end: tuple[int, int]) -> tuple[str, tuple, tuple]:
    """The record's raw text (unit slices joined with ``\\n``), its furniture offsets and its
    ruby readings (EPUB; offsets into the record's text)."""
    pieces: list[str] = []
    furniture: list = []
    readings: list = []
    base = 0
    for u, a, b in _slices(units, start, end):
        unit = units[u]
        if unit.furniture:
            furniture += spans_within(unit.furniture, a, b, shift=base - a)
        if unit.readings:
            readings += [(s - a + base, e - a + base, r) for s, e, r in unit.readings
                         if a <= s and e <= b]
        pieces.append(unit.text[a:b])
        base += b - a + 1
    return "\n".join(pieces), tuple(furniture), tuple(readings)


# --------------------------------------------------------------------------- the view


class _Nesting:
    """How a section's own headings sit below its heading line, and which one repeats it."""

    def __init__(self, pieces: list[_Piece], title: str | None, depth: int) -> None:
        self.depth = depth
        self.drop: tuple[int, int, int] | None = None
        self.numbered_title: str | None = None
        """The printed heading, when it repeats the title with a section number the contents
        entry lacks ("2.2 Naming" for "Naming"): the number stays with its heading."""
        levels = []
        for p in pieces:
            if p.kind == "md":
                m = _HEADING.match(p.markdown)
                if m:
                    levels.append(len(m.group(1)))
        base = min(levels) - 1 if levels else 0
        self.repeats: list[tuple[int, int, int]] = []
        """Further heading blocks right after the dropped one that repeat the title again (a
        title printed three times: the contents entry, a label heading, the heading)."""
        if title:
            # A heading among the first few blocks (after a cover image or a chapter label,
            # say), or the first lines of raw text, may repeat the section's title.
            key = _heading_key(title)
            shown = [p for p in pieces if p.kind != "gap"][:6]
            for n, p in enumerate(shown):
                if p.kind in ("raw", "ident"):
                    self.drop = (p.unit, p.start, p.end)  # its lines are dropped only if they match
                    break
                m = _HEADING.match(p.markdown) if p.kind == "md" else None
                if m is None and n == 0 and p.kind == "md":
                    bold = _BOLD_LINE.match(p.markdown.strip())  # a title set in bold type
                    if bold and _same_title(bold.group(2), title, key):
                        self.drop = (p.unit, p.start, p.end)
                        break
                if m and _same_title(m.group(2), title, key):
                    # (A label heading such as "Chapter One" may come before the title.)
                    self.drop = (p.unit, p.start, p.end)
                    printed = _plain_heading(m.group(2))
                    if (_SECTION_NUMBER.match(printed) or _CHAPTER_LABEL.match(printed)) and not (
                            _SECTION_NUMBER.match(title) or _CHAPTER_LABEL.match(title)):
                        self.numbered_title = printed
                    base = len(m.group(1))
                    for q in shown[n + 1:]:
                        again = _HEADING.match(q.markdown) if q.kind == "md" else None
                        if again is None or "\n" in q.markdown.strip() or not _same_title(
                                again.group(2), title, key):
                            break
                        self.repeats.append((q.unit, q.start, q.end))
                    break
        self.base = base
        self.title_key = _heading_key(title) if title else ""

    def drops(self, p: _Piece) -> bool:
        """Whether ``p`` opens with the section's repeated title (left out of the view)."""
        # A raw piece may have been cut since (its end moved); a rendered block never is.
        if p.kind == "md" and (p.unit, p.start, p.end) in self.repeats:
            return True
        return self.drop is not None and self.drop[:2] == (p.unit, p.start) and (
            p.kind != "md" or self.drop[2] == p.end)

    def heading(self, line: str) -> str:
        m = _HEADING.match(line)
        if not m or self.depth <= 0:
            return line
        level = max(self.depth + 1, min(self.depth + len(m.group(1)) - self.base, 6))
        return f"{'#' * min(level, 6)}{m.group(2)}"


class _View:
    """Renders record parts as ``book.md`` lines."""

    def __init__(self, units: Sequence[SourceUnit]) -> None:
        self.units = units
        widths = [len(line) for u in units if u.kind == "pdf_page"
                  for line in u.text.split("\n") if len(line) >= 20]
        self.pdf_width = median(widths) if widths else 0
        # Hyphenated compounds the book prints whole: a word broken after one keeps it.
        self.compounds = book_compounds(u.text for u in units if u.kind == "pdf_page")
        self._mark_offsets: dict[int, list[int]] = {}

    def render(self, part: list[_Piece], nest: _Nesting) -> list[str]:
        out: list[str] = []
        seen: set[int] = set()
        blocks: list[tuple[_Piece, list[str], bool]] = []
        markers: list[list[str]] = []
        for p in part:
            unit = self.units[p.unit]
            if p.unit not in seen:
                seen.add(p.unit)
                if unit.kind == "pdf_page" and p.start == 0:
                    label = f' label="{_comment_safe(unit.label)}"' if unit.label else ""
                    out.append(f"<!-- page index={unit.index}{label} -->")
            if unit.page_marks and not p.glued:
                out += self._page_marks(unit, part, len(blocks))
            markers.append(out)
            # A gap of more than one line break (an empty paragraph) ends a stanza.
            stanza_break = p.kind == "gap" and unit.text[p.start:p.end] not in ("", "\n", " ")
            blocks.append((p, self._piece(p, unit, nest), stanza_break))
            out = []
        lines: list[str] = []
        verse_prev, verse_next = _verse_pieces(blocks)
        for i, (p, block, _) in enumerate(blocks):
            lines += markers[i]
            if not block:
                continue
            glued = p.glued or (i in verse_prev and not markers[i])
            if lines and lines[-1] != "" and not lines[-1].startswith("<!--") and not glued:
                lines.append("")
            if i in verse_next:
                block = [*block[:-1], block[-1] + "  "]
            lines += block
        return _no_dangling_breaks(lines)

    def _piece(self, p: _Piece, unit: SourceUnit, nest: _Nesting) -> list[str]:
        if p.kind == "gap":
            return []
        if p.kind == "image":
            label = f", label {_md_inline(unit.label)}" if unit.label else ""
            return [f"*[Page index {unit.index}{label}: {NO_TEXT_LAYER}]*"]
        if p.kind == "md":
            md = p.markdown.strip("\n")
            if nest.drops(p):
                md = md.split("\n", 1)[1].lstrip("\n") if "\n" in md else ""
            return _render_markdown(md, nest) if md else []
        text = unit.text[p.start:p.end]
        if p.kind == "ident":
            lines = text.strip("\n").split("\n")
            if nest.drops(p):
                lines = _drop_title_lines(lines, nest.title_key, markdown=True)
            md = "\n".join(lines).strip("\n")
            return _render_markdown(md, nest) if md.strip() else []
        text = _view_furniture(text, unit.furniture, p.start, p.end)
        if _CONTROLS.search(text):
            text = strip_controls(text)
        lines = [line.strip() for line in text.split("\n")]
        if nest.drops(p):
            lines = _drop_title_lines(lines, nest.title_key)
        if unit.kind == "pdf_page":
            paragraphs = _pdf_paragraphs(lines, self.pdf_width, self.compounds)
        elif unit.kind == "epub_chapter":
            paragraphs = _line_paragraphs(lines)
        else:
            paragraphs = [[line] for line in lines if line]
        out: list[str] = []
        for para in paragraphs:
            if out:
                out.append("")
            out += _wrap([_escape_line(line) for line in para])
        return out

    def _page_marks(self, unit: SourceUnit, part: list[_Piece], i: int) -> list[str]:
        """EPUB printed pages that begin in ``part[i]`` (or its glued continuation), as
        HTML comments."""
        p = part[i]
        marks = unit.page_marks
        if p.unit not in self._mark_offsets:
            self._mark_offsets[p.unit] = [offset for offset, _ in marks]
        offsets = self._mark_offsets[p.unit]
        end = p.end
        for q in part[i + 1:]:  # glued pieces after p are shown with it
            if q.unit != p.unit or not q.glued:
                break
            end = q.end
        lo = bisect.bisect_left(offsets, p.start)
        hi = bisect.bisect_left(offsets, end)
        return [f'<!-- page label="{_comment_safe(label)}" -->' for _, label in marks[lo:hi]]


def _no_dangling_breaks(lines: list[str]) -> list[str]:
    """A hard break (backslash or two spaces) at the end of a paragraph is removed.

    A block cut in two ends its first part where the Markdown had a line break; CommonMark
    would show a backslash there literally.
    """
    fenced = False
    for i, line in enumerate(lines):
        if line.startswith(_FENCE):
            fenced = not fenced
        if fenced or (i + 1 < len(lines) and lines[i + 1].strip()
                      and not lines[i + 1].startswith("<!--")):
            continue
        if line.endswith("\\") and not line.endswith("\\\\"):
            lines[i] = line[:-1].rstrip()
        elif line.endswith("  "):
            lines[i] = line.rstrip()
    return lines


def _render_markdown(markdown: str, nest: _Nesting) -> list[str]:
    """Rendered Markdown lines: headings nested, prose wrapped, fenced code left alone."""
    out: list[str] = []
    fenced = False
    for line in markdown.split("\n"):
        if line.startswith(_FENCE):
            fenced = not fenced
            out.append(line)
        elif fenced:
            out.append(line)
        else:
            out += _wrap([nest.heading(line)])
    return out


def _view_furniture(text: str, spans, a: int, b: int) -> str:
    """The raw slice as the reader sees it: hidden furniture out, note references marked."""
    if not spans:
        return text
    out, pos = [], a
    for s, e, kind in spans:
        if e <= a or s >= b or s < pos:
            continue
        e = min(e, b)
        if kind in _HIDDEN_FURNITURE:
            out.append(text[pos - a:s - a])
            pos = e
            own_line = (s == a or text[s - a - 1] == "\n") and (e == b or text[e - a] == "\n")
            if own_line and e < b:
                pos = e + 1  # a furniture line goes, not only its characters
        elif kind == "note_ref":
            ref = text[s - a:e - a].strip()
            out.append(text[pos - a:s - a])
            out.append(f"<sup>{ref}</sup>" if ref and "<" not in ref else text[s - a:e - a])
            pos = e
    out.append(text[pos - a:])
    return "".join(out)


def _drop_title_lines(lines: list[str], key: str, markdown: bool = False) -> list[str]:
    """Leave out the first one to three lines when together they repeat the section title."""
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None or not key:
        return lines
    joined = ""
    for k in range(first, min(first + 3, len(lines))):
        line = lines[k]
        if markdown:
            m = _HEADING.match(line)
            if k == first and not m:
                return lines
            line = m.group(2) if m else line
        joined += _heading_key(line)
        if joined == key:
            return lines[:first] + lines[k + 1:]
        if not key.startswith(joined) or markdown:
            break
    return lines


def _pdf_paragraphs(lines: list[str], width: float,
                    compounds: AbstractSet[str] = frozenset()) -> list[list[str]]:
    """A PDF page's lines as paragraphs.

    A full-width line runs on into the next (wrapped prose: joined, end-of-line hyphenation
    joined, no space between CJK); a short line, a line far longer than the text width (a
    paragraph the extractor joined already) and a CJK sentence end end a paragraph. Short
    lines in a row (contents entries, figure labels, formulas, verse) stay lines of one block
    with hard breaks. A short line without closing punctuation after the end of a sentence is
    a heading of its own, not the tail of the paragraph before.
    """
    full = width * 0.8 if width else float("inf")
    paragraphs: list[list[str]] = []
    cur: list[str] = []
    prose = False  # the block in ``cur`` has joined wrapped lines
    prev_full = False

    def flush() -> None:
        nonlocal cur, prose
        if cur:
            paragraphs.append([line + "  " for line in cur[:-1]] + [cur[-1]])
        cur, prose = [], False

    for line in lines:
        if not line:
            flush()
            prev_full = False
            continue
        short = len(line) < full or _has_leader(line)
        last = cur[-1] if cur else ""
        heading_like = short and last[-1:] in ".!?:" and line[-1] not in ".!?:;,)" and (
            line[0].isupper() or line[0].isdigit())
        if cur and prev_full and not _BULLET_START.match(line) and not heading_like:
            how = line_hyphen(last, line, compounds)
            if how is not None:
                cur[-1] = (last[:-1] if how == "drop" else last) + line
            elif (last[-1] >= "\u2e80" or line[0] >= "\u2e80") and (
                    _unspaced(last[-1]) or _unspaced(line[0])):
                cur[-1] = last + line
            else:
                cur[-1] = last + " " + line
            prose = True
        elif cur and short and not prev_full and not prose:
            cur.append(line)
        else:
            flush()
            cur = [line]
            prose = not short  # a long line begins prose, never a block of short lines
        # Wrapped lines are about as long as the text width; a line much longer is a whole
        # paragraph already (the extractor joined it), and a CJK sentence end ends one too.
        prev_full = not short and len(line) <= full * 1.5 and line[-1] not in _CJK_CLOSE
    flush()
    return paragraphs


def _has_leader(line: str) -> bool:
    if "..." in line or ". . ." in line or "……" in line or "____" in line:
        return _LEADER.search(line) is not None
    return False


def _unspaced(ch: str) -> bool:
    """A character of a script written without spaces between words (Chinese, Japanese)."""
    if "\u3000" <= ch <= "\u303f" or "\uff00" <= ch <= "\uffef":
        return True  # CJK punctuation, full-width forms
    return is_cjk(ch) and not ("\uac00" <= ch <= "\ud7af" or "\u1100" <= ch <= "\u11ff")


def _is_verse(lines: list[str]) -> bool:
    """Whether a run of one-line blocks reads as verse (or lines printed as lines).

    Three or more short lines, most of them not ending a sentence: verse lines end with a word,
    a comma or a semicolon, where short paragraphs of dialogue end with a full stop.
    """
    if len(lines) < 3 or any(len(line) > _VERSE_LINE_CHARS for line in lines):
        return False
    open_ = sum(1 for line in lines if line.rstrip()[-1:] not in _SENTENCE_CLOSE)
    return open_ * 2 >= len(lines)


def _verse_pieces(blocks: list[tuple[_Piece, list[str], bool]]) -> tuple[set[int], set[int]]:
    """Rendered one-line blocks that form verse runs (kept as hard-broken lines of a stanza).

    Returns the indexes of those with a verse line before them and of those with one after.
    """
    verse_prev: set[int] = set()
    verse_next: set[int] = set()
    run: list[int] = []

    def flush() -> None:
        if _is_verse([blocks[i][1][0] for i in run]):
            verse_prev.update(run[1:])
            verse_next.update(run[:-1])
        run.clear()

    for i, (p, block, stanza_break) in enumerate(blocks):
        if p.kind == "gap" and not block and not stanza_break:
            continue
        line = block[0].strip() if len(block) == 1 else ""
        if p.kind == "md" and line and not _SYNTAX_START.match(line) and not line.startswith(
                ("|", "!", "*[", "\\")) and not line.endswith(("  ", "\\")):
            run.append(i)
        else:
            flush()
    flush()
    return verse_prev, verse_next


def _line_paragraphs(lines: list[str]) -> list[list[str]]:
    """Raw EPUB lines (one per block) as paragraphs; verse runs keep their breaks."""
    paragraphs: list[list[str]] = []
    run: list[str] = []

    def flush() -> None:
        if _is_verse(run):
            paragraphs.append([line + "  " for line in run[:-1]] + [run[-1]])
        else:
            paragraphs.extend([line] for line in run)
        run.clear()

    for line in lines:
        if not line:
            flush()
        elif len(line) <= _VERSE_LINE_CHARS:
            run.append(line)
        else:
            flush()
            paragraphs.append([line])
    flush()
    return paragraphs


def _escape_line(line: str) -> str:
    """A raw line that would read as Markdown syntax, escaped."""
    if _SYNTAX_START.match(line):
        return "\\" + line.lstrip()
    return line


def _wrap(lines: list[str]) -> list[str]:
    """Soft-wrap long prose lines (Markdown joins them again) so line-based reads can page.

    Lines break at spaces only: text without spaces (CJK) is never cut, so a renderer never
    puts a space inside a word. Headings, table rows and HTML comments keep their lines; a
    continuation line never starts with something Markdown would read as syntax, and keeps
    the block-quote and list indentation of its line.
    """
    out: list[str] = []
    for line in lines:
        if len(line) <= WRAP or line.startswith(("#", "|", "<!--")):
            out.append(line)
            continue
        out += _wrap_line(line)
    return out


def _wrap_line(line: str) -> list[str]:
    m = _LIST_PREFIX.match(line)
    assert m is not None  # every part of the pattern is optional: it always matches
    quote, marker = m.group(1), m.group(2) or ""
    head = quote + marker
    cont = quote.rstrip() + (" " if quote.strip() else "") + " " * min(len(marker), 4)
    if not quote.strip():
        cont = " " * (len(quote) + min(len(marker), 4))
    rest = line[len(head):]
    out: list[str] = []
    prefix = head
    while len(prefix) + len(rest) > WRAP:
        limit = WRAP - len(prefix)
        k = rest.rfind(" ", 0, limit + 1)
        while k > 0 and not _breakable(rest, k):
            k = rest.rfind(" ", 0, k)
        if k <= 0:  # nothing fits: break at the first possible space after the width
            k = rest.find(" ", limit + 1)
            while k > 0 and not _breakable(rest, k):
                k = rest.find(" ", k + 1)
            if k <= 0:
                break
        out.append(prefix + rest[:k])
        rest, prefix = rest[k + 1:], cont
    out.append(prefix + rest)
    return out


def _breakable(rest: str, k: int) -> bool:
    """Whether the single space at ``rest[k]`` may become a line break."""
    if rest[k - 1] == " " or k + 1 >= len(rest) or rest[k + 1] == " ":
        return False  # runs of spaces (and hard-break spaces) stay as they are
    end = rest.find(" ", k + 1)
    return not _WORD_SYNTAX.match(rest[k + 1:end if end >= 0 else len(rest)])


def _heading_key(text: str) -> str:
    # A leading section number ("2.2 Naming") is not part of the title the outline may give
    # without it ("Naming"): the printed heading still repeats the section's title.
    text = _SECTION_NUMBER.sub("", text.replace("\\", ""), count=1)
    return _NOT_LETTERS.sub("", _MD_SYNTAX.sub("", text).casefold())


_SECTION_NUMBER = re.compile(r"^\W*\d+(?:\.\d+)*\.?\s+")
_CHAPTER_LABEL = re.compile(
    r"^\W*(?:(?:chapter|part|section|book|lecture|appendix|kapitel|teil|abschnitt|chapitre|"
    r"partie|cap[ií]tulo|capitolo|parte|hoofdstuk|rozdział|глава|часть)\s+"
    r"(?:\d+(?:\.\d+)*|[ivxlcdm]+|[a-z])\b[.:]?|第[0-9０-９一二三四五六七八九十百千]+[章節部編回])\s*",
    re.IGNORECASE)
"""A chapter label before a title ("Chapter 1.", "Part IV:", "第3章"): a printed heading
"Chapter 1. Introduction" repeats the contents entry "1. Introduction"."""


def _plain_heading(text: str) -> str:
    """A heading's text without Markdown emphasis or escapes, whitespace collapsed."""
    return " ".join(re.sub(r"\\(?=[\\`*_\[\]#])|(?<!\\)[*_`]+", "", text).split())


def _same_title(printed: str, title: str, key: str) -> bool:
    """Whether a printed heading repeats the section title, chapter labels and section
    numbers aside ("Chapter 1. Introduction" and "1. Introduction" are one title)."""
    if _heading_key(printed) == key:
        return True
    bare = _heading_key(_CHAPTER_LABEL.sub("", _plain_heading(printed), count=1))
    return bool(bare) and bare == _heading_key(_CHAPTER_LABEL.sub("", title, count=1))


def _md_escape_heading(title: str) -> str:
    return title.replace("\n", " ").strip()


def _md_inline(text: str) -> str:
    return re.sub(r"([\\`*_\[\]<>|])", r"\\\1", " ".join(strip_controls(text).split()))


def _comment_safe(text: str) -> str:
    return strip_controls(text).replace("--", "‐‐").replace('"', "'").replace("\n", " ")
