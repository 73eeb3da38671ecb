"""A Markdown file → one unit per heading section, with a contents entry per heading.

The Markdown *is* the source: a unit's raw text is its lines exactly as written (line endings
made ``\\n``), and ``markdown`` is the same text. A section runs from its heading to the line
before the next heading of *any* level, so units never nest; the record builder bounds them
further. Lines before the first heading form a preamble unit when they hold any text.

Headings are ATX (``#`` to ``######`` after at most three spaces) and Setext (a paragraph
underlined with ``===`` for level 1 or ``---`` for level 2); lines in fenced code blocks and
in front matter are never headings. YAML front matter (``---`` on the first line, up to the
next ``---`` or ``...``) is metadata, not text: it belongs to no unit; its ``title``,
``author``/``authors`` and ``lang``/``language`` keys are read with a small line parser (no
YAML library; nested structures are ignored).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ...core.errors import Code, CoreError
from ..model import SourceDocument, SourceUnit, TocEntry

__all__ = ["read_markdown"]

MAX_MARKDOWN_BYTES = 64 * 1024 * 1024

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_BLOCK_START = re.compile(r"^ {0,3}(?:[-+*][ \t]|\d{1,9}[.)][ \t]|>|#|`{3,}|~{3,}|\||<)")
_FRONT_KEY = re.compile(r"^([A-Za-z_][\w-]*)\s*:\s*(.*)$")
_LIST_ITEM = re.compile(r"^\s+-\s+(.*)$")
_INLINE_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_EMPHASIS = re.compile(r"(\*\*|__|\*|_|`)(?=\S)(.+?)(?<=\S)\1")


@dataclass(frozen=True)
class _Heading:
    line: int
    """Index (0-based) of the section's first line: the heading, or a Setext paragraph's start."""
    level: int
    title: str


def read_markdown(
    path: Path, *, progress: Callable[[int, int], None] | None = None
) -> SourceDocument:
    """Read a Markdown file into heading sections.

    Args:
        path: the ``.md`` / ``.markdown`` file (UTF-8, with or without BOM).
        progress: called with ``(sections done, total)`` after each section.

    Raises:
        CoreError: CORRUPT_SOURCE (not UTF-8), EMPTY_SOURCE (no text), UNSAFE_SOURCE (too big).
    """
    raw = path.read_bytes()
    if len(raw) > MAX_MARKDOWN_BYTES:
        raise CoreError(
            Code.UNSAFE_SOURCE,
            f"The Markdown file is larger than {MAX_MARKDOWN_BYTES // 2**20} MiB.",
            details={"path": str(path), "size": len(raw)},
            remediation="Split the book into smaller files, or convert it to EPUB.",
        )
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CoreError(
            Code.CORRUPT_SOURCE,
            "The Markdown file is not valid UTF-8.",
            details={"path": str(path), "byte_offset": exc.start},
            remediation="Re-save the file as UTF-8 (most editors offer this under 'Save as').",
        ) from None
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the final newline ends the last line; it does not start another
    if not any(line.strip() for line in lines):
        raise CoreError(
            Code.EMPTY_SOURCE,
            "The Markdown file has no text.",
            details={"path": str(path)},
            remediation="Register a file with content.",
        )
    body_start, front = _front_matter(lines)
    headings = _headings(lines, body_start)
    starts = [h.line for h in headings]
    sections: list[tuple[int, int, _Heading | None]] = []
    if not starts or any(line.strip() for line in lines[body_start : starts[0]]):
        first = _first_text_line(lines, body_start)
        sections.append((first, starts[0] if starts else len(lines), None))
    for i, entry in enumerate(headings):
        end = starts[i + 1] if i + 1 < len(starts) else len(lines)
        sections.append((entry.line, end, entry))
    if not any(line.strip() for a, b, _h in sections for line in lines[a:b]):
        raise CoreError(
            Code.EMPTY_SOURCE,
            "The Markdown file has front matter but no text.",
            details={"path": str(path)},
            remediation="Register a file with content.",
        )

    units: list[SourceUnit] = []
    toc: list[TocEntry] = []
    for start, end, heading in sections:
        while end > start + 1 and not lines[end - 1].strip():
            end -= 1  # trailing blank lines belong to no one
        chunk = "\n".join(lines[start:end])
        index = len(units)
        units.append(
            SourceUnit(
                kind="markdown_section",
                index=index,
                text=chunk,
                href=path.name,
                line_start=start + 1,
                line_end=end,
                markdown=chunk,
            )
        )
        if heading is not None:
            toc.append(TocEntry(title=heading.title, level=heading.level, unit_index=index))
        if progress is not None:
            progress(index + 1, len(sections))

    title = front.get("title") or next((h.title for h in headings if h.level == 1), None)
    authors = tuple(a for a in front.get("authors", "").split("\n") if a)
    return SourceDocument(
        format="markdown",
        units=tuple(units),
        toc=tuple(toc),
        title=title,
        authors=authors,
        language=front.get("language") or None,
        metadata={"front_matter": "yes"} if body_start else {},
    )


def _first_text_line(lines: list[str], start: int) -> int:
    for i in range(start, len(lines)):
        if lines[i].strip():
            return i
    return start


def _front_matter(lines: list[str]) -> tuple[int, dict[str, str]]:
    """``(first body line, fields)``; ``(0, {})`` when the file has no front matter."""
    if not lines or lines[0].rstrip() != "---":
        return 0, {}
    for end in range(1, len(lines)):
        if lines[end].rstrip() in ("---", "..."):
            break
    else:
        return 0, {}  # an opening rule with no closing one is a thematic break
    fields: dict[str, str] = {}
    authors: list[str] = []
    key = ""
    for line in lines[1:end]:
        item = _LIST_ITEM.match(line)
        if item and key in ("author", "authors"):
            authors.append(_unquote(item.group(1)))
            continue
        match = _FRONT_KEY.match(line)
        if not match:
            continue
        key, value = match.group(1).lower(), _unquote(match.group(2))
        if key == "title" and value:
            fields["title"] = value
        elif key in ("author", "authors") and value:
            authors.extend(_unquote(a) for a in value.strip("[]").split(","))
        elif key in ("lang", "language") and value:
            fields["language"] = value
    fields["authors"] = "\n".join(a for a in authors if a)
    return end + 1, fields


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1].strip()
    return value


def _headings(lines: list[str], start: int) -> list[_Heading]:
    """Every ATX and Setext heading outside fenced code, in order."""
    headings: list[_Heading] = []
    fence: str | None = None
    paragraph_start: int | None = None
    for i in range(start, len(lines)):
        line = lines[i]
        fence_match = _FENCE.match(line)
        if fence is not None:
            # A closing fence is the fence character alone, at least as many times.
            closing = line.strip() if fence_match else ""
            if set(closing) == {fence[0]} and len(closing) >= len(fence):
                fence = None
            continue
        if fence_match:
            fence = fence_match.group(1)
            paragraph_start = None
            continue
        if not line.strip():
            paragraph_start = None
            continue
        atx = _ATX.match(line)
        if atx:
            headings.append(_Heading(i, len(atx.group(1)), _plain(atx.group(2) or "")))
            paragraph_start = None
            continue
        setext = _SETEXT.match(line)
        if setext and paragraph_start is not None:
            title = " ".join(lines[j].strip(" \t") for j in range(paragraph_start, i))
            level = 1 if setext.group(1)[0] == "=" else 2
            headings.append(_Heading(paragraph_start, level, _plain(title)))
            paragraph_start = None
            continue
        # Only a paragraph can be underlined: not a list item, quote, table or indented code.
        if (
            paragraph_start is None
            and not _BLOCK_START.match(line)
            and not line.startswith(("    ", "\t"))
        ):
            paragraph_start = i
    return headings


def _plain(title: str) -> str:
    """A heading's text without links' targets and emphasis markers."""
    title = _INLINE_LINK.sub(r"\1", title)
    previous = None
    while previous != title:
        previous = title
        title = _EMPHASIS.sub(r"\2", title)
    # ASCII whitespace only: an ideographic space in a CJK title is part of it.
    return re.sub(r"[ \t]+", " ", title).strip(" \t") or "(untitled)"
