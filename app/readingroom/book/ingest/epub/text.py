"""XHTML → raw text: HTML whitespace rules, ruby base text kept, anchors, vertical writing."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from ...text import is_cjk
from .document import local_name
from .markdown import (
    LINE_BREAK,
    Frame,
    code_span,
    combine_frame,
    footnote_ref,
    leaf_markdown,
    md_escape,
)

__all__ = [
    "HEADINGS",
    "VERTICAL_CSS",
    "BuiltText",
    "ImageLinks",
    "TextBuilder",
    "css_vertical",
    "text_of",
]

_XLINK = "http://www.w3.org/1999/xlink"


class ImageLinks(Protocol):
    """How a chapter's image references become container paths (:class:`.package.Images`)."""

    def resolve(self, href: str | None) -> str | None:
        """The container path of the image ``href`` names, or None (with a warning) when it
        points outside the container, is not in the manifest or is missing."""
        ...


_HTML_SPACE = re.compile(r"[ \t\n\r\f]+")
_TOKENS = re.compile(r"[ \t\n\r\f]+|[^ \t\n\r\f]+")
_WORD = re.compile(r"[^ \t\n\r\f]+")
_WS = " \t\n\r\f"

_SKIP = frozenset({"script", "style", "head", "title", "template", "noscript", "rt", "rp"})
_BLOCKS = frozenset(
    {
        "address", "article", "aside", "blockquote", "body", "caption", "dd", "details", "dialog",
        "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2",
        "h3", "h4", "h5", "h6", "header", "hgroup", "hr", "html", "legend", "li", "main", "nav",
        "ol", "p", "pre", "section", "summary", "table", "tbody", "tfoot", "thead", "tr", "ul",
    }
)  # fmt: skip
HEADINGS = {f"h{n}": n for n in range(1, 7)}
_CELLS = frozenset({"td", "th"})


def text_of(element: Any) -> str:
    """The element's text without ruby readings, whitespace collapsed (for titles)."""
    return _collapse("".join(_text_nodes(element)))


def _reading_of(ruby: Any) -> str:
    """The reading of a ``<ruby>``: the text of its ``<rt>`` children (with ``<rtc>``)."""
    parts = []
    for child in ruby.iter():
        if local_name(child) == "rt":
            parts.append("".join(child.itertext()))
    return _collapse("".join(parts)).replace(" ", "")


def _collapse(text: str) -> str:
    """HTML whitespace (not U+3000, not no-break space) collapsed to single spaces."""
    return _HTML_SPACE.sub(" ", text).strip(" ")


def _text_nodes(element: Any) -> Iterator[str]:
    """Text under ``element`` without ruby readings, scripts or styles."""
    if element.text:
        yield element.text
    for child in element:
        name = local_name(child)
        if name and name not in _SKIP:
            yield from _text_nodes(child)
        if child.tail:
            yield child.tail


# --- CSS: vertical writing -------------------------------------------------------------------

VERTICAL_CSS = re.compile(r"(?:-epub-|-webkit-)?writing-mode\s*:\s*(?:vertical|tb)", re.IGNORECASE)
_CSS_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)
_CSS_RULE = re.compile(r"([^{}]+)\{([^{}]*)\}")
_COMPOUND_SPLIT = re.compile(r"[\s>+~]+")


def css_vertical(css: str, classes: set[str]) -> bool:
    """True if a rule sets vertical writing on html, body, :root or one of their classes."""
    if not VERTICAL_CSS.search(css):
        return False
    for selectors, declarations in _CSS_RULE.findall(_CSS_COMMENT.sub("", css)):
        if not VERTICAL_CSS.search(declarations):
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
    name = local_name(element)
    if name == "img":
        return element.get("src")
    if name == "image":
        return element.get(f"{{{_XLINK}}}href") or element.get("href")
    return None


# --- furniture -------------------------------------------------------------------------------

_OPS_TYPE = "{http://www.idpf.org/2007/ops}type"
_PAGE_TYPES = frozenset({"pagebreak"})
_PAGE_ROLES = frozenset({"doc-pagebreak"})
# Project Gutenberg's page anchors (``<a class="pageno" title="[Pg 32]">``, ``<span
# class="pagenum">[12]</span>``); no EPUB vocabulary names line numbers, so verse line
# numbers are known by the class names e-book producers give them.
_PAGE_CLASSES = frozenset({"pageno", "pagenum", "page-number", "pagenumber"})
_LINE_CLASSES = frozenset(
    {"linenum", "linenumber", "line-number", "line-num", "lineno", "line-no", "lnum", "linenr"}
)
# class names of note markers: EPUB habit, pandoc, docutils/Sphinx, Project Gutenberg
_NOTE_REF_CLASSES = frozenset(
    {"noteref", "footnote-ref", "footnote-reference", "fnref", "fnanchor"}
)
_BACKLINK = "backlink"
_NOTE_REF_CHARS = re.compile(r"[\s\[\]()]+")
_PAGE_LABEL = re.compile(
    r"^\W*(?:(?:page|pg|pp?)\.?\s*(?=[0-9ivxlcdm]+\W*$))?(.+?)\W*$", re.IGNORECASE
)
_PAGE_ID = re.compile(r"^(?:page|pg|p)[-_.]?([0-9]+|[ivxlcdm]+)$", re.IGNORECASE)
_VERSE_CLASSES = frozenset({"stanza", "verse", "poem", "poetry", "lg", "linegroup"})
_VERSE_TYPES = frozenset({"z3998:poem", "z3998:verse"})
_CONTENTS_TYPES = frozenset({"toc", "landmarks", "page-list"})
_CONTENTS_ROLES = frozenset({"doc-toc", "doc-pagelist"})
_INDEX_TYPES = frozenset({"index", "index-group", "index-entry", "index-entry-list",
                          "index-locator-list", "index-headnotes", "index-term-categories"})
"""The EPUB Indexes vocabulary (EPUB Indexes 1.0): a back-of-book index."""


def _epub_type(element: Any) -> str:
    return element.get(_OPS_TYPE) or element.get("epub:type") or ""


def _page_label(element: Any) -> str | None:
    """A page-break marker's printed page label (title, aria-label, text, id)."""
    for raw in (element.get("title"), element.get("aria-label"), text_of(element)):
        if raw and raw.strip():
            found = _PAGE_LABEL.match(raw.strip())
            label = found.group(1) if found else raw.strip()
            return label[:40]
    found = _PAGE_ID.match(element.get("id") or "")
    return found.group(1) if found else None


def _short_link_text(element: Any) -> str | None:
    """The visible text of a note marker (``1``, ``*``, ``iv``), None if it is not short."""
    text = _NOTE_REF_CHARS.sub("", "".join(_text_nodes(element)))
    return text if 0 < len(text) <= 6 else None


def _is_verse(element: Any) -> bool:
    """A stanza or poem container (its one-line paragraphs are verse lines)."""
    classes = element.get("class")
    if classes and not _VERSE_CLASSES.isdisjoint(classes.lower().split()):
        return True
    types = _epub_type(element)
    return bool(types) and not _VERSE_TYPES.isdisjoint(types.split())


def _is_contents_element(element: Any) -> bool:
    types = set(_epub_type(element).split())
    return bool(types & _CONTENTS_TYPES) or (element.get("role") or "") in _CONTENTS_ROLES


def _is_index_element(element: Any) -> bool:
    types = set(_epub_type(element).split())
    return bool(types & _INDEX_TYPES) or (element.get("role") or "") == "doc-index"


# --- text ------------------------------------------------------------------------------------


def _cjk_like(ch: str) -> bool:
    return is_cjk(ch) or 0x3000 < ord(ch) <= 0x303F or 0xFF01 <= ord(ch) <= 0xFF65


_GROUPS = {"ul": "list", "ol": "list", "li": "item", "blockquote": "quote", "table": "table",
           "tr": "row", "td": "cell", "th": "cell", "caption": "caption"}


class TextBuilder:
    """Raw text in document order, HTML whitespace rules applied, with anchor offsets.

    The same pass marks furniture (page-break markers, note references, verse line numbers),
    page marks, and the Markdown blocks with their raw spans, so none of them can drift from
    the raw text.
    """

    def __init__(self, images: ImageLinks, *, note_prefix: str = "",
                 is_chapter_link: Callable[[str], bool] | None = None,
                 note_target: Callable[[str], tuple[str, str] | None] | None = None,
                 later_notes: dict[str, dict[str, str]] | None = None) -> None:
        self.images = images
        self.parts: list[str] = []
        self.length = 0
        self.last = ""
        self.space = False
        self.space_breaks_line = False
        self.anchors: dict[str, int] = {}
        self.pending: list[str] = []
        self.note_prefix = note_prefix
        self.is_chapter_link = is_chapter_link
        # furniture and page marks
        self.furniture: list[tuple[int, int, str]] = []
        self.page_marks: list[tuple[int, str]] = []
        self.pending_marks: list[str] = []
        self.furniture_depth = 0
        self.furniture_start: int | None = None
        self.note_labels: dict[str, str] = {}
        """Fragment id → footnote label of the notes this chapter's references point at."""
        self.note_target = note_target
        self.notes_defined: set[str] = set()
        self.notes_referenced: set[str] = set()
        self.leaf_note: str | None = None
        self.later_notes: dict[str, dict[str, str]] = {} if later_notes is None else later_notes
        """Container path → {fragment: label}: notes in chapters after this one."""
        # contents detection: characters inside links to other chapters
        self.link_depth = 0
        self.link_chars = 0
        self.links = 0
        self.chars = 0
        self.contents_depth = 0
        self.contents_chars = 0
        self.index_depth = 0
        self.index_chars = 0
        # links (index locators): open <a href> elements, and the finished (start, end, href)
        self.link_open: list[list[Any]] = []
        self.links_found: list[tuple[int, int, str]] = []
        self.readings: list[tuple[int, int, str]] = []
        # Markdown: the open containers, the current leaf and its raw span
        self.frames: list[Frame] = [Frame("root")]
        self.leaf: list[str] = []
        self.leaf_start: int | None = None
        self.leaf_end = 0
        self.heading = 0
        self.pre_leaf = False
        self.md_quiet = 0
        self.md_insert: str | None = None
        self.md_open: list[str] = []
        self.md_pending: list[str] = []
        self.code_depth = 0
        self.md_glue = False
        """The next word joins the Markdown before it without a space (a maths script)."""
        self.closers: dict[str, str] = dict(_CLOSERS)
        self.watch: dict[Any, list[tuple[int, int, str]]] = {}
        """Page-list points inside the chapter (EPUB CFIs): element → (chunk, offset, label)."""

    # -- the walk --

    def walk(self, element: Any, pre: bool = False) -> None:
        name = local_name(element)
        if not name or name in _SKIP:
            return  # a comment or processing instruction says nothing (its tail is text)
        for key in ("id", "name") if name == "a" else ("id",):
            value = element.get(key)
            if value and value not in self.anchors and value not in self.pending:
                self.pending.append(value)
        if name == "img" or name == "image":
            href = _image_href(element)
            if href is not None:
                self.image(element, href)
        attrib = element.attrib
        marked = _OPS_TYPE in attrib or "epub:type" in attrib or "role" in attrib
        contents = marked and _is_contents_element(element)
        self.contents_depth += contents
        in_index = marked and _is_index_element(element)
        self.index_depth += in_index
        furniture = None
        if not self.furniture_depth and (marked or "class" in attrib or name in ("sup", "a")):
            furniture = self.furniture_kind(element, name)
            if furniture is not None:
                self.open_furniture(element, furniture)
        group = _GROUPS.get(name)
        note = self.note_label_of(element, name) if group in (None, "item") else None
        if note is not None:
            group = "note"  # an endnote list item is a note, not an item
        elif self.note_labels and name not in _BLOCKS and furniture is None:
            # a note whose target is inline (<p><a id="fn1" href="#ref1">[1]</a> Text</p>):
            # its block is the note, and its back link leaves the Markdown
            inline_note = self.note_labels.get(attrib.get("id") or "")
            if inline_note is not None and inline_note not in self.notes_defined:
                self.leaf_note = inline_note
                self.notes_defined.add(inline_note)
                if name == "a" and not self.furniture_depth:
                    furniture = _BACKLINK
                    self.open_furniture(element, furniture)
        elif group is None and name in _BLOCKS and (marked or "class" in attrib):
            group = "stanza" if _is_verse(element) else None
        block = name in _BLOCKS
        if block:
            self.newline()
        if block or group is not None:
            self.flush()
            if group is not None:
                frame = Frame(group, ordered=name == "ol")
                if group == "note":
                    frame.label = note
                    if note is not None:
                        self.notes_defined.add(note)
                self.frames.append(frame)
            if name in HEADINGS:
                self.heading = HEADINGS[name]
        if name == "br":
            self.hard_break()
        elif name in _CELLS and self.last not in ("", "\n"):
            self.space = True
        elif name == "hr":
            self.rule()
        if name == "pre" and not pre:
            self.pre_leaf = True
        pre = pre or name == "pre"
        # Emphasis inside a heading stays out of its Markdown: a heading's text is its title
        # (`# Chapter 1`, not `# **Chapter 1**`, which a heading lookup would not match).
        marker = (_INLINE_MARKS.get(name) if not pre and not self.code_depth
                  and not (self.heading and name in _EMPHASIS) else None)
        if marker == "`" and "`" in "".join(_text_nodes(element)):
            marker = None  # a backtick inside code: plain escaped text reads better
        elif name == "mfenced":
            marker = element.get("open", "(")
            self.closers[marker] = element.get("close", ")")
        if marker is not None:
            self.md_pending.append(marker)
            self.code_depth += marker == "`"
        link = self.is_chapter_link is not None and name == "a" and self.chapter_link(element)
        self.link_depth += link
        self.links += link
        href = element.get("href") if name == "a" and furniture is None else None
        if href:
            self.link_open.append([href, None])
        reading = _reading_of(element) if name == "ruby" else ""
        if reading:
            self.link_open.append([None, None])  # where the ruby base starts
        watched = self.watch.get(element) if self.watch else None
        if watched:
            self.pending_marks.extend(label for chunk, _o, label in watched if chunk < 0)
            self.walk_watched(element, pre, watched)
        else:
            if element.text:
                self.add(element.text, pre)
            slots = _MATH_SLOTS.get(name)
            position = 0
            for child in element:
                opener = None
                if slots is not None and isinstance(child.tag, str):
                    opener = slots.get(position)
                    position += 1
                    if opener is not None:
                        self.md_glue = opener != "("
                        self.md_pending.append(opener)
                self.walk(child, pre)
                if opener is not None:
                    self.close_mark(opener)
                if child.tail:
                    self.add(child.tail, pre)
        self.link_depth -= link
        self.contents_depth -= contents
        self.index_depth -= in_index
        if reading:
            _none, start = self.link_open.pop()
            if start is not None and self.length > start:
                self.readings.append((start, self.length, reading))
                if not self.md_quiet and self.leaf:
                    self.leaf.append(f"《{reading}》")  # Aozora Bunko's ruby notation
        if href:
            _href, start = self.link_open.pop()
            if start is not None and self.length > start:
                self.links_found.append((start, self.length, href))
        if marker is not None:
            self.close_mark(marker)
            self.code_depth -= marker == "`"
        if block:
            self.newline()
        if block or group is not None:
            self.flush()
            if group is not None:
                frame = self.frames.pop()
                parent = self.frames[-1]
                parent.pieces.extend(combine_frame(frame, parent))
            self.heading = 0
            self.pre_leaf = False
        if furniture is not None:
            self.close_furniture(furniture)

    def walk_watched(self, element: Any, pre: bool,
                     watched: list[tuple[int, int, str]]) -> None:
        """The walk of an element with page-list points in its text chunks."""
        done: set[int] = set()
        self.add_marked(element.text, pre, watched, 0, done)
        chunk = 0
        for child in element:
            self.walk(child, pre)
            if isinstance(child.tag, str):
                chunk += 1
            self.add_marked(child.tail, pre, watched, chunk, done)

    def add_marked(self, text: str | None, pre: bool, watched: list[tuple[int, int, str]],
                   chunk: int, done: set[int]) -> None:
        marks = [] if chunk in done else sorted((o, lb) for c, o, lb in watched if c == chunk)
        done.add(chunk)
        if not marks:
            if text:
                self.add(text, pre)
        elif text:
            self.add(text, pre, marks)
        else:
            self.pending_marks.extend(label for _o, label in marks)

    def chapter_link(self, element: Any) -> bool:
        href = element.get("href")
        return bool(href) and self.is_chapter_link is not None and self.is_chapter_link(href)

    def add(self, text: str, pre: bool, marks: list[tuple[int, str]] | None = None) -> None:
        if marks:
            # a page begins at the first word at or after each marked character offset
            if pre:
                self.pending_marks.extend(label for _o, label in marks)
                marks = None
            else:
                return self.add_with_marks(text, marks)
        if pre:
            for line_no, line in enumerate(text.split("\n")):
                if line_no:
                    self.hard_break()
                if line:
                    self.emit(line, line, spaced=False)
            return
        body = text.lstrip(_WS)
        if len(body) != len(text):
            lead = text[: len(text) - len(body)]
            self.space = True
            self.space_breaks_line = self.space_breaks_line or "\n" in lead or "\r" in lead
        if not body:
            return
        core = body.rstrip(_WS)
        first = _WORD.match(core).group(0)  # type: ignore[union-attr]
        plain = self.md_quiet or self.code_depth
        self.emit(first, first if plain else md_escape(first), spaced=True)
        rest = core[len(first) :]
        if rest:
            if ("\n" in rest or "\r" in rest) and not rest.isascii():
                self.add_tokens(rest)  # the CJK line-break rule needs each boundary
            else:
                # the first word took the pending anchors, marks and furniture start; the
                # rest of the text node is one collapsed run (speed: no per-word calls)
                run = _HTML_SPACE.sub(" ", rest)
                self.parts.append(run)
                self.length += len(run)
                self.chars += len(run)
                if self.link_depth:
                    self.link_chars += len(run)
                if self.contents_depth:
                    self.contents_chars += len(run)
                if self.index_depth:
                    self.index_chars += len(run)
                if not self.md_quiet:
                    self.leaf.append(run if self.code_depth else md_escape(run))
                self.leaf_end = self.length
                self.last = run[-1]
        if len(core) != len(body):
            tail = body[len(core) :]
            self.space = True
            self.space_breaks_line = "\n" in tail or "\r" in tail

    def add_tokens(self, text: str) -> None:
        tokens = _TOKENS.findall(text)
        plain = self.md_quiet or self.code_depth
        marked = tokens if plain else _TOKENS.findall(md_escape(text))
        for token, md in zip(tokens, marked, strict=True):
            if token[0] in " \t\n\r\f":
                self.space = True
                self.space_breaks_line = self.space_breaks_line or "\n" in token or "\r" in token
            else:
                self.emit(token, md, spaced=True)

    def add_with_marks(self, text: str, marks: list[tuple[int, str]]) -> None:
        tokens = _TOKENS.findall(text)
        plain = self.md_quiet or self.code_depth
        marked = tokens if plain else _TOKENS.findall(md_escape(text))
        position = 0
        waiting = list(marks)
        for token, md in zip(tokens, marked, strict=True):
            end = position + len(token)
            if token[0] in " \t\n\r\f":
                self.space = True
                self.space_breaks_line = self.space_breaks_line or "\n" in token or "\r" in token
            else:
                while waiting and waiting[0][0] < end:
                    self.pending_marks.append(waiting.pop(0)[1])
                self.emit(token, md, spaced=True)
            position = end
        self.pending_marks.extend(label for _o, label in waiting)

    def emit(self, token: str, md: str, *, spaced: bool) -> None:
        # CSS Text: a source line break between two CJK characters renders as nothing.
        if (
            spaced
            and self.space
            and self.last not in ("", "\n")
            and not (self.space_breaks_line and _cjk_like(self.last) and _cjk_like(token[0]))
        ):
            self.parts.append(" ")
            self.length += 1
            if self.leaf and not self.md_glue:
                self.leaf.append(" ")
        self.md_glue = False
        self.space = False
        self.space_breaks_line = False
        if self.pending:
            for anchor in self.pending:
                self.anchors[anchor] = self.length
            self.pending.clear()
        if self.pending_marks:
            for label in self.pending_marks:
                self.page_marks.append((self.length, label))
            self.pending_marks.clear()
        if self.furniture_depth and self.furniture_start is None:
            self.furniture_start = self.length
        if self.link_open:
            for opened in self.link_open:
                if opened[1] is None:
                    opened[1] = self.length
        if self.leaf_start is None:
            self.leaf_start = self.length
        if not self.md_quiet:
            if self.md_pending:
                self.leaf.extend(self.md_pending)
                self.md_open.extend(self.md_pending)
                self.md_pending.clear()
            self.leaf.append(md)
        elif self.md_insert is not None:
            self.leaf.append(self.md_insert)
            self.md_insert = None
        self.parts.append(token)
        self.length += len(token)
        self.chars += len(token)
        if self.link_depth or self.contents_depth or self.index_depth:
            if self.link_depth:
                self.link_chars += len(token)
            if self.contents_depth:
                self.contents_chars += len(token)
            if self.index_depth:
                self.index_chars += len(token)
        self.leaf_end = self.length
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
        self.leaf.append("\n" if self.pre_leaf else LINE_BREAK)

    # -- Markdown --

    def image(self, element: Any, href: str) -> None:
        path = self.images.resolve(href)
        if not path or self.md_quiet:
            return
        alt = " ".join((element.get("alt") or "").split()).replace("[", "(").replace("]", ")")
        if self.leaf and self.space:
            self.leaf.append(" ")
        if self.leaf_start is None:
            self.leaf_start = self.leaf_end = self.length
        self.leaf.append(f"![{alt}]({path})")

    def rule(self) -> None:
        self.frames[-1].pieces.append((self.length, self.length, "* * *"))

    def close_mark(self, marker: str) -> None:
        if self.md_pending and self.md_pending[-1] == marker:
            self.md_pending.pop()  # nothing was emphasised
            self.md_glue = False
        elif marker in self.md_open:
            # the mark closes right after the last word, before a pending space
            self.leaf.append(self.closers.get(marker, marker))
            del self.md_open[len(self.md_open) - 1 - self.md_open[::-1].index(marker)]

    def flush(self) -> None:
        """End the current leaf: its Markdown and raw span go to the innermost container."""
        if self.leaf:
            if self.md_open:
                # emphasis that spans blocks closes here and reopens in the next block
                self.leaf.extend(self.closers.get(m, m) for m in reversed(self.md_open))
                self.md_pending[:0] = self.md_open
                self.md_open = []
            text = "".join(self.leaf)
            markdown = code_span(text) if self.pre_leaf else leaf_markdown(text, self.heading)
            if self.leaf_note is not None and markdown.strip():
                markdown = f"[^{self.leaf_note}]: {markdown}"
                self.leaf_note = None
            if markdown.strip() and self.leaf_start is not None:
                self.frames[-1].pieces.append((self.leaf_start, self.leaf_end, markdown))
        self.leaf = []
        self.leaf_start = None

    # -- furniture --

    def furniture_kind(self, element: Any, name: str) -> str | None:
        types = _epub_type(element)
        role = element.get("role") or ""
        classes = element.get("class") or ""
        if types or role or classes:
            words = set(types.split())
            class_words = set(classes.lower().split())
            if words & _PAGE_TYPES or role in _PAGE_ROLES or class_words & _PAGE_CLASSES:
                return "page_break"
            if "noteref" in words or role == "doc-noteref" or (
                not class_words.isdisjoint(_NOTE_REF_CLASSES)
                and _short_link_text(element) is not None
            ):
                return "note_ref"
            if role == "doc-backlink" or "footnote-back" in class_words:
                return _BACKLINK
            if class_words & _LINE_CLASSES or "linenum" in words:
                return "line_number"
        if name == "sup" and len(element) == 1 and local_name(element[0]) == "a":
            # <sup><a href="#fn1">1</a></sup>, [1] brackets allowed; a bare <sup>2</sup>
            # (an exponent) is not a note marker.
            link = element[0]
            text = _short_link_text(element)
            if "#" in (link.get("href") or "") and text is not None:
                return "note_ref" if text == _short_link_text(link) else None
        if (
            name == "a"
            and len(element) == 1
            and local_name(element[0]) == "sup"
            and "#" in (element.get("href") or "")
            and not (element.text or "").strip()
            and _short_link_text(element) is not None
        ):
            return "note_ref"
        return None

    def open_furniture(self, element: Any, kind: str) -> None:
        self.furniture_depth = 1
        self.furniture_start = None
        self.md_quiet += 1
        if kind == "page_break":
            label = _page_label(element)
            if label:
                self.pending_marks.append(label)
            self.md_insert = None
        elif kind == "note_ref":
            self.md_insert = self.note_ref(element)
        else:
            self.md_insert = None

    def close_furniture(self, kind: str) -> None:
        self.furniture_depth = 0
        self.md_quiet -= 1
        self.md_insert = None
        if kind == _BACKLINK:
            pass  # a note's link back to its reference: out of the Markdown, not furniture
        elif self.furniture_start is not None and self.length > self.furniture_start:
            self.furniture.append((self.furniture_start, self.length, kind))
        self.furniture_start = None

    def note_ref(self, element: Any) -> str:
        link = element if local_name(element) == "a" else next(
            (el for el in element.iter() if local_name(el) == "a"), element
        )
        href = link.get("href") or ""
        text = _short_link_text(element) or str(len(self.note_labels) + 1)
        label = f"{self.note_prefix}{text}"
        if href.startswith("#") and len(href) > 1:
            fragment = href[1:]
            if fragment in self.note_labels:
                return self.linked_ref(self.note_labels[fragment])
            if fragment not in self.anchors:
                self.note_labels[fragment] = label
                return self.linked_ref(label)
        elif href and self.note_target is not None:
            # a note in a chapter not read yet (a notes file): it is labelled when read
            target = self.note_target(href)
            if target is not None:
                labels = self.later_notes.setdefault(target[0], {})
                return self.linked_ref(labels.setdefault(target[1], label))
        return footnote_ref(label, False)

    def linked_ref(self, label: str) -> str:
        self.notes_referenced.add(label)
        return footnote_ref(label, True)

    def note_label_of(self, element: Any, name: str) -> str | None:
        if not self.note_labels or name not in _BLOCKS:
            return None
        ident = element.get("id")
        return self.note_labels.get(ident) if ident else None

    # -- the result --

    def finish(self) -> BuiltText:
        self.flush()
        while len(self.frames) > 1:
            frame = self.frames.pop()
            self.frames[-1].pieces.extend(combine_frame(frame, self.frames[-1]))
        text = "".join(self.parts).rstrip()
        end = len(text)
        for anchor in self.pending:
            self.anchors[anchor] = end
        for label in self.pending_marks:
            self.page_marks.append((end, label))
        anchors = {key: min(offset, end) for key, offset in self.anchors.items()}
        blocks = tuple(
            (min(s, end), min(e, end), md) for s, e, md in self.frames[0].pieces if md
        )
        furniture = tuple((s, min(e, end), k) for s, e, k in self.furniture if s < end)
        marks = tuple((min(o, end), label) for o, label in self.page_marks)
        links = tuple((s, min(e, end), href) for s, e, href in self.links_found if s < end)
        readings = tuple((s, min(e, end), r) for s, e, r in self.readings if s < end)
        index = bool(self.chars) and self.index_chars * 2 >= self.chars
        return BuiltText(text, anchors, blocks, furniture, marks, self.contents_like(),
                      frozenset(self.notes_referenced), frozenset(self.notes_defined),
                      index, links, readings)

    def contents_like(self) -> bool:
        """Mostly a toc/landmarks/page-list element, or mostly links to other chapters."""
        if not self.chars:
            return False
        if self.contents_chars * 2 >= self.chars:
            return True
        return self.links >= 3 and self.link_chars >= 0.6 * self.chars


# MathML layout in the Markdown view (the raw text keeps the characters as they are): scripts
# as _{…} and ^{…}, fractions as (a)/(b), roots as √(…), fences with their brackets.
_MATH_SLOTS = {
    "msub": {1: "\\_{"}, "msup": {1: "^{"}, "msubsup": {1: "\\_{", 2: "^{"},
    "munder": {1: "\\_{"}, "mover": {1: "^{"}, "munderover": {1: "\\_{", 2: "^{"},
    "mfrac": {0: "(", 1: "/("},
}
_CLOSERS = {"\\_{": "}", "^{": "}", "(": ")", "/(": ")", "√(": ")"}
_EMPHASIS = frozenset({"em", "i", "cite", "var", "dfn", "strong", "b"})
_INLINE_MARKS = {
    "em": "*", "i": "*", "cite": "*", "var": "*", "dfn": "*", "strong": "**", "b": "**",
    "code": "`", "kbd": "`", "samp": "`", "tt": "`", "msqrt": "√(",
}


@dataclass
class BuiltText:
    text: str
    anchors: dict[str, int]
    blocks: tuple[tuple[int, int, str], ...]
    furniture: tuple[tuple[int, int, str], ...]
    page_marks: tuple[tuple[int, str], ...]
    contents: bool
    """The chapter reads as a contents page (see :meth:`TextBuilder.contents_like`)."""
    notes_referenced: frozenset[str]
    """Footnote labels the blocks refer to (``[^label]``)."""
    notes_defined: frozenset[str]
    """Footnote labels the blocks define (``[^label]: …``)."""
    index: bool = False
    """The chapter is mostly a back-of-book index (EPUB index vocabulary)."""
    links: tuple[tuple[int, int, str], ...] = ()
    """``(start, end, href)`` of every link's text, in order (kept for index pages)."""
    readings: tuple[tuple[int, int, str], ...] = ()
    """``(start, end, reading)`` of every ruby base with its reading (``<rt>``)."""
