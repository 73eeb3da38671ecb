"""The Markdown of a chapter's blocks: leaves (paragraphs, headings, code) and the containers
that combine them (lists, block quotes, tables, notes).

The walk in :mod:`.text` produces the raw text and, in the same pass, one Markdown leaf per
block element with its raw span; the functions here only compose strings, so the raw offsets
of every block are the ones the raw text was built with.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = [
    "LINE_BREAK",
    "Frame",
    "code_span",
    "combine_frame",
    "footnote_ref",
    "leaf_markdown",
    "md_escape",
]

_MD_ESCAPE = re.compile(r"([\\`*_\[\]])")
_MD_SPECIAL = re.compile(r"[\\`*_\[\]]")
_MD_LINE_START = re.compile(r"^(#|>|[-+=](?=\s|$)|\d+[.)](?=\s|$))", re.MULTILINE)
_LIST_BLOCK = re.compile(r"(?:- |\d+\. )")
_SPACES = re.compile(" {2,}")
LINE_BREAK = "\x00"  # a <br> inside a leaf, until the leaf's lines are tidied
_SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")

Piece = tuple[int, int, str]
"""``(raw start, raw end, markdown)``: a finished leaf or container."""


def md_escape(text: str) -> str:
    return _MD_ESCAPE.sub(r"\\\1", text) if _MD_SPECIAL.search(text) else text


def leaf_markdown(text: str, heading: int) -> str:
    """A paragraph's or heading's Markdown from its inline Markdown (``LINE_BREAK`` for <br>)."""
    lines = [_SPACES.sub(" ", part).strip(" ") for part in text.split(LINE_BREAK)]
    while lines and not lines[-1].strip():
        lines.pop()
    while lines and not lines[0].strip():
        lines.pop(0)
    if heading:
        title = _SPACES.sub(" ", " ".join(lines))
        return f"{'#' * heading} {title}" if title else ""
    return _MD_LINE_START.sub(r"\\\1", "\\\n".join(lines))


def code_span(text: str) -> str:
    code = text.strip("\n")
    fence = "````" if "```" in code else "```"
    return f"{fence}\n{code}\n{fence}" if code else ""


def footnote_ref(label: str, linked: bool) -> str:
    """A note reference: a footnote reference when its note is in the chapter, else raised."""
    if linked:
        return f"[^{label}]"
    tail = label.rsplit(".", 1)[-1]
    return tail.translate(_SUPERSCRIPT) if tail.isdigit() else f"[{md_escape(tail)}]"


@dataclass
class Frame:
    """A container being built: its kind and the pieces inside it so far."""

    kind: str
    """``root``, ``list``, ``item``, ``quote``, ``table``, ``row``, ``cell``, ``caption``,
    ``stanza`` or ``note``."""
    pieces: list[Piece] = field(default_factory=list)
    ordered: bool = False
    label: str | None = None
    """A note's footnote label (None: a note nothing in the chapter refers to)."""
    rows: list[list[str]] = field(default_factory=list)
    cells: list[str] = field(default_factory=list)
    caption: list[Piece] = field(default_factory=list)


def _span(pieces: list[Piece]) -> tuple[int, int]:
    return pieces[0][0], max(end for _s, end, _m in pieces)


def combine_frame(frame: Frame, parent: Frame) -> list[Piece]:
    """The pieces ``frame`` hands to ``parent`` when it closes."""
    pieces = [p for p in frame.pieces if p[2]]
    kind = frame.kind
    if kind == "table":
        return _table(frame)
    if kind == "caption":
        parent.caption.extend(pieces)
        return []
    if kind == "cell":
        parent.cells.append(_cell(" ".join(p[2] for p in pieces)))
        return pieces
    if kind == "row":
        if parent.kind == "table":
            parent.rows.append(frame.cells)
        return pieces
    if not pieces:
        return []
    start, end = _span(pieces)
    if kind == "item":
        marker = "- "
        if parent.kind == "list" and parent.ordered:
            marker = f"{len(parent.pieces) + 1}. "
        # A nested list follows its item's text directly: the list stays tight.
        body = "".join(
            (("\n" if _LIST_BLOCK.match(p[2]) else "\n\n") if i else "") + p[2]
            for i, p in enumerate(pieces)
        )
        lines = body.split("\n")
        pad = " " * len(marker)
        rest = "".join(f"\n{pad}{line}" if line else "\n" for line in lines[1:])
        return [(start, end, f"{marker}{lines[0]}{rest}")]
    if kind == "list":
        return [(start, end, "\n".join(p[2] for p in pieces))]
    if kind == "quote":
        inner = "\n\n".join(p[2] for p in pieces)
        return [(start, end, "\n".join(f"> {line}".rstrip() for line in inner.split("\n")))]
    if kind == "stanza" and all("\n" not in p[2] for p in pieces):
        # verse lines, one paragraph each in the file: one stanza with hard line breaks
        return [(start, end, "\\\n".join(p[2] for p in pieces))]
    if kind == "note" and frame.label is not None:
        inner = "\n\n".join(p[2] for p in pieces)
        lines = inner.split("\n")
        rest = "".join(f"\n    {line}" if line else "\n" for line in lines[1:])
        return [(start, end, f"[^{frame.label}]: {lines[0]}{rest}")]
    return pieces


def _cell(markdown: str) -> str:
    return " ".join(markdown.replace("\\\n", " ").split()).replace("|", "\\|")


def _table(frame: Frame) -> list[Piece]:
    """A Markdown table; a one-column table is layout, and its cells stay blocks."""
    pieces = [p for p in frame.pieces if p[2]]
    rows = [r for r in frame.rows if any(r)]
    width = max((len(r) for r in rows), default=0)
    if width < 2 or not pieces:
        return sorted(frame.caption + pieces)
    start, end = _span(sorted(frame.caption + pieces))
    lines = ["| " + " | ".join(r + [""] * (width - len(r))) + " |" for r in rows]
    lines.insert(1, "|" + " --- |" * width)
    caption = "\n\n".join(p[2] for p in frame.caption)
    return [(start, end, (caption + "\n\n" if caption else "") + "\n".join(lines))]
