"""What an upstream JSON answer must look like before any of it is believed. Pure, no I/O.

The rule every JSON parser of this server follows (CKAN, Memobase, Dodis):

* The container of records must be a list; anything else is ``API_ERROR`` (never ``[]``).
* A count (``total``, ``hydra:totalItems``) is a non-negative integer or a string of digits;
  anything else makes the total **unknown** (``None``) with a note, never zero.
* A count above the offset with no record delivered, or a page whose every record is
  unreadable, is ``API_ERROR`` with a diagnostic: not an empty result.
* A page is never longer than what was asked (an over-delivering upstream is cut, and the
  next page starts after the last record kept); a total smaller than what was delivered is
  unknown.
* A record's own values are bounded in depth (:func:`bounded`) before an envelope holds them,
  so every reply serialises; a value of the wrong type inside a record is treated as absent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..core.errors import Code, CoreError

__all__ = [
    "MAX_VALUE_DEPTH",
    "TOO_DEEP",
    "Page",
    "bounded",
    "count_of",
    "listed",
    "mapping_with",
    "names",
    "page_of",
    "shape_error",
    "text_of",
]

MAX_VALUE_DEPTH = 12
"""Nesting kept inside a record's raw values (the real records nest at most 6 deep)."""
TOO_DEEP = f"[nested deeper than {MAX_VALUE_DEPTH} levels: left out]"


def shape_error(source: str, message: str, **details: Any) -> CoreError:
    """``API_ERROR`` for an answer of the wrong shape: the result is unknown, not empty."""
    return CoreError(Code.API_ERROR, f"{source}: {message}", details=details,
                     remediation=f"{source} answered in an unexpected shape; the result is "
                     "unknown, not empty. Try again later.")


def count_of(value: Any) -> tuple[int | None, str | None]:
    """A count as the upstream sent it: ``(value, None)``, or ``(None, why)`` when it is not one.

    Absent (``None``) is ``(None, None)``: unknown, nothing to say.
    """
    if value is None:
        return None, None
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value, None
    if isinstance(value, str) and value.strip().isdigit() and len(value) < 20:
        return int(value), None
    shown = repr(value) if isinstance(value, str | int | float | bool) else type(value).__name__
    return None, f"the count is {shown[:40]}, not a number"


def text_of(value: Any) -> str | None:
    """A display value: a string as is, a number as text; anything else (lists, objects) None."""
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return None


def listed(value: Any, name: str, problems: set[str]) -> list[Any]:
    """``value`` when it is a list; ``[]`` for None; ``[]`` and a noted ``name`` otherwise."""
    if isinstance(value, list):
        return value
    if value is not None:
        problems.add(name)
    return []


def bounded(value: Any, depth: int = MAX_VALUE_DEPTH, cut: list[int] | None = None) -> Any:
    """A copy of a JSON value whose containers below ``depth`` levels are :data:`TOO_DEEP`.

    Recursion is bounded by ``depth`` itself, so a 100,000-deep input costs ``depth`` frames.
    Mapping keys become strings. ``cut[0]``, when given, counts the values left out.
    """
    if isinstance(value, Mapping | list | tuple) and depth <= 0:
        if cut is not None:
            cut[0] += 1
        return TOO_DEEP
    if isinstance(value, Mapping):
        return {str(k): bounded(v, depth - 1, cut) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [bounded(v, depth - 1, cut) for v in value]
    return value


@dataclass
class Page:
    """One page of records as delivered: what may be believed, and what was not."""

    rows: list[dict[str, Any]]
    total: int | None
    has_more: bool
    notes: list[tuple[Code, str]] = field(default_factory=list)
    """Warnings for the envelope (unreadable records, a count that is not one, a cut page)."""


def page_of(
    source: str,
    records: Any,
    raw_total: Any,
    *,
    offset: int,
    limit: int,
    readable: Callable[[Any], bool],
    has_total: bool = True,
    what: str = "records",
) -> Page:
    """Apply the rule of this module to one page; :class:`Page` or ``API_ERROR``.

    Args:
        source: the source's name, for messages.
        records: the container of records as delivered (must be a list).
        raw_total: the upstream's count as delivered (``has_total=False``: the upstream has
            none, e.g. Dodis).
        offset: records skipped (the request's offset).
        limit: records asked for.
        readable: whether one delivered record can be read.
        what: the records' name in messages.

    Raises:
        CoreError: API_ERROR for a container of the wrong type, a count above ``offset`` with
            nothing delivered, or a page whose every record is unreadable.
    """
    if not isinstance(records, list):
        raise shape_error(source, f"the {what} are {type(records).__name__}, not a list.",
                          reason="container_not_a_list")
    notes: list[tuple[Code, str]] = []
    rows = [dict(r) for r in records if readable(r)]
    unreadable = len(records) - len(rows)
    if unreadable and not rows:
        raise shape_error(source, f"none of the {len(records)} {what} delivered could be "
                          "read. This is not an empty result.", reason="every_record_unreadable",
                          records=len(records))
    if unreadable:
        notes.append((Code.RECORD_UNREADABLE,
                      f"{unreadable} of the {len(records)} {what} delivered could not be read "
                      "and are left out (they are counted in the upstream's total)."))
    total, why = count_of(raw_total) if has_total else (None, None)
    if why and not records:
        raise shape_error(source, f"{why}, and no {what} were delivered: an empty result cannot "
                          "be told from a failed one.", reason="count_unreadable")
    if why:
        notes.append((Code.UPSTREAM_DIAGNOSTIC,
                      f"{why}: the total is unknown (not zero); has_more is guessed from a "
                      "full page."))
    if total is not None and total > offset and not records:
        raise shape_error(source, f"it claims {total} {what} but delivered none from offset "
                          f"{offset}. This is not an empty result.",
                          reason="count_without_records", total=total, offset=offset)
    over = len(rows) > limit
    if over:
        notes.append((Code.COUNT_CAPPED,
                      f"{source} sent {len(rows)} {what} for {limit} asked; the first {limit} "
                      "are returned and the next page starts after them."))
        rows = rows[:limit]
    if records and total is not None and total < offset + len(records):
        notes.append((Code.UPSTREAM_DIAGNOSTIC,
                      f"{source} claims a total of {total} but delivered {what} up to "
                      f"{offset + len(records)}: the total is unknown."))
        total = None
    if total is not None:
        has_more = offset + len(rows) < total
    else:
        has_more = over or (len(records) >= limit and bool(rows))
    return Page(rows, total, has_more, notes)


def mapping_with(key: str) -> Callable[[Any], bool]:
    """A ``readable`` test: a JSON object whose ``key`` holds a non-empty string or a number."""

    def test(value: Any) -> bool:
        if not isinstance(value, Mapping):
            return False
        found = text_of(value.get(key))
        return bool(found and found.strip())

    return test


def names(problems: Iterable[str]) -> str:
    """The sorted field names of a problem set, for one note."""
    return ", ".join(sorted(problems))
