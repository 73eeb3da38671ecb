"""Paging a fused search: the cursor, and what it carries between pages.

A fused search cannot be paged by one offset: its providers are read to different depths, and
a paper returned on page 1 through one provider may turn up on page 3 through another. So each
page answers with a ``next_cursor`` (when, and only when, ``has_more`` is true) that carries

* each provider's offset: how far its list has been *consumed* — the longest run of its
  records, from the top, that were returned or filtered out. The next page asks each provider
  for ``limit`` records from there, so a provider record that lost to others on one page is
  still a candidate on the next;
* the providers that are finished (their upstream said there is no more);
* a short hash of every identifier already returned (DOI, PMID, PMCID, arXiv id; the title
  when there is none): a record matching any of them is never returned again;
* how many records were returned, the page number, and a fingerprint of the search's
  arguments (query, sources, years, open access): a cursor is refused for another search.

Each page sends at most one request per provider (PubMed: esearch and efetch) — there is no
auto-pagination — and paging stops at :data:`MAX_RECORDS` records, stated in every answer
(``data.paging.max_records``) and by a ``RESULT_WINDOW_CAPPED`` diagnostic when more remain.

A cursor is validated like fresh input before anything is sent: its encoding, its check
digest, the fingerprint, known providers only, offsets within the depth cap.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ..core.errors import Code, CoreError
from .fusion import FusedRecord
from .identifiers import normalize_title
from .models import SearchRequest

__all__ = ["MAX_CURSOR_CHARS", "MAX_RECORDS", "Cursor", "fingerprint", "record_keys"]

MAX_RECORDS = 100
"""Paging stops after this many records of one search (and no provider is read deeper)."""
MAX_CURSOR_CHARS = 8000
"""The longest cursor the tool accepts (the input schema's ``maxLength``)."""
_VERSION = 1
_KEY_BYTES = 4


def fingerprint(request: SearchRequest, sources: Sequence[str]) -> str:
    """A digest of the arguments that define a search's result set (not ``limit``)."""
    basis = json.dumps([request.query, sorted(sources), request.year_from,
                        request.year_to, request.open_access], ensure_ascii=False)
    return hashlib.sha256(basis.encode("utf-8")).hexdigest()[:16]


def record_keys(record: FusedRecord) -> list[bytes]:
    """Short hashes of a fused record's identifiers (its normalised title when it has none)."""
    names = [f"{k}:{v}" for k, v in sorted(record.ids.items())]
    if not names:
        names = [f"title:{normalize_title(record.title)}"]
    return [hashlib.sha256(n.encode("utf-8")).digest()[:_KEY_BYTES] for n in names]


def _refused(reason: str) -> CoreError:
    return CoreError(
        Code.INVALID_INPUT,
        f"The cursor cannot be used: {reason}. Nothing was sent.",
        remediation="Pass the next_cursor of the previous page unchanged, with the same query, "
        "sources, years and open_access; or search again without a cursor.",
    )


@dataclass(frozen=True)
class Cursor:
    """Where a paged search stands after a page (see the module docstring)."""

    fingerprint: str
    offsets: Mapping[str, int]
    done: frozenset[str] = frozenset()
    seen: frozenset[bytes] = field(default_factory=frozenset)
    returned: int = 0
    page: int = 1

    @classmethod
    def first(cls, fingerprint: str, providers: Iterable[str]) -> Cursor:
        """The state before page 1."""
        return cls(fingerprint, {p: 0 for p in providers})

    def is_seen(self, keys: Iterable[bytes]) -> bool:
        """Whether a record with these keys was returned on an earlier page."""
        return any(k in self.seen for k in keys)

    def encode(self) -> str:
        """The opaque string the tool hands out (URL-safe base64 of a small JSON object)."""
        body = {
            "v": _VERSION, "f": self.fingerprint,
            "o": dict(sorted(self.offsets.items())), "d": sorted(self.done),
            "s": base64.b64encode(b"".join(sorted(self.seen))).decode("ascii"),
            "n": self.returned, "p": self.page,
        }
        body["c"] = _check(body)
        raw = json.dumps(body, separators=(",", ":")).encode("ascii")
        return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")

    @classmethod
    def decode(cls, text: str, *, fingerprint: str, providers: Sequence[str]) -> Cursor:
        """The state a cursor carries, validated for this search.

        Raises:
            CoreError: INVALID_INPUT for a cursor that is malformed, altered, of another
                search or beyond the depth cap.
        """
        if not text or len(text) > MAX_CURSOR_CHARS:
            raise _refused("it is empty or too long")
        try:
            raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
            body = json.loads(raw.decode("ascii"))
        except (binascii.Error, ValueError, UnicodeDecodeError, RecursionError):
            raise _refused("it is not a cursor this server issued") from None
        if not isinstance(body, dict) or body.get("v") != _VERSION:
            raise _refused("it is not a cursor this server issued")
        check = body.pop("c", None)
        if not isinstance(check, str) or check != _check(body):
            raise _refused("it was altered")
        if body.get("f") != fingerprint:
            raise _refused("it belongs to another search (query, sources, years or "
                           "open_access differ)")
        offsets, done, seen, returned, page = (body.get(k) for k in ("o", "d", "s", "n", "p"))
        if (not isinstance(offsets, dict) or set(offsets) != set(providers)
                or not all(type(v) is int and 0 <= v <= MAX_RECORDS for v in offsets.values())):
            raise _refused("its provider offsets are not this search's")
        if not isinstance(done, list) or not set(done) <= set(providers):
            raise _refused("its finished providers are not this search's")
        if (type(returned) is not int or not 0 < returned < MAX_RECORDS
                or type(page) is not int or not 1 <= page <= MAX_RECORDS):
            raise _refused("its counts are out of range")
        try:
            packed = base64.b64decode(seen, validate=True) if isinstance(seen, str) else None
        except binascii.Error:
            packed = None
        if packed is None or len(packed) % _KEY_BYTES or len(packed) > 8 * _KEY_BYTES * returned:
            raise _refused("its record keys are malformed")
        keys = frozenset(packed[i:i + _KEY_BYTES] for i in range(0, len(packed), _KEY_BYTES))
        return cls(fingerprint, {p: int(offsets[p]) for p in providers}, frozenset(done),
                   keys, returned, page)


def _check(body: Mapping[str, object]) -> str:
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":")).encode("ascii")
    return hashlib.sha256(b"readingroom-literature-cursor|" + canonical).hexdigest()[:12]
