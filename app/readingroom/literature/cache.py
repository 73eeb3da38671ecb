"""The in-memory cache of parsed answers: at most 256 entries, 32 MiB and 5 minutes each.

The seed asks for a "maximum five-minute, 256-entry in-memory GET cache". Whole responses of
up to 20 MiB each made that up to 5 GB (5 distinct queries took the server from 347 to 917 MB),
and a failure page answered with HTTP 200 was cached before the provider's parse failed, so
the same query kept failing after the upstream recovered. This cache therefore holds what the
providers *parsed* (:class:`~.providers.base.Page` values, a PMCID a lookup resolved), stored
only after a successful parse, under a byte budget (:data:`MAX_BYTES`, estimated from the
text the values hold); a value larger than :data:`MAX_ENTRY_BYTES` is not stored at all.

A hit is answered before any pacing, so a repeated search costs the upstream nothing. Keys
hold the full request (provider, parameters, page offset and a digest of the settings, so a
key in the query string keeps two configurations apart); they live only in memory and are
never logged.
"""

from __future__ import annotations

import sys
from collections import OrderedDict
from collections.abc import Hashable, Iterator
from dataclasses import dataclass, fields, is_dataclass
from typing import Any

from ..core.clock import Clock, SystemClock

__all__ = [
    "MAX_BYTES",
    "MAX_ENTRIES",
    "MAX_ENTRY_BYTES",
    "TTL_SECONDS",
    "ResultCache",
    "estimate_size",
]

MAX_ENTRIES = 256
TTL_SECONDS = 300.0
MAX_BYTES = 32 * 1024 * 1024
"""The most the cache holds, by :func:`estimate_size`."""
MAX_ENTRY_BYTES = 2 * 1024 * 1024
"""A value larger than this is not cached (it would push out dozens of ordinary pages)."""


@dataclass(frozen=True)
class _Entry:
    stored_at: float
    value: Any
    size: int


def estimate_size(value: Any, _depth: int = 0) -> int:
    """Bytes ``value`` holds, roughly: its strings' lengths plus a fixed cost per object.

    Dataclasses, tuples, lists and dicts are walked (to a bounded depth); the estimate errs on
    the large side for text (a non-ASCII character costs up to four bytes in CPython).
    """
    if _depth > 8:
        return 64
    if isinstance(value, str):
        return sys.getsizeof(value)
    if isinstance(value, bytes | int | float | bool) or value is None:
        return sys.getsizeof(value)
    if isinstance(value, dict):
        return 64 + sum(estimate_size(k, _depth + 1) + estimate_size(v, _depth + 1)
                        for k, v in value.items())
    if isinstance(value, list | tuple | set | frozenset):
        return 56 + sum(estimate_size(v, _depth + 1) for v in value)
    if is_dataclass(value) and not isinstance(value, type):
        return 64 + sum(estimate_size(getattr(value, f.name), _depth + 1) for f in fields(value))
    return sys.getsizeof(value)


class ResultCache:
    """A least-recently-used map of parsed answers with a time to live and a byte budget.

    Args:
        max_entries: the most values kept (the oldest-used is dropped first).
        ttl: seconds a value stays usable.
        max_bytes: the most the values may hold together (:func:`estimate_size`).
        max_entry_bytes: a larger value is not stored.
        clock: the monotonic time source (tests pass ``FakeClock``).
    """

    def __init__(self, *, max_entries: int = MAX_ENTRIES, ttl: float = TTL_SECONDS,
                 max_bytes: int = MAX_BYTES, max_entry_bytes: int | None = None,
                 clock: Clock | None = None) -> None:
        self.max_entries = max_entries
        self.ttl = ttl
        self.max_bytes = max_bytes
        self.max_entry_bytes = (min(MAX_ENTRY_BYTES, max_bytes // 4)
                                if max_entry_bytes is None else max_entry_bytes)
        self._clock: Clock = clock or SystemClock()
        self._entries: OrderedDict[Hashable, _Entry] = OrderedDict()
        self.bytes = 0
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._entries)

    def values(self) -> Iterator[Any]:
        """The stored values, least recently used first."""
        return (entry.value for entry in self._entries.values())

    def get(self, key: Hashable) -> Any:
        """The stored value for ``key`` when it is fresh, else None (a stale one is dropped)."""
        entry = self._entries.get(key)
        if entry is not None and self._clock.monotonic() - entry.stored_at <= self.ttl:
            self._entries.move_to_end(key)
            self.hits += 1
            return entry.value
        if entry is not None:
            self._drop(key)
        self.misses += 1
        return None

    def put(self, key: Hashable, value: Any, *, size: int | None = None) -> bool:
        """Store ``value`` (a successfully parsed answer) under ``key``; False if too large.

        The least recently used values are dropped until the entry and byte limits hold.
        """
        cost = estimate_size(value) if size is None else size
        if key in self._entries:
            self._drop(key)
        if cost > self.max_entry_bytes:
            return False
        self._entries[key] = _Entry(self._clock.monotonic(), value, cost)
        self.bytes += cost
        while self._entries and (len(self._entries) > self.max_entries
                                 or self.bytes > self.max_bytes):
            oldest = next(iter(self._entries))
            self._drop(oldest)
        return True

    def clear(self) -> None:
        """Forget every value."""
        self._entries.clear()
        self.bytes = 0

    def _drop(self, key: Hashable) -> None:
        entry = self._entries.pop(key)
        self.bytes -= entry.size
