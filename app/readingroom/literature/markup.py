"""Plain text out of what providers send as abstracts and titles: HTML, JATS, MathML, XML.

* :func:`clean_markup` — a *string* holding markup (Europe PMC ``abstractText`` with
  ``<h4>Objective</h4>``, Crossref JATS ``<jats:title>Abstract</jats:title><jats:p>…``, Crossref
  titles with ``<scp>``). Such strings are not always well-formed, so tags are removed by
  pattern, never parsed; entities are decoded once.
* :func:`element_text` — an lxml *element* (PubMed ``AbstractText``, ``ArticleTitle``), read in
  document order; MathML is flattened without the layout whitespace between its tokens.
* :func:`collapse` — whitespace runs to single spaces (arXiv summaries carry line breaks).

Headings become ``Heading: text``; paragraphs and labelled parts are separated by a line
break. Nothing here caps lengths: the service caps abstracts at ``abstract_max_chars``.
"""

from __future__ import annotations

import html
import re

from lxml import etree

__all__ = ["clean_markup", "collapse", "element_text", "join_parts"]

_MATHML_NS = "http://www.w3.org/1998/Math/MathML"

# Private-use characters as markers: no upstream text uses them and `\s` does not match them
# (\x1c-\x1f would: Python counts those as whitespace).
_BREAK = "\ue000"
_HEADING_END = "\ue001"
_HEADING = re.compile(
    r"<(h[1-6]|(?:jats:)?title)\b[^>]*>(.*?)</\1\s*>", re.IGNORECASE | re.DOTALL
)
_BLOCK = re.compile(
    r"</?(?:(?:jats:)?(?:p|sec|list|list-item|def-list|boxed-text|disp-quote)|div|br|li|ul|ol"
    r"|table|tr|blockquote)\b[^>]*/?>",
    re.IGNORECASE,
)
_TAG = re.compile(r"</?[A-Za-z][^<>]*>|<!--.*?-->", re.DOTALL)
_SPACE = re.compile(r"\s+")
# Only these headings say nothing: the whole text is an abstract.
_EMPTY_HEADINGS = frozenset({"abstract", "summary"})


def collapse(text: str | None) -> str | None:
    """``text`` with whitespace runs made single spaces and trimmed; None when nothing is left."""
    if text is None:
        return None
    out = _SPACE.sub(" ", text).strip()
    return out or None


def join_parts(parts: list[str]) -> str | None:
    """Non-empty parts joined by line breaks; None when there are none."""
    kept = [p for p in parts if p]
    return "\n".join(kept) if kept else None


def clean_markup(text: str | None) -> str | None:
    """Plain text of an HTML/JATS fragment given as a string; None when nothing is left."""
    if text is None:
        return None
    marked = _HEADING.sub(_heading, text)
    marked = _BLOCK.sub(_BREAK, marked)
    marked = _TAG.sub("", marked)
    marked = html.unescape(marked)
    parts: list[str] = []
    pending: str | None = None
    for raw in marked.split(_BREAK):
        is_heading = raw.rstrip().endswith(_HEADING_END)
        part = collapse(raw.replace(_HEADING_END, ""))
        if part is None:
            continue
        if pending is not None:
            part = f"{pending} {part}"
            pending = None
        if is_heading:
            pending = part
            continue
        parts.append(part)
    if pending is not None:
        parts.append(pending.rstrip(":"))
    return join_parts(parts)


def _heading(match: re.Match[str]) -> str:
    inner = collapse(html.unescape(_TAG.sub("", match.group(2))))
    if inner is None or inner.casefold().rstrip(":") in _EMPTY_HEADINGS:
        return _BREAK
    label = inner if inner.endswith(":") else f"{inner}:"
    return f"{_BREAK}{label}{_HEADING_END}{_BREAK}"


def element_text(element: etree._Element | None) -> str | None:
    """The text of ``element`` and its descendants in document order, whitespace collapsed.

    MathML (``mml:math``) is read token by token and joined without spaces, so
    ``<mml:mi>V</mml:mi><mml:mo>.</mml:mo>`` reads ``V.`` rather than ``V .``.
    """
    if element is None:
        return None
    pieces: list[str] = []
    _walk(element, pieces)
    return collapse("".join(pieces))


def _walk(element: etree._Element, pieces: list[str]) -> None:
    if isinstance(element.tag, str) and etree.QName(element).namespace == _MATHML_NS:
        pieces.append("".join(t.strip() for t in element.itertext()))
    else:
        if element.text:
            pieces.append(element.text)
        for child in element:
            if isinstance(child.tag, str):
                _walk(child, pieces)
            if child.tail:
                pieces.append(child.tail)
