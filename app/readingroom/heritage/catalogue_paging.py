"""The opaque paging cursor of ``heritage_search_helveticat``, for both paths.

An SRU cursor holds the next ``startRecord``, the relation the first page used (so a fuzzy
search stays fuzzy on page two) and a hash of index and term (so a cursor is never applied to
another query). An OAI cursor holds the request that yields the page to continue from (the
first request's set, format and window, or a ``resumptionToken``) and how many records of that
page were already returned: Alma's pages hold 100 records, more than one answer gives, so a
page may be read in several answers (OAI-PMH §3.5.1 makes a repeated request, token included,
give the same page while the repository is unchanged). It keeps the change-date window of
the first request on every later page, and short hashes of the tokens already followed, so a
token that points back to a page already served is seen (OAI-PMH tokens are opaque; a
repository that hands out its own token again would otherwise be paged for ever).

The cursor is base64url of compact JSON; it is checked on the way in, never trusted: its
shape here, its values by the service exactly as fresh arguments are (set, format, dates).
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

__all__ = [
    "MAX_SEEN",
    "MAX_SKIP",
    "MAX_TOKEN_LEN",
    "OaiCursor",
    "SruCursor",
    "decode_cursor",
    "encode_cursor",
    "query_fingerprint",
    "token_hash",
]

_MAX_LEN = 4096
MAX_TOKEN_LEN = 1024
"""The longest resumption token carried (Alma's are about 60 characters)."""
MAX_SKIP = 10_000
"""More records than one OAI page holds (Alma: 100)."""
MAX_SEEN = 8
"""Token hashes remembered for loop detection."""
_FINGERPRINT = re.compile(r"^[0-9a-f]{12}$")
_TOKEN_HASH = re.compile(r"^[0-9a-f]{16}$")


@dataclass(frozen=True)
class SruCursor:
    """Where an SRU search continues."""

    start: int
    relation: str
    fingerprint: str


@dataclass(frozen=True)
class OaiCursor:
    """Where an OAI collection continues: the page's request and the records already given."""

    set_spec: str
    prefix: str
    skip: int
    token: str | None = None
    from_date: str | None = None
    until_date: str | None = None
    seen: tuple[str, ...] = ()
    """:func:`token_hash` of every token followed so far, oldest first (at most
    :data:`MAX_SEEN`)."""


def token_hash(token: str) -> str:
    """A short hash of a resumption token, for loop detection inside a cursor."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()[:16]


def query_fingerprint(index: str, term: str) -> str:
    """A short hash of index and normalised term, tying an SRU cursor to its query."""
    text = f"{index}\n{' '.join(term.split()).casefold()}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def encode_cursor(cursor: SruCursor | OaiCursor) -> str:
    """The cursor as the opaque string an envelope hands out."""
    if isinstance(cursor, SruCursor):
        data: dict[str, Any] = {"p": "sru", "s": cursor.start, "r": cursor.relation,
                                "f": cursor.fingerprint}
    else:
        data = {"p": "oai", "set": cursor.set_spec, "m": cursor.prefix, "k": cursor.skip}
        for key, value in (("t", cursor.token), ("fr", cursor.from_date),
                           ("un", cursor.until_date)):
            if value is not None:
                data[key] = value
        if cursor.seen:
            data["h"] = list(cursor.seen[-MAX_SEEN:])
    raw = json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def _bad(reason: str) -> CoreError:
    return CoreError(
        Code.INVALID_INPUT,
        f"The cursor is not one this tool handed out ({reason}); nothing was sent.",
        details={"field": "cursor", "reason": reason},
        remediation="Pass `cursor` exactly as the previous answer gave it in data.next_cursor, "
        "or leave it out to start from the first page.",
    )


def decode_cursor(text: str) -> SruCursor | OaiCursor:
    """Read a cursor handed out by :func:`encode_cursor`.

    Raises:
        CoreError: INVALID_INPUT for anything else (nothing is sent for such a call).
    """
    if len(text) > _MAX_LEN:
        raise _bad("too long")
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        data = json.loads(raw.decode("utf-8"))
    except (binascii.Error, ValueError, UnicodeDecodeError):
        raise _bad("unreadable") from None
    if not isinstance(data, dict):
        raise _bad("unreadable")
    try:
        if data.get("p") == "sru":
            start, relation, fingerprint = data["s"], data["r"], data["f"]
            if not (isinstance(start, int) and not isinstance(start, bool) and start >= 1
                    and relation in ("=", "all") and isinstance(fingerprint, str)
                    and _FINGERPRINT.fullmatch(fingerprint)):
                raise _bad("malformed")
            return SruCursor(start=start, relation=relation, fingerprint=fingerprint)
        if data.get("p") == "oai":
            values = {k: data.get(k) for k in ("t", "fr", "un")}
            seen = data.get("h", [])
            skip = data["k"]
            if not (isinstance(data["set"], str) and isinstance(data["m"], str)
                    and isinstance(skip, int) and not isinstance(skip, bool)
                    and 0 <= skip <= MAX_SKIP
                    and all(v is None or isinstance(v, str) for v in values.values())
                    and isinstance(seen, list) and len(seen) <= MAX_SEEN
                    and all(isinstance(h, str) and _TOKEN_HASH.fullmatch(h) for h in seen)):
                raise _bad("malformed")
            token = values["t"]
            if token is not None and (not token or len(token) > MAX_TOKEN_LEN
                                      or not token.isprintable()):
                raise _bad("malformed token")
            return OaiCursor(set_spec=data["set"], prefix=data["m"], skip=skip,
                             token=token, from_date=values["fr"],
                             until_date=values["un"], seen=tuple(seen))
    except KeyError:
        raise _bad("malformed") from None
    raise _bad("unknown path")
