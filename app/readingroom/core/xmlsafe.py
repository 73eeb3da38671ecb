"""The one hardened XML parser every external document goes through.

Upstream XML is untrusted. A document type declaration is the doorway to external entities
(XXE: reading local files or fetching URLs) and to entity expansion bombs ("billion laughs"), and
no upstream this suite reads needs one. So a DOCTYPE is refused outright, before lxml sees the
document, and again after parsing as a backstop; the parser itself resolves no entities, loads
no DTD and touches no network. Errors never quote the body: it may be large, hostile or private.

libxml2's limits stay on (no ``huge_tree``: it would lift the text-node, name and expansion
limits too), among them the nesting depth of :data:`MAX_DEPTH`. A document past it is not
malformed, it is too deep to read; the error says so (``details["reason"] == "too_deep"``) so
a caller can refuse it rather than read a truncated tree, and :func:`depth_limit_hit` tells the
same from a recovering parser's error log.
"""

from __future__ import annotations

import codecs
import re

from lxml import etree

from .bounds import check_xml
from .errors import Code, FixedError

__all__ = [
    "MAX_DEPTH",
    "MAX_TAGS",
    "UnsafeXmlError",
    "XmlParseError",
    "depth_limit_hit",
    "parse_xml",
    "strip_doctype",
]

DEFAULT_MAX_BYTES = 20 * 1024 * 1024
MAX_DEPTH = 256
"""libxml2's nesting limit without XML_PARSE_HUGE; deeper elements are never read."""
MAX_TAGS = 1_000_000
"""The most markup (``<`` characters) a document may hold, about half a million elements.
lxml holds the interpreter lock while it parses, so a server answers nothing else (no ping, no
cancel) meanwhile: 20 MiB of tiny elements took 1.9 s. A page of 100 records of any upstream
of the suite has a few tens of thousands; this bound keeps the worst parse under a second."""

# Whitespace, processing instructions (the XML declaration among them) and comments may come
# before a DOCTYPE; anything else ends the prolog.
_PROLOG_SKIP = re.compile(rb"\s+|<\?.*?\?>|<!--.*?-->", re.DOTALL)
_DOCTYPE = b"<!DOCTYPE"
_HTML_DOCTYPE = re.compile(rb"<!DOCTYPE\s+html\b[^\[>]*>", re.IGNORECASE)
# strip_doctype works on decoded text: the same prolog items, and a DOCTYPE naming at most an
# external identifier, optionally followed by "[" (the start of an internal subset).
_TEXT_PROLOG_SKIP = re.compile(r"\s+|<\?.*?\?>|<!--.*?-->", re.DOTALL)
_XML_DECLARATION = re.compile(r"\A\s*<\?xml[^>]*\?>")
_TEXT_DOCTYPE = re.compile(
    r"""<!DOCTYPE\s+[^\s\[>]+(?:\s+(?:PUBLIC\s+(?:"[^"]*"|'[^']*')\s*(?:"[^"]*"|'[^']*')?"""
    r"""|SYSTEM\s+(?:"[^"]*"|'[^']*')))?\s*(\[)?""",
    re.IGNORECASE,
)
# Only the prolog is scanned; a DOCTYPE after this many bytes of comments is caught post-parse.
_PROLOG_SCAN_LIMIT = 1024 * 1024


class UnsafeXmlError(FixedError):
    """The document was refused unread: it declares a DOCTYPE or is too large."""

    error_code = Code.API_ERROR
    remediation_text = ("The upstream sent XML this server refuses to read. Try again later; if "
                        "it persists, the upstream's output has changed and the server needs an "
                        "update.")


class XmlParseError(FixedError):
    """The document is not well-formed XML (or not XML at all, such as an HTML page)."""

    error_code = Code.API_ERROR
    remediation_text = ("The upstream's answer could not be read; it may be a maintenance page "
                        "or a cut-off response. Try again later.")


def _parser(encoding: str | None = None) -> etree.XMLParser:
    # A fresh parser per call: lxml parsers keep state and are not safe to share across threads.
    return etree.XMLParser(
        encoding=encoding,
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        dtd_validation=False,
        huge_tree=False,
        remove_pis=True,
    )


def _prolog_bytes(data: bytes) -> bytes:
    """The start of ``data`` as UTF-8 bytes, so the DOCTYPE scan also sees UTF-16 documents."""
    head = data[:_PROLOG_SCAN_LIMIT]
    if head.startswith(codecs.BOM_UTF8):
        return head[len(codecs.BOM_UTF8) :]
    for bom, encoding in (
        (codecs.BOM_UTF32_LE, "utf-32-le"),
        (codecs.BOM_UTF32_BE, "utf-32-be"),
        (codecs.BOM_UTF16_LE, "utf-16-le"),
        (codecs.BOM_UTF16_BE, "utf-16-be"),
    ):
        if head.startswith(bom):
            return head[len(bom) :].decode(encoding, errors="replace").encode("utf-8")
    if head[:4] == b"<\x00?\x00":
        return head.decode("utf-16-le", errors="replace").encode("utf-8")
    if head[:4] == b"\x00<\x00?":
        return head.decode("utf-16-be", errors="replace").encode("utf-8")
    return head


def _doctype_in_prolog(data: bytes) -> bytes | None:
    """The DOCTYPE declaration's opening text if the prolog has one, else None."""
    head = _prolog_bytes(data)
    pos = 0
    while True:
        match = _PROLOG_SKIP.match(head, pos)
        if match is None or match.end() == pos:
            break
        pos = match.end()
    if head[pos : pos + len(_DOCTYPE)].upper() == _DOCTYPE:
        return head[pos : pos + 512]
    return None


def parse_xml(data: bytes | str, *, max_bytes: int = DEFAULT_MAX_BYTES) -> etree._Element:
    """Parse an untrusted XML document safely and return its root element.

    Args:
        data: the document; ``str`` input is encoded as UTF-8 and read as UTF-8.
        max_bytes: refuse documents larger than this many bytes.

    Returns:
        The root element.

    Raises:
        UnsafeXmlError: the document is too large or declares a DOCTYPE.
        XmlParseError: the document is empty, an HTML page, or not well-formed XML.
    """
    forced_encoding: str | None = None
    if isinstance(data, str):
        data = data.encode("utf-8")
        forced_encoding = "utf-8"
    if len(data) > max_bytes:
        raise UnsafeXmlError(
            "The upstream response is larger than this server reads.",
            details={"reason": "too_large", "size": len(data), "max_bytes": max_bytes},
        )
    if not data.strip():
        raise XmlParseError("The upstream response was empty.", details={"reason": "empty"})
    check_xml(data, limit=MAX_TAGS, too_many=lambda tags: UnsafeXmlError(
        f"The upstream response holds more than {MAX_TAGS} tags, far more than any page of "
        "records; it was not parsed.",
        details={"reason": "too_many_values", "tags": tags, "max_tags": MAX_TAGS},
    ))
    doctype = _doctype_in_prolog(data)
    if doctype is not None:
        if _HTML_DOCTYPE.match(doctype):
            raise XmlParseError(
                "The upstream answered with an HTML page instead of XML.",
                details={"reason": "html"},
            )
        raise UnsafeXmlError(
            "The upstream response declares a DOCTYPE, which this server refuses to read.",
            details={"reason": "doctype"},
        )
    try:
        root = etree.fromstring(data, _parser(forced_encoding))
    except etree.XMLSyntaxError as exc:
        # exc.error_log may still hold entries of earlier parses: only the raising error counts.
        if _is_depth_error(exc.code, exc.msg):
            raise XmlParseError(
                f"The upstream response nests elements more than {MAX_DEPTH} levels deep.",
                details={
                    "reason": "too_deep",
                    "max_depth": MAX_DEPTH,
                    "line": exc.lineno,
                    "column": exc.offset,
                },
            ) from None
        # lxml's message can quote the document, so only the position is passed on.
        raise XmlParseError(
            "The upstream response is not well-formed XML.",
            details={"reason": "malformed", "line": exc.lineno, "column": exc.offset},
        ) from None
    docinfo = root.getroottree().docinfo
    if docinfo.doctype or docinfo.internalDTD is not None or docinfo.externalDTD is not None:
        raise UnsafeXmlError(
            "The upstream response declares a DOCTYPE, which this server refuses to read.",
            details={"reason": "doctype"},
        )
    return root


def depth_limit_hit(error_log: etree._ListErrorLog) -> bool:
    """True if ``error_log`` (a parser's or an exception's) records the nesting-depth limit.

    A recovering parser (lxml's HTML parser) stops building the tree at the limit and drops
    everything after it without raising; its log is the only trace.
    """
    return any(_is_depth_error(entry.type, entry.message) for entry in error_log)


def _is_depth_error(code: int, message: str | None) -> bool:
    return code == etree.ErrorTypes.ERR_RESOURCE_LIMIT and "depth" in (message or "").lower()


def strip_doctype(text: str) -> str:
    """``text`` without its XML declaration and without a prolog DOCTYPE that declares nothing.

    Documents such as EPUB 2 chapters and NCX files routinely start with a DOCTYPE naming only
    an external DTD (``<!DOCTYPE html PUBLIC "..." "...">``), which :func:`parse_xml` refuses.
    Such a DOCTYPE defines nothing a reader without a DTD uses, so it is removed; the caller
    then parses the rest with :func:`parse_xml`. A DOCTYPE with an internal subset
    (``[ ... ]``: entity declarations, the doorway to XXE and entity bombs) or one that cannot
    be read is refused. Only the prolog (whitespace, processing instructions, comments) is
    looked through; a DOCTYPE after the root element is left to :func:`parse_xml`.

    Args:
        text: the decoded document.

    Returns:
        The text from after the XML declaration on, with a plain DOCTYPE removed.

    Raises:
        UnsafeXmlError: the DOCTYPE has an internal subset or is not readable
            (``details["reason"] == "doctype"``).
    """
    text = _XML_DECLARATION.sub("", text, count=1)
    pos = 0
    while True:
        match = _TEXT_PROLOG_SKIP.match(text, pos)
        if match is None or match.end() == pos:
            break
        pos = match.end()
    if text[pos : pos + len(_DOCTYPE)].upper() != _DOCTYPE.decode("ascii"):
        return text
    match = _TEXT_DOCTYPE.match(text, pos)
    refused = UnsafeXmlError(
        "The document declares entities in a DOCTYPE, which this reader refuses to read.",
        details={"reason": "doctype"},
    )
    if match is None or match.group(1):
        raise refused
    close = text[match.end() :].lstrip()
    if not close.startswith(">"):
        raise refused
    return text[:pos] + close[1:]
