"""Reading a parsed lxml tree by local names: the one set of element helpers of the suite.

Upstream XML comes with namespaces that vary by version and by record (SRU 1.2 and 2.0, OAI-PMH,
DC-NDL, JATS, XHTML), so readers match elements by their *local* name. Comments and processing
instructions have no string tag and are never elements here. Parsing itself is
:mod:`readingroom.core.xmlsafe`'s job; these functions only walk what it built.
"""

from __future__ import annotations

from collections.abc import Iterator

from lxml import etree

__all__ = [
    "children_named",
    "descendants_named",
    "elements",
    "first_child",
    "first_descendant",
    "int_of",
    "local_name",
    "tag_name",
    "text_of",
]


def local_name(tag: object) -> str | None:
    """The local part of an element tag; None for comments and processing instructions."""
    if not isinstance(tag, str):
        return None
    return tag.rpartition("}")[2]


def tag_name(element: object) -> str:
    """The local name of an element's tag; ``""`` for comments and processing instructions."""
    return local_name(getattr(element, "tag", None)) or ""


def elements(parent: etree._Element | None) -> Iterator[etree._Element]:
    """The child elements of ``parent`` (none when it is None), comments and PIs left out."""
    if parent is not None:
        for child in parent:
            if isinstance(child.tag, str):
                yield child


def children_named(parent: etree._Element | None, local: str) -> list[etree._Element]:
    """The child elements whose local name is ``local``, in document order."""
    return [c for c in elements(parent) if local_name(c.tag) == local]


def first_child(parent: etree._Element | None, local: str) -> etree._Element | None:
    """The first child element named ``local``, or None."""
    return next((c for c in elements(parent) if local_name(c.tag) == local), None)


def descendants_named(element: etree._Element, local: str) -> Iterator[etree._Element]:
    """Every element below ``element`` (not itself) named ``local``, in document order."""
    return (el for el in element.iter() if el is not element and local_name(el.tag) == local)


def first_descendant(element: etree._Element, local: str) -> etree._Element | None:
    """The first element below ``element`` (not itself) named ``local``, or None."""
    return next(descendants_named(element, local), None)


def text_of(el: etree._Element | None) -> str | None:
    """The element's own text, stripped; None when there is none or only whitespace."""
    if el is None or el.text is None:
        return None
    return el.text.strip() or None


def int_of(text: str | None) -> int | None:
    """``text`` as an integer (surrounding whitespace allowed); None when it is not one."""
    if text is None:
        return None
    try:
        return int(text.strip())
    except ValueError:
        return None
