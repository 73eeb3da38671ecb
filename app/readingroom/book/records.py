"""From source units and contents to bounded records and the Markdown view (``book.md``).

Raw text is the truth: a record is a span of raw unit text, and ``book.md`` is derived from the
same spans. Where an ingester offers a richer Markdown rendering of a whole unit, it is used only
if it *covers* the unit's raw text (its folded characters amount to at least
:data:`COVERAGE_FLOOR` of the raw text's); otherwise the raw text stands in and the unit is
reported in ``markdown_fallback_units``.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field

from .model import Record, SourceDocument, SourceUnit, TocEntry
from .text import normalise, strip_controls

__all__ = ["COVERAGE_FLOOR", "MAX_RECORD_CHARS", "BookText", "build_book_text"]

MAX_RECORD_CHARS = 4000
"""A record is split when longer; parts break at page, paragraph or line boundaries."""
MIN_SPLIT_CHARS = 1200
"""A part is not cut shorter than this unless its section ends."""
COVERAGE_FLOOR = 0.95
WRAP = 100
"""Prose lines of ``book.md`` are soft-wrapped near this width."""

_MD_SYNTAX = re.compile(r"!\[[^\]]*\]\([^)]*\)|\]\([^)]*\)|[#*_>`|\[\]-]")


@dataclass
class BookText:
    """Records, the Markdown view and what the builder noticed."""

    records: list[Record]
    markdown: str
    markdown_fallback_units: list[int] = field(default_factory=list)
    section_count: int = 0


@dataclass(frozen=True)
class _Section:
    heading_path: tuple[str, ...]
    level: int
    title: str | None
    start: tuple[int, int]  # (unit, char)
    end: tuple[int, int]


def _sections(doc: SourceDocument) -> list[_Section]:
    """Contents entries as spans of the source, in reading order."""
    units = doc.units
    last = (len(units) - 1, len(units[-1].text)) if units else (0, 0)
    entries = sorted(
        (e for e in doc.toc if 0 <= e.unit_index < len(units)),
        key=lambda e: (e.unit_index, min(max(e.char_offset, 0), len(units[e.unit_index].text))),
    )
    starts: list[tuple[TocEntry, tuple[int, int]]] = []
    for e in entries:
        pos = (e.unit_index, min(max(e.char_offset, 0), len(units[e.unit_index].text)))
        starts.append((e, pos))
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


def _cut_points(text: str, lo: int, hi: int) -> int:
    """The best place to end a part inside text[lo:hi]: a paragraph, a line, a space."""
    window = text[lo:hi]
    for sep in ("\n\n", "\n", "。", ". ", " "):
        k = window.rfind(sep)
        if k > 0:
            return lo + k + len(sep)
    return hi


def _tidy_end(units: Sequence[SourceUnit], start: tuple[int, int],
              end: tuple[int, int]) -> tuple[int, int]:
    """An end at the very start of a later unit is the end of the unit before it."""
    u, c = end
    while c == 0 and u > start[0]:
        u -= 1
        c = len(units[u].text)
    return u, c


def _split(units: Sequence[SourceUnit], sec: _Section):
    """Split a section into parts of at most MAX_RECORD_CHARS, as ((u, c), (u, c)) spans."""
    parts: list[tuple[tuple[int, int], tuple[int, int]]] = []
    cur_start: tuple[int, int] | None = None
    size = 0
    for u, a, b in _slices(units, sec.start, sec.end):
        if cur_start is None:
            cur_start = (u, a)
        text = units[u].text
        pos = a
        while b - pos + size > MAX_RECORD_CHARS:
            room = MAX_RECORD_CHARS - size
            if size >= MIN_SPLIT_CHARS and room < MIN_SPLIT_CHARS and pos == a:
                # End the part at the page boundary rather than mid-page.
                parts.append((cur_start, (u, a)))
                cur_start, size = (u, a), 0
                continue
            cut = _cut_points(text, pos + max(room // 2, 1), pos + room)
            parts.append((cur_start, (u, cut)))
            cur_start, size, pos = (u, cut), 0, cut
        size += b - pos
    if cur_start is not None:
        parts.append((cur_start, sec.end))
    parts = parts or [(sec.start, sec.end)]
    return [(a, _tidy_end(units, a, b)) for a, b in parts]


def _span_text(units: Sequence[SourceUnit], start: tuple[int, int], end: tuple[int, int]) -> str:
    return "\n".join(units[u].text[a:b] for u, a, b in _slices(units, start, end))


def _covers(markdown: str, raw: str) -> bool:
    raw_n = len(normalise(raw).replace(" ", ""))
    if raw_n == 0:
        return True
    md_n = len(normalise(_MD_SYNTAX.sub("", markdown)).replace(" ", ""))
    return md_n / raw_n >= COVERAGE_FLOOR


def build_book_text(doc: SourceDocument) -> BookText:
    """Cut the document into records and write its Markdown view.

    Records follow the contents; long sections are split (ids ``r0007``, ``r0007-2``, …).
    ``book.md`` carries one heading per section, PDF page markers as HTML comments, and the
    records' text; each record knows its line range in it.
    """
    units = doc.units
    sections = _sections(doc)
    lines: list[str] = []
    if doc.title:
        lines += [f"# {strip_controls(doc.title)}", ""]
    records: list[Record] = []
    fallback: list[int] = []
    whole_unit_md_used: set[int] = set()
    for s_no, sec in enumerate(sections, start=1):
        depth = min(sec.level + (1 if doc.title else 0), 6) if sec.title is not None else 0
        if sec.title is not None:
            lines += [f"{'#' * depth} {_md_escape_heading(sec.title)}", ""]
        for p_no, (start, end) in enumerate(_split(units, sec), start=1):
            rid = f"r{s_no:04d}" if p_no == 1 else f"r{s_no:04d}-{p_no}"
            text = _span_text(units, start, end)
            md_start = len(lines) + 1
            body = _markdown_body(units, start, end, fallback, whole_unit_md_used, sec, depth)
            lines += body
            lines.append("")
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
                    md_line_end=max(md_start, len(lines) - 1),
                )
            )
    markdown = "\n".join(lines).rstrip("\n") + "\n"
    return BookText(records, markdown, sorted(set(fallback)), len(sections))


def _markdown_body(units, start, end, fallback, used, sec, depth: int) -> list[str]:
    out: list[str] = []
    for u, a, b in _slices(units, start, end):
        unit = units[u]
        if unit.kind == "pdf_page" and a == 0:
            label = f' label="{unit.label}"' if unit.label else ""
            out.append(f"<!-- page index={unit.index}{label} -->")
        whole = a == 0 and b == len(unit.text)
        if unit.markdown is not None and whole and u not in used:
            if _covers(unit.markdown, unit.text):
                used.add(u)
                body = _drop_repeated_heading(unit.markdown, sec.title)
                out += _wrap(_nest_headings(body, depth).splitlines())
                continue
            fallback.append(u)
        elif unit.markdown is not None and not whole:
            fallback.append(u)
        out += _wrap(_raw_as_markdown(unit.text[a:b]))
    return out


def _wrap(lines: list[str]) -> list[str]:
    """Soft-wrap long prose lines (Markdown joins them again) so line-based reads can page.

    Headings, table rows, list items and fenced code keep their lines; text without spaces
    (CJK) is cut every :data:`WRAP` characters.
    """
    out: list[str] = []
    fenced = False
    for line in lines:
        if line.startswith(("```", "~~~")):
            fenced = not fenced
        if fenced or len(line) <= WRAP or line.startswith(("#", "|", "<!--")):
            out.append(line)
            continue
        indent = len(line) - len(line.lstrip())
        wrapped = textwrap.wrap(line, WRAP, break_long_words=False, break_on_hyphens=False,
                                subsequent_indent=" " * min(indent + 2, 4) if indent or
                                re.match(r"^\s*([-*+]|\d+[.)])\s", line) else "")
        for piece in wrapped:
            while len(piece) > WRAP * 2:  # no spaces to break at (CJK): cut
                out.append(piece[:WRAP])
                piece = piece[WRAP:]
            out.append(piece)
    return out


def _heading_key(text: str) -> str:
    return re.sub(r"\W+", "", normalise(text))


def _drop_repeated_heading(markdown: str, title: str | None) -> str:
    """Drop the unit's first heading when it repeats the contents entry's title."""
    lines = markdown.strip("\n").splitlines()
    if (title and lines and lines[0].startswith("#")
            and _heading_key(lines[0].lstrip("#")) == _heading_key(title)):
        lines = lines[1:]
    return "\n".join(lines)


def _nest_headings(markdown: str, depth: int) -> str:
    """Push a unit's own ATX headings below the section heading they sit under."""
    if depth <= 0:
        return markdown
    out, fenced = [], False
    for line in markdown.splitlines():
        if line.startswith(("```", "~~~")):
            fenced = not fenced
        m = None if fenced else re.match(r"^(#{1,6})(\s.*)$", line)
        out.append(f"{'#' * min(len(m.group(1)) + depth, 6)}{m.group(2)}" if m else line)
    return "\n".join(out)


def _raw_as_markdown(text: str) -> list[str]:
    """Raw text as Markdown lines: controls stripped, lines that would read as syntax escaped."""
    out = []
    for line in strip_controls(text).splitlines():
        if re.match(r"^\s{0,3}([#>]|[-*+] |\d+[.)] |```|~~~|<!--|---\s*$|===\s*$)", line):
            line = "\\" + line.lstrip()
        out.append(line)
    return out


def _md_escape_heading(title: str) -> str:
    return title.replace("\n", " ").strip()
