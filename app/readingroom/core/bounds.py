"""Bounded work: an upstream body is counted before it is parsed, and refused past a limit.

``json.loads`` and lxml hold the interpreter lock for a whole parse, so while a body of
millions of tiny containers or elements is parsed a server answers nothing else (no ping, no
cancel), and the tree it builds costs hundreds of megabytes. Counting the body's markup first
is a C-speed scan: :func:`json_containers` (``{`` and ``[``), :func:`json_values` (brackets
and commas outside strings) and :func:`xml_tags` (``<``) are upper bounds of what a parse
would build. Each caller chooses its limit (a fixed ceiling such as
:data:`readingroom.core.http.MAX_JSON_VALUES`, or so much per record asked, :class:`PerRecord`)
and its own words for the refusal; :func:`refuse_past`, :func:`load_json` and
:func:`check_xml` apply them. No error raised here quotes the body.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .errors import CoreError

__all__ = [
    "PerRecord",
    "Refusal",
    "check_xml",
    "decode_json",
    "json_containers",
    "json_nests_deeper",
    "json_values",
    "load_json",
    "refuse_past",
    "xml_tags",
]

Refusal = Callable[[int], CoreError]
"""Builds the error for a body past its limit, given the count found."""


@dataclass(frozen=True)
class PerRecord:
    """A limit that grows with the records asked: ``base + per_record × max(1, records)``."""

    base: int
    per_record: int

    def limit(self, records: int) -> int:
        """The limit for a page of ``records`` records (at least one record's worth)."""
        return self.base + self.per_record * max(1, records)


def json_containers(body: bytes) -> int:
    """The objects and arrays ``body`` may hold: its ``{`` and ``[`` bytes (brackets inside
    strings count too, so this is an upper bound)."""
    return body.count(b"{") + body.count(b"[")


_JSON_STRING = re.compile(rb'"(?:[^"\\]++|\\.)*+"')


def json_values(body: bytes, *, exact_above: int) -> int:
    """About how many values ``body`` holds: brackets and commas, an upper bound.

    Above ``exact_above`` the count is redone with the strings' contents left out, so that
    brackets and commas in text do not count against the body.
    """
    rough = body.count(b"[") + body.count(b"{") + body.count(b",")
    if rough <= exact_above:
        return rough
    bare = _JSON_STRING.sub(b'""', body)
    return bare.count(b"[") + bare.count(b"{") + bare.count(b",")


_JSON_NESTING = re.compile(rb'"(?:[^"\\]++|\\.)*+"|[\[\]{}]')


def json_nests_deeper(body: bytes, limit: int) -> bool:
    """Whether arrays and objects in ``body`` nest deeper than ``limit`` (strings skipped).

    A scan without recursion, so that a decoder's own recursion limit is never what stops a
    deep document; a body with no more brackets than ``limit`` is not scanned at all.
    """
    if json_containers(body) <= limit:
        return False
    depth = 0
    for token in _JSON_NESTING.finditer(body):
        char = token.group()
        if char in (b"[", b"{"):
            depth += 1
            if depth > limit:
                return True
        elif char in (b"]", b"}"):
            depth -= 1
    return False


def xml_tags(body: bytes) -> int:
    """The markup ``body`` holds: its ``<`` bytes (an upper bound of its elements)."""
    return body.count(b"<")


def refuse_past(found: int, limit: int, refusal: Refusal) -> None:
    """Raise ``refusal(found)`` when ``found`` is above ``limit``."""
    if found > limit:
        raise refusal(found)


_JSON_REASONS: dict[type[Exception], str] = {
    UnicodeDecodeError: "not UTF-8",
    RecursionError: "nested too deeply",
}


def decode_json(body: bytes, unreadable: Callable[[str], CoreError]) -> Any:
    """``body`` (UTF-8) as JSON; else ``unreadable(reason)`` is raised.

    The reason is ``"not UTF-8"``, ``"nested too deeply"`` or ``"not JSON"``; the decoder's own
    message (which quotes the document) is dropped.
    """
    try:
        return json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        reason = _JSON_REASONS.get(type(exc), "not JSON")
        raise unreadable(reason) from None


def load_json(
    body: bytes,
    *,
    limit: int,
    too_many: Refusal,
    unreadable: Callable[[str], CoreError],
    count: Callable[[bytes], int] = json_containers,
) -> Any:
    """``body`` as JSON once ``count(body)`` is within ``limit``.

    Raises:
        CoreError: ``too_many(count)`` past the limit (nothing decoded), ``unreadable(reason)``
            when it does not decode (see :func:`decode_json`).
    """
    refuse_past(count(body), limit, too_many)
    return decode_json(body, unreadable)


def check_xml(body: bytes, *, limit: int, too_many: Refusal) -> bytes:
    """``body`` when it holds at most ``limit`` tags; else ``too_many(tags)`` is raised."""
    refuse_past(xml_tags(body), limit, too_many)
    return body
