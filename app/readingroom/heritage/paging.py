"""The paging cursor of the SIKART and SNM searches: where the next page starts, and how.

A loosened (fuzzy) search must stay loosened on page two: page one said "3 of 12" for the
loosened query, and an offset alone would run the exact query again (which finds nothing).
The cursor carries the offset, whether the query was loosened, and a hash of the query as
typed; the loosened query itself is never taken from the cursor but derived again from the
query given with it, so a cursor can steer nothing but the offset and the one documented
loosening. It is checked like fresh input before anything is sent.

The cursor is base64url of compact JSON.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

from ..core.errors import Code, CoreError

__all__ = ["MAX_CURSOR_LEN", "MAX_OFFSET", "OffsetCursor", "decode", "encode", "fingerprint"]

MAX_CURSOR_LEN = 512
MAX_OFFSET = 100_000
_FINGERPRINT = re.compile(r"^[0-9a-f]{12}$")
_KINDS = ("sik_isea", "snm")


@dataclass(frozen=True)
class OffsetCursor:
    """Where a SIKART or SNM search continues.

    Attributes:
        kind: ``sik_isea`` or ``snm`` (a cursor of one tool is refused by the other).
        offset: the next page's offset.
        loosened: True when the pages so far came from the one loosened query.
        fingerprint: :func:`fingerprint` of the query as typed.
    """

    kind: str
    offset: int
    loosened: bool
    fingerprint: str


def fingerprint(query: str) -> str:
    """A short hash of the query as typed (whitespace and case folded)."""
    text = " ".join(query.split()).casefold()
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def encode(cursor: OffsetCursor) -> str:
    """The cursor as the opaque string an envelope hands out (``data.next_cursor``)."""
    data = {"k": cursor.kind, "o": cursor.offset, "l": int(cursor.loosened),
            "f": cursor.fingerprint}
    raw = json.dumps(data, separators=(",", ":")).encode("ascii")
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def _bad(reason: str, remediation: str | None = None) -> CoreError:
    return CoreError(
        Code.INVALID_INPUT,
        f"The cursor cannot be used ({reason}); nothing was sent.",
        details={"field": "cursor", "reason": reason},
        remediation=remediation or "Pass `cursor` exactly as the previous answer gave it in "
        "data.next_cursor, with the same query, or leave it out to start from the first page.",
    )


def decode(text: str, *, kind: str, query: str) -> OffsetCursor:
    """Read a cursor for the tool ``kind`` and the query given with it.

    Raises:
        CoreError: INVALID_INPUT for a cursor this server did not hand out, one of the other
            tool, or one of another query (nothing is sent for such a call).
    """
    if len(text) > MAX_CURSOR_LEN:
        raise _bad("too long")
    try:
        data: Any = json.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
    except (binascii.Error, ValueError, UnicodeDecodeError):
        raise _bad("unreadable") from None
    if not isinstance(data, dict) or set(data) != {"k", "o", "l", "f"}:
        raise _bad("malformed")
    offset, loosened, found = data["o"], data["l"], data["f"]
    if not (data["k"] in _KINDS and isinstance(offset, int) and not isinstance(offset, bool)
            and 0 <= offset <= MAX_OFFSET and loosened in (0, 1)
            and not isinstance(loosened, bool)
            and isinstance(found, str) and _FINGERPRINT.fullmatch(found)):
        raise _bad("malformed")
    if data["k"] != kind:
        raise _bad("it belongs to another tool")
    if found != fingerprint(query):
        raise _bad("it belongs to another query",
                   "Repeat the query (and region or collection) unchanged with the cursor, or "
                   "drop the cursor to start a new search.")
    return OffsetCursor(kind=kind, offset=offset, loosened=bool(loosened), fingerprint=found)
