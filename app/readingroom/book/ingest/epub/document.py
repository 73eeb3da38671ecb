"""Parsing one EPUB document: decoding, the DOCTYPE rule, HTML entities, element helpers."""

from __future__ import annotations

import codecs
import html.entities
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from lxml import etree

from ....core.xmlsafe import (
    UnsafeXmlError,
    XmlParseError,
    depth_limit_hit,
    parse_xml,
    strip_doctype,
)
from ....core.xmltree import tag_name
from .container import MAX_DOCUMENT_BYTES

__all__ = [
    "ParsedDocument",
    "TooDeep",
    "UnsafeDoctype",
    "attribute",
    "child_elements",
    "decode_document",
    "descendant_elements",
    "first_element",
    "local_name",
    "parse_document",
]

_ENCODING_DECL = re.compile(rb"""^\s*<\?xml[^>]*encoding\s*=\s*["']([A-Za-z0-9._-]+)["']""")


_ENTITY_REF = re.compile(r"&([A-Za-z][A-Za-z0-9]{0,31});")
_XML_ENTITIES = frozenset({"amp", "lt", "gt", "quot", "apos"})


def decode_document(data: bytes) -> str:
    return _decode_counted(data)[0]


def _decode_counted(data: bytes) -> tuple[str, int, str]:
    """``(text, byte sequences replaced by U+FFFD, codec)`` by BOM, declaration or UTF-8."""
    body, codec = data, "utf-8"
    for bom, bom_codec in (
        (codecs.BOM_UTF8, "utf-8"),
        (codecs.BOM_UTF32_LE, "utf-32-le"),
        (codecs.BOM_UTF32_BE, "utf-32-be"),
        (codecs.BOM_UTF16_LE, "utf-16-le"),
        (codecs.BOM_UTF16_BE, "utf-16-be"),
    ):
        if data.startswith(bom):
            body, codec = data[len(bom) :], bom_codec
            break
    else:
        if data[:4] == b"<\x00?\x00":
            codec = "utf-16-le"
        elif data[:4] == b"\x00<\x00?":
            codec = "utf-16-be"
        else:
            declared = _ENCODING_DECL.match(data[:256])
            if declared:
                codec = declared.group(1).decode("ascii")
    try:
        return _decode_as(body, codec)
    except LookupError:  # unknown, or not a text encoding ("base64", "rot13")
        return _decode_as(body, "utf-8")


def _decode_as(body: bytes, codec: str) -> tuple[str, int, str]:
    try:
        return body.decode(codec), 0, codec
    except UnicodeDecodeError:
        text = body.decode(codec, errors="replace")
        # "replace" puts one U+FFFD per bad sequence where "ignore" puts nothing.
        return text, len(text) - len(body.decode(codec, errors="ignore")), codec


def _entity_to_reference(match: re.Match[str]) -> str:
    name = match.group(1)
    if name in _XML_ENTITIES:
        return match.group(0)
    chars = html.entities.html5.get(name + ";")
    if chars is None:
        return match.group(0)
    return "".join(f"&#{ord(c)};" for c in chars)


class UnsafeDoctype(Exception):
    """A DOCTYPE with an internal subset: entity declarations."""


class TooDeep(Exception):
    """Elements nested past the parser's depth limit: what lies deeper cannot be read."""


@dataclass
class ParsedDocument:
    root: Any
    html_fallback: bool = False
    replaced: int = 0
    """Byte sequences that were not valid in ``encoding`` and became U+FFFD."""
    encoding: str = "utf-8"


def parse_document(data: bytes, *, content: bool) -> ParsedDocument:
    """Parse an EPUB document (see the module docstring for the DOCTYPE rule).

    Raises:
        UnsafeDoctype: entity declarations or another refused construct.
        TooDeep: nested past the depth limit (the HTML parser would drop the rest silently).
        XmlParseError: not well-formed (and, for content, not even HTML).
    """
    decoded, replaced, encoding = _decode_counted(data)
    try:
        text = strip_doctype(decoded)
    except UnsafeXmlError:
        raise UnsafeDoctype from None
    if "&" in text:
        text = _ENTITY_REF.sub(_entity_to_reference, text)
    try:
        # UTF-8 may be longer than the bytes read (UTF-16 CJK), hence the headroom.
        root = parse_xml(text, max_bytes=2 * MAX_DOCUMENT_BYTES)
        return ParsedDocument(root, replaced=replaced, encoding=encoding)
    except UnsafeXmlError:
        raise UnsafeDoctype from None
    except XmlParseError as exc:
        if exc.details.get("reason") == "too_deep":
            raise TooDeep from None
        if not content:
            raise
    parser = etree.HTMLParser(
        encoding="utf-8", no_network=True, remove_pis=True, default_doctype=False
    )
    root = etree.fromstring(text.encode("utf-8"), parser)
    if depth_limit_hit(parser.error_log):
        raise TooDeep
    if root is None:
        raise XmlParseError("The document is empty.", details={"reason": "empty"})
    return ParsedDocument(root, html_fallback=True, replaced=replaced, encoding=encoding)


def local_name(element: Any) -> str:
    return tag_name(element).lower()  # XHTML and HTML fallback trees alike: lower case


def child_elements(element: Any, name: str) -> Iterator[Any]:
    return (child for child in element if local_name(child) == name)


def descendant_elements(element: Any, name: str) -> Iterator[Any]:
    return (el for el in element.iter() if local_name(el) == name)


def first_element(element: Any, name: str) -> Any | None:
    return next(descendant_elements(element, name), None)


def attribute(element: Any, name: str) -> str | None:
    """An attribute by local name, namespaced or not (``epub:type``, ``xlink:href``)."""
    value = element.get(name)
    if value is not None:
        return value
    for key, val in element.attrib.items():
        if isinstance(key, str) and key.rsplit("}", 1)[-1] == name.rsplit(":", 1)[-1]:
            return val
    return None
