"""The in-memory GET cache the seed asks for: at most 256 entries, each for at most 5 minutes.

``core.http.HttpClient`` has no cache, and the provider modules call ``http.get`` /
``http.get_json`` on the client they are handed. :class:`CachedGets` stands in for that client:
a hit is answered from memory *before* the client's pacing (a repeated search costs the
upstream nothing and waits for no floor); a miss goes through the real client, pacing and
retries included. Only 2xx answers are stored (errors are never cached: a rate limit must not
outlive itself), and a ``get_json`` answer only once it has parsed.

Keys hold the full request (URL, parameters, headers), so a key in the query string keeps
two configurations apart; they live only in memory and are never logged.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from ..core.clock import Clock, SystemClock
from ..core.http import HttpClient, Revealable, UpstreamBodyError

__all__ = ["MAX_ENTRIES", "TTL_SECONDS", "CachedGets", "GetCache"]

MAX_ENTRIES = 256
TTL_SECONDS = 300.0

HeaderValue = str | Revealable
Key = tuple[str, str, tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]


@dataclass(frozen=True)
class _Entry:
    stored_at: float
    response: httpx.Response


class GetCache:
    """A least-recently-used map of GET answers with a time to live.

    Args:
        max_entries: the most answers kept (the oldest-used is dropped first).
        ttl: seconds an answer stays usable.
        clock: the monotonic time source (tests pass ``FakeClock``).
    """

    def __init__(self, *, max_entries: int = MAX_ENTRIES, ttl: float = TTL_SECONDS,
                 clock: Clock | None = None) -> None:
        self.max_entries = max_entries
        self.ttl = ttl
        self._clock: Clock = clock or SystemClock()
        self._entries: OrderedDict[Key, _Entry] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: Key) -> httpx.Response | None:
        """The stored answer for ``key`` when it is fresh, else None (a stale one is dropped)."""
        entry = self._entries.get(key)
        if entry is not None and self._clock.monotonic() - entry.stored_at <= self.ttl:
            self._entries.move_to_end(key)
            self.hits += 1
            return entry.response
        if entry is not None:
            del self._entries[key]
        self.misses += 1
        return None

    def put(self, key: Key, response: httpx.Response) -> None:
        """Store ``response`` under ``key``, dropping the least recently used past the limit."""
        self._entries[key] = _Entry(self._clock.monotonic(), response)
        self._entries.move_to_end(key)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)

    def clear(self) -> None:
        """Forget every answer."""
        self._entries.clear()


def _key(namespace: str, url: str, params: Mapping[str, str] | None,
         headers: Mapping[str, HeaderValue] | None) -> Key:
    shown = tuple(sorted(
        (k.lower(), v if isinstance(v, str) else v.reveal()) for k, v in (headers or {}).items()
    ))
    return (namespace, url, tuple(sorted((params or {}).items())), shown)


class CachedGets:
    """An :class:`HttpClient` seen through a :class:`GetCache` (GETs only; the rest delegates).

    Args:
        client: the provider's paced client.
        cache: the cache, shared by every provider of the process.
        namespace: keeps providers apart in the shared cache (the provider id).
    """

    def __init__(self, client: HttpClient, cache: GetCache, namespace: str) -> None:
        self.client = client
        self.cache = cache
        self.namespace = namespace

    def __getattr__(self, name: str) -> Any:
        return getattr(self.client, name)

    async def get(
        self,
        url: str,
        params: Mapping[str, str] | None = None,
        *,
        headers: Mapping[str, HeaderValue] | None = None,
    ) -> httpx.Response:
        """``HttpClient.get`` answered from the cache when a fresh answer is stored."""
        key = _key(self.namespace, url, params, headers)
        found = self.cache.get(key)
        if found is not None:
            return found
        response = await self.client.get(url, params, headers=headers)
        self.cache.put(key, response)
        return response

    async def get_json(
        self,
        url: str,
        params: Mapping[str, str] | None = None,
        *,
        headers: Mapping[str, HeaderValue] | None = None,
    ) -> Any:
        """``HttpClient.get_json`` answered from the cache when a fresh answer is stored.

        Raises:
            UpstreamBodyError: the 2xx body is not UTF-8 JSON (that answer is not stored).
        """
        sent = dict(headers or {})
        if not any(name.lower() == "accept" for name in sent):
            sent["Accept"] = "application/json"
        key = _key(self.namespace, url, params, sent)
        found = self.cache.get(key)
        if found is not None:
            return json.loads(found.content.decode("utf-8"))
        response = await self.client.get(url, params, headers=sent)
        value = _json(response)
        self.cache.put(key, response)
        return value


def _json(response: httpx.Response) -> Any:
    """The body as JSON; the same typed error the core client raises when it is not."""
    url = response.request.url
    try:
        return json.loads(response.content.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        # `from None`: a JSON error quotes the document, and the body is never reported.
        raise UpstreamBodyError(
            f"{url.scheme}://{url.host}{url.path} answered HTTP {response.status_code} with a "
            "body that is not JSON.",
            details={"status": response.status_code, "host": url.host, "path": url.path,
                     "reason": "not JSON"},
        ) from None
