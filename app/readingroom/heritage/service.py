"""swiss-cultural-heritage-mcp's operations without MCP: arguments in, Envelope out.

Every answer is one :class:`~readingroom.core.envelope.Envelope` carrying the original's
concepts: ``sources`` with their licence, ``result.returned`` (the seed's ``count``),
``result.total``, the seed's ``offset`` (``data.offset``; ``result.start`` is ``offset + 1``),
``result.has_more`` with ``data.next_offset`` to act on it, ``result.match_type`` (``exact``;
``fuzzy`` after exactly one documented loosening of a query that found nothing; ``none`` only
for a genuine zero after a query was run), ``items`` (each tagged with its ``source``) and
``data.meta``. A detail tool that finds nothing answers an envelope with ``match_type: none``
too, never a bare string. Every search deposits a receipt, successful or not.

The Helveticat lane of :meth:`HeritageService.cross_search` is an injected
:data:`PublicationSearch` (Helveticat's service provides it); without one, cross-search covers
artists and museum and says so.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from .. import __version__
from ..core import receipt
from ..core.clock import Clock, SystemClock
from ..core.envelope import (
    Envelope,
    Level,
    QueryInfo,
    ResultInfo,
    SourceStatus,
    breadth_of,
)
from ..core.errors import Code, CoreError
from ..core.fanout import fan_out
from ..core.responses import Source, status_for
from ..core.settings import ENV_TOOL_DEADLINE, env_float
from . import SERVER, ckan, dodis, memobase
from .egress import AllowList, Egress
from .helveticat.service import HelveticatService
from .sources import DODIS, MEMOBASE, NB, SIKART, SNM, SOURCES, Endpoints

__all__ = [
    "MEMORY_COLLECTIONS",
    "USER_AGENT",
    "HeritageService",
    "Lane",
    "PublicationSearch",
    "helveticat_lane",
]

log = logging.getLogger("readingroom.heritage")

USER_AGENT = (f"readingroom/{__version__} swiss-cultural-heritage-mcp "
              "(+https://github.com/readingroom/readingroom)")


@dataclass
class Lane:
    """What one source answered to one query: the unit every envelope is built from."""

    source: Source
    items: list[dict[str, Any]]
    total: int | None
    match_type: str
    has_more: bool
    query: str
    params: dict[str, str] = field(default_factory=dict)
    endpoint: str | None = None
    notes: list[str] = field(default_factory=list)


PublicationSearch = Callable[[str, int], Awaitable[Lane]]
"""Helveticat's search for cross-search: (query, limit) → a :class:`Lane` of source ``NB``."""

MEMORY_COLLECTIONS: tuple[dict[str, Any], ...] = (
    {"id": "memobase", "name": "Memobase (Memoriav)", "status": "active",
     "content": "Photographs, film, video, sound and radio from Swiss memory institutions",
     "licence": MEMOBASE.licence, "url": "https://memobase.ch/"},
    {"id": "dodis", "name": "Dodis (Diplomatic Documents of Switzerland)", "status": "active",
     "content": "Documents, persons, organisations and places of Swiss foreign relations",
     "licence": DODIS.licence, "url": "https://dodis.ch/"},
    {"id": "bundesarchiv", "name": "Schweizerisches Bundesarchiv", "status": "not_connected",
     "reason": "Online access needs an eIAM login and a reCAPTCHA; no open search API.",
     "url": "https://www.recherche.bar.admin.ch/"},
    {"id": "landesmuseum", "name": "Landesmuseum (collection online)", "status": "not_connected",
     "reason": "sammlung.nationalmuseum.ch has no public API; the SNM's open datasets are "
     "reachable through heritage_search_museum_datasets.",
     "url": "https://sammlung.nationalmuseum.ch/"},
)
"""The static discovery list of heritage_list_memory_collections."""

_YEAR = re.compile(r"(?<!\d)(\d{4})(?!\d)")
FANOUT_MARGIN_S = 5.0


def _years(text: Any) -> tuple[int, int] | None:
    years = [int(y) for y in _YEAR.findall(str(text))] if text else []
    return (min(years), max(years)) if years else None


class HeritageService:
    """The operations of every tool except Helveticat's three.

    Args:
        env: where settings are read (default ``os.environ``).
        transport: the innermost HTTP transport (tests pass ``httpx.MockTransport``).
        clock: for pacing, retries and receipts (tests pass ``FakeClock``).
        jitter: the retry jitter source (tests pass a constant).
        publication_search: Helveticat's search lane for cross-search, if wired.
    """

    def __init__(
        self,
        env: Mapping[str, str] | None = None,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        clock: Clock | None = None,
        jitter: Callable[[], float] | None = None,
        publication_search: PublicationSearch | None = None,
    ) -> None:
        import os

        self._env: Mapping[str, str] = os.environ if env is None else env
        self.clock: Clock = clock if clock is not None else SystemClock()
        self.endpoints = Endpoints.from_env(self._env)
        self.allow = AllowList.for_endpoints(self.endpoints.all())
        extra: dict[str, Any] = {"jitter": jitter} if jitter is not None else {}
        self.egress = Egress(allow=self.allow, user_agent=USER_AGENT, transport=transport,
                             clock=self.clock, **extra)
        self.publication_search = publication_search
        deadline = env_float(ENV_TOOL_DEADLINE, SERVER.deadline_s, 1.0, 900.0, self._env)
        self.fanout_deadline = max(1.0, deadline - min(FANOUT_MARGIN_S, deadline / 10))

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self.egress.aclose()

    # ------------------------------------------------------------------ SIKART
    async def _artists_lane(self, q: str, limit: int, offset: int) -> Lane:
        base = self.endpoints.ckan
        payload = await ckan.fetch_artists(self.egress, base, q, limit, offset)
        rows, total, _fields = ckan.parse_datastore(payload)
        sent, match = q, "exact"
        loosened = ckan.longest_term(q) if not rows and offset == 0 else None
        if loosened:
            payload = await ckan.fetch_artists(self.egress, base, loosened, limit, offset)
            rows, total, _fields = ckan.parse_datastore(payload)
            sent, match = loosened, "fuzzy"
        items = [ckan.artist_item(r) for r in rows]
        match = match if items else "none"
        has_more = total is not None and offset + len(items) < total
        notes = [f"No exact hits for {q!r}; loosened once to the longest word {loosened!r}."
                 ] if loosened and items else []
        return Lane(SIKART, items, total, match, has_more, sent,
                    {"q": sent, "limit": str(limit), "offset": str(offset),
                     "resource_id": ckan.SIKART_RESOURCE_ID},
                    f"{base}/datastore_search", notes)

    async def search_artists(self, query: str, region: str | None, limit: int, offset: int,
                             *, arguments: dict[str, Any]) -> Envelope:
        """SIKART full-text search; one loosening (longest word) after zero hits."""
        q = " ".join(p for p in (query, region or "") if p)
        op = "heritage_search_artists"
        try:
            lane = await self._artists_lane(q, limit, offset)
        except CoreError as exc:
            return await self._failed(op, exc, [SIKART], arguments, q)
        return await self._answer(op, [lane], {}, arguments, offset)

    async def get_artist(self, artist_id: str, *, arguments: dict[str, Any]) -> Envelope:
        """One SIKART row by HAUPTNR; not found is a ``none`` envelope."""
        op = "heritage_get_artist"
        base = self.endpoints.ckan
        query = f"HAUPTNR={artist_id}"
        try:
            rows, _total, _fields = ckan.parse_datastore(
                await ckan.fetch_artist(self.egress, base, artist_id))
        except CoreError as exc:
            return await self._failed(op, exc, [SIKART], arguments, query)
        items = [ckan.artist_item(r) for r in rows[:1]]
        lane = Lane(SIKART, items, len(items), "exact" if items else "none", False, query,
                    {"filters": f'{{"HAUPTNR": "{artist_id}"}}', "limit": "1"},
                    f"{base}/datastore_search")
        return await self._answer(op, [lane], {}, arguments, 0, not_found=f"No SIKART artist "
                                  f"with HAUPTNR {artist_id}.")

    # ------------------------------------------------------------------ SNM
    async def _museum_lane(self, query: str, collection: str | None, limit: int,
                           offset: int) -> Lane:
        base = self.endpoints.ckan
        q = " ".join(p for p in (query, collection or "") if p)
        datasets, total = ckan.parse_package_search(
            await ckan.fetch_datasets(self.egress, base, q, limit, offset))
        sent, match = q, "exact"
        loosened = ckan.prefix_or_query(q) if not datasets and offset == 0 else None
        if loosened:
            datasets, total = ckan.parse_package_search(
                await ckan.fetch_datasets(self.egress, base, loosened, limit, offset))
            sent, match = loosened, "fuzzy"
        items = [ckan.dataset_item(d) for d in datasets]
        match = match if items else "none"
        has_more = total is not None and offset + len(items) < total
        notes = [f"No exact hits for {q!r}; loosened once to {loosened!r}."
                 ] if loosened and items else []
        return Lane(SNM, items, total, match, has_more, sent,
                    {"q": sent, "fq": f"organization:{ckan.SNM_ORGANIZATION}",
                     "rows": str(limit), "start": str(offset)},
                    f"{base}/package_search", notes)

    async def search_museum(self, query: str, collection: str | None, limit: int, offset: int,
                            *, arguments: dict[str, Any]) -> Envelope:
        """SNM datasets on opendata.swiss; one loosening (OR-ed prefixes) after zero hits."""
        op = "heritage_search_museum_datasets"
        try:
            lane = await self._museum_lane(query, collection, limit, offset)
        except CoreError as exc:
            return await self._failed(op, exc, [SNM], arguments, query)
        return await self._answer(op, [lane], {}, arguments, offset)

    async def browse_collection(self, resource_id: str, query: str | None, limit: int,
                                offset: int, *, arguments: dict[str, Any]) -> Envelope:
        """Rows of a CKAN DataStore resource, after checking it has a DataStore at all."""
        op = "heritage_browse_collection"
        base = self.endpoints.ckan
        try:
            resource = await ckan.fetch_resource(self.egress, base, resource_id)
        except CoreError as exc:
            if exc.code is Code.NOT_FOUND or exc.details.get("status") == 404:
                lane = Lane(SNM, [], 0, "none", False, f"resource_show id={resource_id}",
                            {"id": resource_id}, f"{base}/resource_show")
                return await self._answer(op, [lane], {}, arguments, offset,
                                          not_found=f"No CKAN resource {resource_id}.")
            return await self._failed(op, exc, [SNM], arguments, resource_id)
        if resource.get("datastore_active") is not True:
            err = CoreError(
                Code.CAPABILITY_UNAVAILABLE,
                f"Resource {resource_id} has no DataStore (datastore_active is not true): CKAN "
                "cannot search or page its rows. Nothing was browsed; this is not an empty "
                "collection.",
                details={"resource_id": resource_id, "format": resource.get("format"),
                         "download_url": resource.get("url")},
                remediation="Download the file at details.download_url instead, or choose a "
                "resource whose datastore_active is true in heritage_search_museum_datasets.",
            )
            env = Envelope.failure(SERVER.name, op, err, query=QueryInfo(
                input=arguments, normalized=f"resource_show id={resource_id}",
                params={"id": resource_id}, endpoint=f"{base}/resource_show"))
            self._credit(env, [(SNM, SourceStatus.ok)])
            await self._deposit(env, f"resource_show id={resource_id}", {"id": resource_id},
                                [SNM], str(err.code), [])
            return env
        try:
            rows, total, fields = ckan.parse_datastore(
                await ckan.fetch_rows(self.egress, base, resource_id, query, limit, offset))
        except CoreError as exc:
            return await self._failed(op, exc, [SNM], arguments, query or "")
        items = [ckan.row_item(r, resource_id, fields) for r in rows]
        has_more = total is not None and offset + len(items) < total
        params = {"resource_id": resource_id, "limit": str(limit), "offset": str(offset)}
        if query:
            params["q"] = query
        lane = Lane(SNM, items, total, "exact" if items else "none", has_more, query or "",
                    params, f"{base}/datastore_search")
        return await self._answer(op, [lane], {"resource_id": resource_id, "fields": fields},
                                  arguments, offset)

    # ------------------------------------------------------------------ cross-source
    async def cross_search(self, query: str, sources: Sequence[str], limit_per_source: int,
                           *, arguments: dict[str, Any]) -> Envelope:
        """Artists, museum and NB at once; one failing source never fails the others."""
        op = "heritage_cross_search"
        chosen = list(dict.fromkeys(sources))
        calls: dict[str, Callable[[], Awaitable[Lane]]] = {}
        skipped: list[str] = []
        if "sik_isea" in chosen:
            calls["sik_isea"] = lambda: self._artists_lane(query, limit_per_source, 0)
        if "snm" in chosen:
            calls["snm"] = lambda: self._museum_lane(query, None, limit_per_source, 0)
        if "nb" in chosen:
            search = self.publication_search
            if search is None:
                skipped.append(NB.id)
            else:
                calls[NB.id] = lambda: search(query, limit_per_source)
        outcomes = await fan_out(calls, deadline=self.fanout_deadline, clock=self.clock)
        lanes = [o.value for o in outcomes.values() if o.ok and o.value is not None]
        failures = {name: o.error for name, o in outcomes.items()
                    if not o.ok and o.error is not None}
        order = [NB.id if n == "nb" else n for n in chosen]
        env = await self._answer(op, lanes, {}, arguments, 0, failures=failures,
                                 skipped=skipped, order=order)
        if skipped:
            env.diagnose(Level.warning, Code.CAPABILITY_UNAVAILABLE,
                         "The National Library (Helveticat) lane is not wired into cross-search "
                         "in this build: only artists and museum were searched.",
                         hint="Use heritage_search_helveticat for the National Library.",
                         field="sources")
        return env

    # ------------------------------------------------------------------ Memobase, Dodis
    async def _memobase_lane(self, query: str, limit: int, offset: int) -> Lane:
        base = self.endpoints.memobase
        items, total = memobase.parse_search(
            await memobase.fetch_search(self.egress, base, query, limit, offset))
        has_more = total is not None and offset + len(items) < total
        return Lane(MEMOBASE, items, total, "exact" if items else "none", has_more, query,
                    {"q": query, "size": str(limit), "offset": str(offset)}, f"{base}/")

    async def _dodis_lane(self, query: str, limit: int, offset: int) -> Lane:
        base = self.endpoints.dodis
        items = dodis.parse_query(await dodis.fetch_query(self.egress, base, query, offset,
                                                          limit))
        return Lane(DODIS, items, None, "exact" if items else "none", len(items) >= limit,
                    query, {"query": query, "start": str(offset), "rows": str(limit)},
                    f"{base}/solr/query",
                    ["Dodis gives no total; has_more means the page was full."] if items else [])

    async def search_memory(self, query: str, collection: str, date_from: int | None,
                            date_to: int | None, media_type: str | None, limit: int,
                            offset: int, *, arguments: dict[str, Any]) -> Envelope:
        """Memobase and/or Dodis; date and media filters apply client-side to the fetched page."""
        op = "heritage_search_memory"
        wanted = ["memobase", "dodis"] if collection == "all" else [collection]
        lanes_by: dict[str, Callable[[str, int, int], Awaitable[Lane]]] = {
            "memobase": self._memobase_lane, "dodis": self._dodis_lane}

        def bound(fn: Callable[[str, int, int], Awaitable[Lane]]) -> Callable[[],
                                                                          Awaitable[Lane]]:
            return lambda: fn(query, limit, offset)

        calls = {name: bound(lanes_by[name]) for name in wanted}
        outcomes = await fan_out(calls, deadline=self.fanout_deadline, clock=self.clock)
        lanes = [o.value for o in outcomes.values() if o.ok and o.value is not None]
        failures = {n: o.error for n, o in outcomes.items() if not o.ok and o.error is not None}
        filters = {k: v for k, v in (("date_from", date_from), ("date_to", date_to),
                                     ("media_type", media_type)) if v is not None}
        if filters:
            for lane in lanes:
                before = len(lane.items)
                lane.items = [i for i in lane.items
                              if _keep(i, date_from, date_to, media_type)]
                lane.notes.append(f"{before - len(lane.items)} of {before} fetched items "
                                  f"removed by the client-side filters {sorted(filters)}; "
                                  "total is the upstream's, before filtering.")
                if not lane.items and lane.match_type == "exact":
                    lane.match_type = "none"
        meta = {"clientside_filters": filters} if filters else {}
        return await self._answer(op, lanes, meta, arguments, offset, failures=failures,
                                  order=wanted)

    async def get_memory_item(self, collection: str, item_id: str, *,
                              arguments: dict[str, Any]) -> Envelope:
        """One Memobase record or Dodis document (never Dodis full text)."""
        op = "heritage_get_memory_item"
        source = MEMOBASE if collection == "memobase" else DODIS
        try:
            if collection == "memobase":
                base = self.endpoints.memobase
                endpoint = f"{base}/record/{item_id}"
                item = memobase.parse_record(
                    await memobase.fetch_record(self.egress, base, item_id))
            else:
                base = self.endpoints.dodis
                endpoint = f"{base}/solr/full/{item_id}"
                item = dodis.parse_full(await dodis.fetch_full(self.egress, base, item_id))
        except CoreError as exc:
            if exc.details.get("status") == 404 or exc.code is Code.NOT_FOUND:
                lane = Lane(source, [], 0, "none", False, f"{collection}:{item_id}",
                            {"id": item_id}, endpoint)
                return await self._answer(op, [lane], {}, arguments, 0,
                                          not_found=f"No {source.name} item {item_id}.")
            return await self._failed(op, exc, [source], arguments, f"{collection}:{item_id}")
        lane = Lane(source, [item], 1, "exact", False, f"{collection}:{item_id}",
                    {"id": item_id}, endpoint)
        return await self._answer(op, [lane], {}, arguments, 0)

    def list_memory_collections(self) -> Envelope:
        """The static discovery list (no request)."""
        op = "heritage_list_memory_collections"
        items = [dict(c, source=c["id"]) for c in MEMORY_COLLECTIONS]
        env = Envelope(
            server=SERVER.name, operation=op, items=items,
            result=ResultInfo(total=len(items), returned=len(items), match_type="exact"),
            data={"offset": 0, "meta": {"static": True}},
            coverage_note="A fixed list kept with the server; no upstream was asked.",
        )
        self._credit(env, [(MEMOBASE, SourceStatus.skipped), (DODIS, SourceStatus.skipped)])
        return env

    # ------------------------------------------------------------------ envelopes
    def _credit(self, env: Envelope, pairs: Sequence[tuple[Source, SourceStatus]]) -> None:
        env.sources = [s.info(status) for s, status in pairs]
        env.attribution = list(dict.fromkeys(s.credit for s, _ in pairs))

    async def _answer(
        self,
        op: str,
        lanes: Sequence[Lane],
        meta: dict[str, Any],
        arguments: dict[str, Any],
        offset: int,
        *,
        not_found: str | None = None,
        failures: Mapping[str, CoreError] | None = None,
        skipped: Sequence[str] = (),
        order: Sequence[str] | None = None,
    ) -> Envelope:
        failures = dict(failures or {})
        by_id = {lane.source.id: lane for lane in lanes}
        names = list(order) if order is not None else [lane.source.id for lane in lanes]
        pairs: list[tuple[Source, SourceStatus]] = []
        per_source: dict[str, dict[str, Any]] = {}
        items: list[dict[str, Any]] = []
        for name in names:
            source = SOURCES[name]
            if name in by_id:
                lane = by_id[name]
                items += lane.items
                pairs.append((source, SourceStatus.ok if lane.items else SourceStatus.empty))
                per_source[name] = {"status": "ok" if lane.items else "empty",
                                    "returned": len(lane.items), "total": lane.total,
                                    "match_type": lane.match_type, "has_more": lane.has_more,
                                    "query_sent": lane.query, "licence": source.licence}
            elif name in failures:
                err = failures[name]
                pairs.append((source, status_for(err.code)))
                per_source[name] = {"status": str(status_for(err.code)), "error":
                                    {"code": str(err.code), "message": err.message}}
            elif name in skipped:
                pairs.append((source, SourceStatus.skipped))
                per_source[name] = {"status": "skipped", "reason": "not wired in this build"}
        query_text = " | ".join(f"{lane.source.id}: {lane.query}" for lane in lanes) if len(
            names) > 1 else (lanes[0].query if lanes else "")
        if not lanes and failures:
            first = next(iter(failures.values()))
            env = Envelope.failure(SERVER.name, op, first, query=QueryInfo(input=arguments),
                                   data={"meta": {**meta, "per_source": per_source}})
            self._credit(env, pairs)
            await self._deposit(env, query_text, {}, [s for s, _ in pairs], str(first.code), [])
            return env
        single = len(names) == 1 and lanes
        total = lanes[0].total if single else None
        has_more = any(lane.has_more for lane in lanes)
        kinds = {lane.match_type for lane in lanes}
        match = "exact" if "exact" in kinds else "fuzzy" if "fuzzy" in kinds else "none"
        next_offset = offset + len(items) if single and has_more else None
        env = Envelope(
            server=SERVER.name, operation=op, items=items,
            query=QueryInfo(input=arguments, normalized=query_text,
                            params=lanes[0].params if single else {},
                            endpoint=lanes[0].endpoint if single else None),
            result=ResultInfo(
                total=total, returned=len(items), start=offset + 1, has_more=has_more,
                next_start=next_offset + 1 if next_offset is not None else None,
                breadth=breadth_of(total), match_type=match,  # type: ignore[arg-type]
                by_provider={lane.source.id: lane.total for lane in lanes
                             if lane.total is not None} or None,
            ),
            data={"offset": offset, "next_offset": next_offset,
                  "meta": {**meta, **({"per_source": per_source} if len(names) > 1 else {})}},
        )
        self._credit(env, pairs)
        for lane in lanes:
            for note in lane.notes:
                env.diagnose(Level.info, Code.UPSTREAM_DIAGNOSTIC, f"{lane.source.id}: {note}")
            if lane.match_type == "fuzzy":
                env.diagnose(Level.warning, Code.ZERO_RESULT,
                             f"{lane.source.id}: no exact hits; these come from one loosened "
                             "search - check their relevance.")
        for name, err in failures.items():
            env.diagnose(Level.warning, err.code, f"{name}: {err.message} Its result is "
                         "unknown, not empty; the other sources' answers stand.")
        if not items:
            env.diagnose(Level.info, Code.ZERO_RESULT, not_found or "Nothing matched.",
                         hint=None if not_found else "Try fewer or other words.")
        outcome = "ok" if items else "empty"
        await self._deposit(env, query_text, lanes[0].params if single else {},
                            [s for s, _ in pairs], outcome,
                            [f"{i.get('source')}:{i.get('id')}" for i in items])
        return env

    async def _failed(self, op: str, exc: CoreError, sources: Sequence[Source],
                      arguments: dict[str, Any], query: str) -> Envelope:
        env = Envelope.failure(SERVER.name, op, exc, query=QueryInfo(input=arguments,
                                                                     normalized=query))
        self._credit(env, [(s, status_for(exc.code)) for s in sources])
        await self._deposit(env, query, {}, sources, str(exc.code), [])
        return env

    async def _deposit(self, env: Envelope, query: str, params: Mapping[str, str],
                       sources: Sequence[Source], outcome: str, ids: Sequence[str]) -> None:
        await receipt.deposit(env, query=query, params=dict(params),
                              providers=[s.id for s in sources],
                              endpoint=env.query.endpoint if env.query else None,
                              outcome=outcome, result_ids=ids, clock=self.clock,
                              environ=self._env)


def helveticat_lane(nb: HelveticatService) -> PublicationSearch:
    """Helveticat's SRU search (with its one loosening) as cross-search's NB lane.

    The lane is Helveticat's own ``search``: its guards, index list, cap and in-body error
    handling hold, and it deposits its own receipt for the NB request.
    """

    async def search(query: str, limit: int) -> Lane:
        env = await nb.search(query=query, limit=limit, operation="heritage_cross_search",
                              arguments={"query": query, "limit": limit})
        if env.error is not None:
            raise CoreError(Code(env.error.code), env.error.message,
                            details=dict(env.error.details),
                            remediation=env.error.remediation)
        result = env.result or ResultInfo()
        data = env.data or {}
        notes = [str(data["order_note"])] if data.get("order_note") else []
        match = result.match_type or ("exact" if env.items else "none")
        return Lane(NB, list(env.items), result.total, match, result.has_more,
                    env.query.normalized or query if env.query else query,
                    dict(env.query.params) if env.query else {},
                    env.query.endpoint if env.query else None, notes)

    return search


def _keep(item: Mapping[str, Any], date_from: int | None, date_to: int | None,
          media_type: str | None) -> bool:
    """The client-side filters: year overlap (undated items kept), media type substring."""
    if media_type and media_type.lower() not in str(item.get("type") or "").lower():
        return False
    span = _years(item.get("date"))
    if span is None:
        return True
    low, high = span
    return not ((date_from is not None and high < date_from)
                or (date_to is not None and low > date_to))
