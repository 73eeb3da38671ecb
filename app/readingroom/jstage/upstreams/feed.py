"""The J-STAGE WebAPI's Atom feed: its status codes by meaning, and the pure reading of a feed.

Every answer is an Atom feed (``http://www.w3.org/2005/Atom``) with PRISM and OpenSearch
elements, ``<result><status>`` and ``<message>`` first, then the counts and one ``<entry>`` per
record (real recordings in ``shared/fixtures/jstage``). A search with no hit answers one empty
``<entry/>`` (jstage-mcp's notes): an empty entry is never a record.
Elements are read by their local names with :mod:`readingroom.core.xmltree`, as every XML reader
of the suite reads them (the feed mixes the Atom, PRISM and OpenSearch namespaces).

The status codes, with what each means for the reader (the WebAPI manual's list, as the
pyjstage client names them). No ``ERR_*`` or ``WARN_*`` answer has been recorded anywhere; the
fake's answers for them are hand-made.

==============  ===============  =====================================================
status          kind             reading
==============  ===============  =====================================================
``0``           ok               a result
``ERR_001``     empty            no record matches: a checked zero
``WARN_002``    broad            too many results: a warning (no list: unknown)
``ERR_003``     rate_limited     too many requests: ``RATE_LIMITED``, never empty
``ERR_004``     input            invalid query
``ERR_005``     input            a required field is empty
``ERR_006``     input            invalid year (pubyearfrom, pubyearto)
``ERR_007``     input            invalid count
``ERR_008``     input            invalid ISSN
``SYS_ERR_009`` upstream         J-STAGE's system failed
``ERR_010``     input            invalid URL
``ERR_011``     input            no query (volume list)
``ERR_012``     input            no query (article search)
``ERR_013``     input            the volume list is unspecified (pyjstage's
                                 ``LIST_UNSPECIFIED``: no journal named)
``ERR_014``     input            the sort cannot be applied (sortflg)
==============  ===============  =====================================================
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import TypeVar

from lxml import etree

from ...core.http import UpstreamBodyError
from ...core.xmlsafe import parse_xml
from ...core.xmltree import children_named, first_child
from ..models import EntryResult, Feed

__all__ = [
    "ATOM",
    "BASE_TAGS",
    "MAX_TEXT_CHARS",
    "STATUSES",
    "TAGS_PER_ENTRY",
    "StatusInfo",
    "StatusKind",
    "bilingual",
    "check_size",
    "count_of",
    "is_empty",
    "names",
    "read_feed",
    "text",
    "year_of",
]

T = TypeVar("T")

ATOM = "http://www.w3.org/2005/Atom"
MAX_TEXT_CHARS = 2000
BASE_TAGS = 200
TAGS_PER_ENTRY = 200
"""XML tags an answer of N entries may hold: far above a real entry's fifty."""
_SPACES = re.compile(r"\s+")
_YEAR = re.compile(r"^\s*([0-9]{4})")


class StatusKind(StrEnum):
    """What a WebAPI status means for the reader."""

    ok = "ok"
    empty = "empty"
    broad = "broad"
    rate_limited = "rate_limited"
    input = "input"
    upstream = "upstream"


@dataclass(frozen=True)
class StatusInfo:
    """One WebAPI status: its kind, its meaning, and the argument it is about."""

    kind: StatusKind
    meaning: str
    field: str | None = None


STATUSES: dict[str, StatusInfo] = {
    "0": StatusInfo(StatusKind.ok, "no error"),
    "ERR_001": StatusInfo(StatusKind.empty, "no results"),
    "WARN_002": StatusInfo(StatusKind.broad, "too many results"),
    "ERR_003": StatusInfo(StatusKind.rate_limited, "too many requests"),
    "ERR_004": StatusInfo(StatusKind.input, "invalid query"),
    "ERR_005": StatusInfo(StatusKind.input, "a required field is empty"),
    "ERR_006": StatusInfo(StatusKind.input, "invalid year", "pubyearfrom/pubyearto"),
    "ERR_007": StatusInfo(StatusKind.input, "invalid count", "count"),
    "ERR_008": StatusInfo(StatusKind.input, "invalid ISSN", "issn"),
    "SYS_ERR_009": StatusInfo(StatusKind.upstream, "system fatal error"),
    "ERR_010": StatusInfo(StatusKind.input, "invalid URL"),
    "ERR_011": StatusInfo(StatusKind.input, "no query given (volume list)",
                          "material/issn/cdjournal"),
    "ERR_012": StatusInfo(StatusKind.input, "no query given (article search)"),
    "ERR_013": StatusInfo(StatusKind.input, "the volume list is unspecified",
                          "material/issn/cdjournal"),
    "ERR_014": StatusInfo(StatusKind.input, "the sort cannot be applied", "sortflg"),
}
"""Every documented status, by code."""


def text(element: etree._Element | None) -> str | None:
    """The element's text (CDATA included), whitespace collapsed; None when empty."""
    if element is None:
        return None
    value = _SPACES.sub(" ", "".join(element.itertext())).strip()
    return value[:MAX_TEXT_CHARS] or None


def bilingual(parent: etree._Element, tag: str) -> tuple[str | None, str | None]:
    """(ja, en) texts of a ``<tag><en/><ja/></tag>`` block."""
    block = first_child(parent, tag)
    if block is None:
        return None, None
    return text(first_child(block, "ja")), text(first_child(block, "en"))


def names(entry: etree._Element, language: str) -> list[str]:
    """Every ``author/<language>/name``, in order, across all author blocks (at most 100)."""
    out: list[str] = []
    for author in children_named(entry, "author"):
        for block in children_named(author, language):
            for name in children_named(block, "name"):
                value = text(name)
                if value and len(out) < 100:
                    out.append(value)
    return out


def is_empty(entry: etree._Element) -> bool:
    """True for an entry with no text anywhere (``<entry/>``): no record."""
    return not any((t or "").strip() for t in entry.itertext()) and not any(
        el.get("href") for el in entry.iter() if isinstance(el.tag, str))


def count_of(value: str | None) -> int | None:
    """A count written as digits; None otherwise."""
    if value is None or not value.isdigit() or len(value) > 12:
        return None
    return int(value)


def year_of(value: str | None) -> int | None:
    """The year a date starts with, or None."""
    match = _YEAR.match(value or "")
    return int(match.group(1)) if match else None


def check_size(body: bytes, asked: int) -> None:
    """Refuse a body with far more tags than a page of ``asked`` entries could hold.

    Raises:
        UpstreamBodyError: API_ERROR, before anything is parsed.
    """
    cap = BASE_TAGS + TAGS_PER_ENTRY * max(1, asked)
    tags = body.count(b"<")
    if tags > cap:
        raise UpstreamBodyError(
            f"J-STAGE answered with {tags} XML tags, more than a page of {asked} records could "
            f"hold ({cap}); it was not read. The result is unknown.",
            details={"reason": "too_many_values", "tags": tags, "max_tags": cap})


def read_feed(body: bytes, read_entry: Callable[[etree._Element], T]) -> Feed[T]:
    """One WebAPI answer: parsed with the hardened parser, each entry read by ``read_entry``.

    Pure. ``read_entry`` may raise ``ValueError``/``TypeError`` for an entry it cannot read;
    the entry is then a problem, never dropped.

    Raises:
        CoreError: API_ERROR for a body that is not well-formed XML, or refused by xmlsafe.
    """
    if body.lstrip()[:15].lower().startswith((b"<!doctype html", b"<html")):
        raise UpstreamBodyError(
            "J-STAGE answered with an HTML page instead of its Atom feed (maintenance, or a "
            "refused request). The result is unknown.", details={"reason": "html"})
    root = parse_xml(body)
    if root.tag != f"{{{ATOM}}}feed":
        return Feed(None, None, None, None, problem="the answer is not an Atom feed")
    result = first_child(root, "result")
    status = message = None
    if result is not None:
        status = text(first_child(result, "status"))
        message = text(first_child(result, "message"))
    total_el = first_child(root, "totalResults")
    total = count_of(text(total_el))
    start = count_of(text(first_child(root, "startIndex")))
    problem = None
    if total_el is not None and total is None:
        problem = "opensearch:totalResults is not a count"
    entries: list[EntryResult[T]] = []
    empty = 0
    for position, entry in enumerate(children_named(root, "entry"), 1):
        if is_empty(entry):
            empty += 1
            continue
        try:
            entries.append(EntryResult(position, read_entry(entry), None))
        except (ValueError, TypeError) as exc:
            entries.append(EntryResult(position, None, f"the entry could not be read "
                                       f"({type(exc).__name__})"))
    return Feed(status, message, total, start, entries, empty, problem)

