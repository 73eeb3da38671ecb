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

The Markdown view itself (how record parts read as ``book.md``) is :mod:`.view`.

A section never mixes contents/navigation units with body units: at a change of
``SourceUnit.role`` a new section begins, with an honest heading (the contents page's own
heading, else "Contents"), and its records carry ``role="contents"``.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .furniture import spans_within
from .model import Record, SourceDocument, SourceUnit, TextSource, TocEntry, UnitRole
from .text import strip_controls
from .view import (
    BOLD_LINE,
    HEADING_LINE,
    HIDDEN_FURNITURE,
    MD_SYNTAX,
    NOT_LETTERS,
    Nesting,
    Piece,
    View,
    has_leader,
    md_escape_heading,
    view_furniture,
)

__all__ = ["COVERAGE_FLOOR", "MAX_RECORD_CHARS", "BookText", "build_book_text"]

MAX_RECORD_CHARS = 4000
"""A record is split when longer; parts break at block, page, paragraph or line boundaries."""
MIN_SPLIT_CHARS = 1200
"""A part is not cut shorter than this unless its section ends."""
COVERAGE_FLOOR = 0.95

_ROLE_TITLES = {"contents": "Contents", "index": "Index"}
"""Roles that never share a section with body text, and the heading one gets without its
own (a back-of-book index is readable but, like contents, out of search by default)."""
_NUMBER = r"(?:\d+(?:\.\d+)*\.?|[IVXLC]+\.|§\s*\d+)"
_NUMBER_LINE = re.compile(rf"(?:^|\n)[ \t]*({_NUMBER})[ \t]*\n?[ \t]*$")
_TITLE_NUMBER = re.compile(rf"^\s*({_NUMBER})(?:\s|$)")


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
        hidden = [(s, e, k) for s, e, k in unit.furniture if k in HIDDEN_FURNITURE]
        text = view_furniture(unit.text[:400], hidden, 0, min(len(unit.text), 400))
        first = next((line.strip() for line in text.split("\n") if line.strip()), "")
        if 3 <= len(first) <= 40 and re.search(r"[^\W\d_]", first) and not (
                first[-1].isdigit() or has_leader(first)):
            return first
        return None
    candidates = [md for _, _, md in unit.blocks[:8]] if unit.blocks else (
        (unit.markdown or "").split("\n\n", 8)[:8])
    for n, md in enumerate(candidates):
        m = HEADING_LINE.match(md.strip().split("\n", 1)[0])
        if m is None and n == 0 and unit.kind == "pdf_page":
            m = BOLD_LINE.match(md.strip())  # a PDF's title in bold type
        if m:
            title = " ".join(MD_SYNTAX.sub("", m.group(2)).replace("\\", "").split())
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
    return len(NOT_LETTERS.sub("", text))


def _covers(markdown: str, raw: str) -> bool:
    """Whether ``markdown`` shows (nearly) every letter and digit of ``raw``."""
    raw_n = _letters(raw)
    if raw_n == 0:
        return True
    return _letters(MD_SYNTAX.sub("", markdown)) / raw_n >= COVERAGE_FLOOR


class _Pieces:
    """Every unit's text as pieces (blocks, the raw gaps between them, whole-unit Markdown)."""

    def __init__(self, units: Sequence[SourceUnit]) -> None:
        self.units = units
        self.fallback: set[int] = set()
        self._cache: dict[int, tuple[list[Piece], list[int]]] = {}

    def of(self, u: int) -> tuple[list[Piece], list[int]]:
        if u not in self._cache:
            pieces = self._build(u, self.units[u])
            self._cache[u] = (pieces, [p.start for p in pieces])
        return self._cache[u]

    def _build(self, u: int, unit: SourceUnit) -> list[Piece]:
        text = unit.text
        if _image_only(unit):
            return [Piece(u, 0, len(text), "image")]
        blocks = _valid_blocks(unit)
        if blocks:
            if _covers("\n".join(md for _, _, md in blocks),
                       "".join(text[s:e] for s, e, _ in blocks)):
                return self._from_blocks(u, unit, blocks)
            self.fallback.add(u)
        elif unit.markdown is not None:
            if unit.markdown == text:
                return [Piece(u, 0, len(text), "ident")]
            if len(text) <= MAX_RECORD_CHARS and _covers(unit.markdown, text):
                return [Piece(u, 0, len(text), "md", unit.markdown)]
            self.fallback.add(u)
        return [Piece(u, 0, len(text), "raw")]

    def _from_blocks(self, u: int, unit: SourceUnit, blocks) -> list[Piece]:
        text = unit.text
        out: list[Piece] = []
        pos = 0
        hidden = [(s, e) for s, e, k in unit.furniture if k in HIDDEN_FURNITURE]
        for s, e, md in blocks:
            if s > pos:
                out.append(self._gap(u, text, pos, s, hidden))
            # A block (nearly) as long as a record is cut into smaller blocks (list items,
            # table rows, sentences) where its Markdown aligns with the raw text, so that it
            # can share a record with the heading before it; one longer than a record that
            # cannot be cut stands in as raw text, cut as raw text.
            split = _split_block(text, s, e, md) if e - s > _BLOCK_SPLIT else None
            if split is not None:
                out += [Piece(u, a, b, "md", m, glued=g) for a, b, m, g in split]
            elif e - s > MAX_RECORD_CHARS:
                self.fallback.add(u)
                out.append(Piece(u, s, e, "raw"))
            else:
                out.append(Piece(u, s, e, "md", md))
            pos = e
        if pos < len(text):
            out.append(self._gap(u, text, pos, len(text), hidden))
        return out

    @staticmethod
    def _gap(u: int, text: str, a: int, b: int, hidden) -> Piece:
        """Raw text between blocks: nothing to show when it is only space or furniture."""
        gap = text[a:b]
        if gap.strip():
            for s, e in hidden:
                if s < b and e > a:
                    lo, hi = max(s, a) - a, min(e, b) - a
                    gap = gap[:lo] + " " * (hi - lo) + gap[hi:]
        return Piece(u, a, b, "raw" if gap.strip() else "gap")


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
        key = NOT_LETTERS.sub("", MD_SYNTAX.sub("", _CHUNK_MARKER.sub("", chunk).replace(
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


def _section_pieces(pieces: _Pieces, units: Sequence[SourceUnit], sec: _Section) -> list[Piece]:
    """The pieces of ``sec``; a rendered piece cut by the section's edge stands in as raw."""
    out: list[Piece] = []
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
                out.append(Piece(u, lo, hi, "raw"))
            else:
                out.append(Piece(u, lo, hi, p.kind))
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


def _parts(units: Sequence[SourceUnit], pieces: list[Piece]) -> list[list[Piece]]:
    """Group a section's pieces into records of at most :data:`MAX_RECORD_CHARS`.

    Rendered blocks stay whole; raw text is cut at a page, paragraph, line or space; an
    image-only page is a record of its own.
    """
    parts: list[list[Piece]] = []
    cur: list[Piece] = []
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
            cur.append(Piece(p.unit, pos, cut, p.kind))
            close()
            pos = cut
        if p.end > pos or not cur:
            cur.append(p if pos == p.start else Piece(p.unit, pos, p.end, p.kind))
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
    view = View(units)
    pieces = _Pieces(units)
    lines: list[str] = []
    if doc.title:
        lines += [f"# {md_escape_heading(strip_controls(doc.title))}", ""]
    records: list[Record] = []
    for s_no, sec in enumerate(sections, start=1):
        depth = min(sec.level + (1 if doc.title else 0), 6) if sec.title is not None else 0
        sec_pieces = _section_pieces(pieces, units, sec)
        nest = Nesting(sec_pieces, sec.title, depth or (1 if doc.title else 0))
        if sec.title is not None:
            lines += [f"{'#' * depth} {md_escape_heading(nest.numbered_title or sec.title)}",
                      ""]
        if _stacked(units, sections, s_no):
            continue  # a heading only, where the next section starts: no empty record
        parts = _parts(units, sec_pieces) or [[Piece(sec.start[0], sec.start[1],
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
