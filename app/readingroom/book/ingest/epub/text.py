"""XHTML → raw text: HTML whitespace rules, ruby base text kept, anchors, vertical writing."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ...text import is_cjk
from .document import _local

if TYPE_CHECKING:
    from .package import _Images

__all__: list[str] = []

_XLINK = "http://www.w3.org/1999/xlink"


_HTML_SPACE = re.compile(r"[ \t\n\r\f]+")
_TOKENS = re.compile(r"[ \t\n\r\f]+|[^ \t\n\r\f]+")

_SKIP = frozenset({"script", "style", "head", "title", "template", "noscript", "rt", "rp"})
_BLOCKS = frozenset(
    {
        "address", "article", "aside", "blockquote", "body", "caption", "dd", "details", "dialog",
        "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2",
        "h3", "h4", "h5", "h6", "header", "hgroup", "hr", "html", "legend", "li", "main", "nav",
        "ol", "p", "pre", "section", "summary", "table", "tbody", "tfoot", "thead", "tr", "ul",
    }
)  # fmt: skip
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_CELLS = frozenset({"td", "th"})


def _text_of(element: Any) -> str:
    """The element's text without ruby readings, whitespace collapsed (for titles)."""
    return _collapse("".join(_text_nodes(element)))


def _collapse(text: str) -> str:
    """HTML whitespace (not U+3000, not no-break space) collapsed to single spaces."""
    return _HTML_SPACE.sub(" ", text).strip(" ")


def _text_nodes(element: Any) -> Iterator[str]:
    """Text under ``element`` without ruby readings, scripts or styles."""
    if element.text:
        yield element.text
    for child in element:
        if _local(child) not in _SKIP:
            yield from _text_nodes(child)
        if child.tail:
            yield child.tail


# --- CSS: vertical writing -------------------------------------------------------------------

_VERTICAL = re.compile(r"(?:-epub-|-webkit-)?writing-mode\s*:\s*(?:vertical|tb)", re.IGNORECASE)
_CSS_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)
_CSS_RULE = re.compile(r"([^{}]+)\{([^{}]*)\}")
_COMPOUND_SPLIT = re.compile(r"[\s>+~]+")


def _css_vertical(css: str, classes: set[str]) -> bool:
    """True if a rule sets vertical writing on html, body, :root or one of their classes."""
    if not _VERTICAL.search(css):
        return False
    for selectors, declarations in _CSS_RULE.findall(_CSS_COMMENT.sub("", css)):
        if not _VERTICAL.search(declarations):
            continue
        for selector in selectors.split(","):
            parts = [p for p in _COMPOUND_SPLIT.split(selector.strip()) if p]
            if not parts:
                continue
            last = parts[-1].lower()
            element = re.match(r"[a-z*:]*[a-z]*", last)
            name = element.group(0) if element else ""
            if name in ("html", "body", ":root", "*"):
                return True
            if any(f".{cls.lower()}" in last for cls in classes):
                return True
    return False


def _image_href(element: Any) -> str | None:
    name = _local(element)
    if name == "img":
        return element.get("src")
    if name == "image":
        return element.get(f"{{{_XLINK}}}href") or element.get("href")
    return None


# --- text ------------------------------------------------------------------------------------


def _cjk_like(ch: str) -> bool:
    return is_cjk(ch) or 0x3000 < ord(ch) <= 0x303F or 0xFF01 <= ord(ch) <= 0xFF65


class _TextBuilder:
    """Raw text in document order, HTML whitespace rules applied, with anchor offsets."""

    def __init__(self, images: _Images) -> None:
        self.images = images
        self.parts: list[str] = []
        self.length = 0
        self.last = ""
        self.space = False
        self.space_breaks_line = False
        self.anchors: dict[str, int] = {}
        self.pending: list[str] = []

    def walk(self, element: Any, pre: bool = False) -> None:
        name = _local(element)
        if name in _SKIP:
            return
        for key in ("id", "name") if name == "a" else ("id",):
            value = element.get(key)
            if value and value not in self.anchors and value not in self.pending:
                self.pending.append(value)
        href = _image_href(element)
        if href is not None:
            self.images.resolve(href)
        block = name in _BLOCKS
        if block:
            self.newline()
        if name == "br":
            self.hard_break()
        elif name in _CELLS and self.last not in ("", "\n"):
            self.space = True
        pre = pre or name == "pre"
        if element.text:
            self.add(element.text, pre)
        for child in element:
            self.walk(child, pre)
            if child.tail:
                self.add(child.tail, pre)
        if block:
            self.newline()

    def add(self, text: str, pre: bool) -> None:
        if pre:
            for line_no, line in enumerate(text.split("\n")):
                if line_no:
                    self.hard_break()
                if line:
                    self.emit(line, spaced=False)
            return
        for token in _TOKENS.findall(text):
            if token[0] in " \t\n\r\f":
                self.space = True
                self.space_breaks_line = self.space_breaks_line or "\n" in token or "\r" in token
            else:
                self.emit(token, spaced=True)

    def emit(self, token: str, *, spaced: bool) -> None:
        # CSS Text: a source line break between two CJK characters renders as nothing.
        if (
            spaced
            and self.space
            and self.last not in ("", "\n")
            and not (self.space_breaks_line and _cjk_like(self.last) and _cjk_like(token[0]))
        ):
            self.parts.append(" ")
            self.length += 1
        self.space = False
        self.space_breaks_line = False
        for anchor in self.pending:
            self.anchors[anchor] = self.length
        self.pending.clear()
        self.parts.append(token)
        self.length += len(token)
        self.last = token[-1]

    def newline(self) -> None:
        self.space = False
        self.space_breaks_line = False
        if self.last not in ("", "\n"):
            self.parts.append("\n")
            self.length += 1
            self.last = "\n"

    def hard_break(self) -> None:
        self.space = False
        self.space_breaks_line = False
        if self.last != "":
            self.parts.append("\n")
            self.length += 1
            self.last = "\n"

    def finish(self) -> tuple[str, dict[str, int]]:
        text = "".join(self.parts).rstrip()
        for anchor in self.pending:
            self.anchors[anchor] = len(text)
        anchors = {key: min(offset, len(text)) for key, offset in self.anchors.items()}
        return text, anchors
