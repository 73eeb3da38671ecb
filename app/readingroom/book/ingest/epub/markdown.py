"""XHTML → the Markdown view of a chapter: headings, paragraphs, lists, quotes, emphasis, images."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from .document import _descendants, _local
from .text import _BLOCKS, _CELLS, _HEADINGS, _SKIP, _collapse, _image_href, _text_nodes

if TYPE_CHECKING:
    from .package import _Images

__all__: list[str] = []

# --- Markdown --------------------------------------------------------------------------------

_MD_ESCAPE = re.compile(r"([\\`*_\[\]])")
_MD_LINE_START = re.compile(r"^(#|>|[-+=](?=\s|$)|\d+[.)](?=\s|$))", re.MULTILINE)
_LIST_BLOCK = re.compile(r"(?:- |\d+\. )")
_BREAK = "\x00"  # marks <br> inside a paragraph until whitespace is collapsed


class _MarkdownRenderer:
    """A Markdown view of a chapter: headings, paragraphs, lists, quotes, emphasis, images."""

    def __init__(self, images: _Images) -> None:
        self.images = images

    def render(self, body: Any) -> str:
        return "\n\n".join(b for b in self.blocks(body) if b.strip())

    def blocks(self, element: Any) -> list[str]:
        out: list[str] = []
        inline: list[str] = []
        if element.text:
            inline.append(_md_text(element.text))
        for child in element:
            name = _local(child)
            if name in _BLOCKS or name in _CELLS:
                self.flush(inline, out)
                out.extend(self.block(child, name))
            else:
                inline.append(self.inline(child))
            if child.tail:
                inline.append(_md_text(child.tail))
        self.flush(inline, out)
        return out

    def flush(self, inline: list[str], out: list[str]) -> None:
        paragraph = _paragraph("".join(inline))
        inline.clear()
        if paragraph:
            out.append(paragraph)

    def block(self, element: Any, name: str) -> list[str]:
        if name in _SKIP:
            return []
        if name in _HEADINGS:
            title = _collapse(_paragraph(self.inline_children(element)).replace("\\\n", " "))
            return [f"{'#' * _HEADINGS[name]} {title}"] if title else []
        if name == "hr":
            return ["* * *"]
        if name == "pre":
            code = "".join(_text_nodes(element)).strip("\n")
            fence = "````" if "```" in code else "```"
            return [f"{fence}\n{code}\n{fence}"] if code else []
        if name in ("ul", "ol"):
            return self.list_block(element, ordered=name == "ol")
        if name == "blockquote":
            inner = "\n\n".join(self.blocks(element))
            return ["\n".join(f"> {line}".rstrip() for line in inner.split("\n"))] if inner else []
        if name == "table":
            return self.table(element)
        return self.blocks(element)

    def list_block(self, element: Any, *, ordered: bool) -> list[str]:
        items: list[str] = []
        number = 1
        for child in element:
            if _local(child) != "li":
                continue
            marker = f"{number}. " if ordered else "- "
            number += 1
            parts = self.blocks(child)
            # A nested list follows its item's text directly: the list stays tight.
            body = "".join(
                (("\n" if _LIST_BLOCK.match(part) else "\n\n") if i else "") + part
                for i, part in enumerate(parts)
            )
            lines = body.split("\n")
            pad = " " * len(marker)
            rest = "".join(f"\n{pad}{line}" if line else "\n" for line in lines[1:])
            items.append(f"{marker}{lines[0]}{rest}")
        return ["\n".join(items)] if items else []

    def table(self, element: Any) -> list[str]:
        rows: list[list[str]] = []
        for tr in _descendants(element, "tr"):
            cells = [
                _collapse(_paragraph(self.inline_children(c)).replace("\\\n", " ")).replace(
                    "|", "\\|"
                )
                for c in tr
                if _local(c) in _CELLS
            ]
            if cells:
                rows.append(cells)
        if not rows:
            return []
        width = max(len(r) for r in rows)
        lines = ["| " + " | ".join(r + [""] * (width - len(r))) + " |" for r in rows]
        lines.insert(1, "|" + " --- |" * width)
        return ["\n".join(lines)]

    def inline_children(self, element: Any) -> str:
        parts = [_md_text(element.text)] if element.text else []
        for child in element:
            parts.append(self.inline(child))
            if child.tail:
                parts.append(_md_text(child.tail))
        return "".join(parts)

    def inline(self, element: Any) -> str:
        name = _local(element)
        if name in _SKIP:
            return ""
        if name == "br":
            return _BREAK
        href = _image_href(element)
        if href is not None:
            path = self.images.resolve(href)
            alt = " ".join((element.get("alt") or "").split())
            alt = alt.replace("[", "(").replace("]", ")")
            return f"![{alt}]({path})" if path else _md_text(alt)
        inner = self.inline_children(element)
        if name in _BLOCKS or name in _CELLS:
            return f" {inner} "
        if not inner.strip():
            return inner
        if name in ("em", "i", "cite", "var", "dfn"):
            return _wrap(inner, "*")
        if name in ("strong", "b"):
            return _wrap(inner, "**")
        if name in ("code", "kbd", "samp", "tt"):
            plain = "".join(_text_nodes(element))
            return f"`{plain}`" if "`" not in plain else f"`` {plain} ``"
        return inner


def _wrap(inner: str, mark: str) -> str:
    stripped = inner.strip()
    lead = inner[: len(inner) - len(inner.lstrip())]
    trail = inner[len(inner.rstrip()) :]
    return f"{lead}{mark}{stripped}{mark}{trail}"


def _md_text(text: str) -> str:
    return _MD_ESCAPE.sub(r"\\\1", text)


def _paragraph(raw: str) -> str:
    lines = [_collapse(part) for part in raw.split(_BREAK)]
    while lines and not lines[-1]:
        lines.pop()
    while lines and not lines[0]:
        lines.pop(0)
    text = "\\\n".join(lines)
    return _MD_LINE_START.sub(r"\\\1", text)
