"""swiss-cultural-heritage-mcp's operations without MCP: arguments in, Envelope out.

Every answer is one :class:`~readingroom.core.envelope.Envelope` carrying the original's
concepts: ``sources`` with their licence, ``result.returned`` (the seed's ``count``),
``result.total``, the seed's ``offset`` (``data.offset``; ``result.start`` is ``offset + 1``),
``result.has_more`` with ``data.next_offset`` to act on it, ``result.match_type`` (``exact``;
``fuzzy`` after exactly one documented loosening of a query that found nothing; ``none`` only
for a genuine zero after a query was run), ``items`` (each tagged with its ``source``) and
``data.meta``. ``data.next_cursor`` continues a SIKART or SNM search with its loosening
(:mod:`.paging`). Every page is held to :mod:`.shape`'s rule: a damaged answer is
``API_ERROR``, an unknown total is ``None``, never zero.

**Unknown ids.** The suite's rule for fetch tools: an identifier the upstream says does not
exist is a ``NOT_FOUND`` error (``isError``, remediation naming the search tool), for
``heritage_get_artist``, ``heritage_get_memory_item`` and ``heritage_browse_collection`` as
for Helveticat's ``heritage_get_publication``; an upstream failure stays ``API_ERROR`` (or
``TRANSPORT_ERROR``, ``RATE_LIMITED``), and a search that matches nothing is a success with
``match_type: none``. Every search deposits a receipt, successful or not, with the outcome the
caller was told.

The National Library's catalogue (Helveticat, over SRU and OAI-PMH) is
:class:`~.catalogue.Catalogue`, owned by the service: its three operations are
:meth:`HeritageService.search_publications`, :meth:`~HeritageService.get_publication` and
:meth:`~HeritageService.list_nb_collections`, and its search is cross-search's NB lane
(:attr:`HeritageService.publication_search`; with none, cross-search covers artists and museum
and says so).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from .. import __version__
from ..core import receipt, responses
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
from . import SERVER, paging
from .catalogue import Catalogue
from .egress import AllowList, Egress
from .shape import MAX_VALUE_DEPTH, Page, bounded, names, shape_error, text_of
from .sources import DODIS, MEMOBASE, NB, SIKART, SNM, SOURCES, Endpoints
from .upstreams import ckan, dodis, memobase
from .upstreams.helveticat import HelveticatClient

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
    """Info diagnostics (a loosening, Dodis' missing total, the filters' effect)."""
    warnings: list[tuple[Code, str]] = field(default_factory=list)
    """Warning diagnostics (unreadable records, a count that is not one, a cut page)."""
    filtered: int = 0
    """Items of the fetched page removed by client-side filters."""


def _lane(source: Source, page: Page, items: list[dict[str, Any]], match: str, query: str,
          params: dict[str, str], endpoint: str, offset: int, notes: list[str]) -> Lane:
    """A lane from one checked page: ``none`` only for a known zero, never for unknown."""
    if not items:
        if page.total == 0 or (page.total is None and offset == 0):
            match = "none"
        else:
            notes = [*notes, f"No item from offset {offset}: past the last of "
                     f"{page.total if page.total is not None else 'the'} records."]
    return Lane(source, items, page.total, match, page.has_more, query, params, endpoint,
                notes, list(page.notes))


def _overall_match(lanes: Sequence[Lane]) -> str:
    """One match type for several lanes: fuzzy if any lane with items was loosened."""
    kinds = {lane.match_type for lane in lanes if lane.items}
    if "fuzzy" in kinds:
        return "fuzzy"
    if kinds or any(lane.match_type != "none" for lane in lanes):
        return "exact"
    return "none"


def _date_key(value: int | str | None, name: str) -> tuple[int, int, int] | None:
    """A year or ISO date (``1900``, ``"1900"``, ``"1900-05"``, ``"1900-05-01"``) as a tuple."""
    if value is None:
        return None
    text = str(value).strip()
    match = _DATE_ARG.fullmatch(text)
    if match is None:
        raise CoreError(Code.INVALID_INPUT, f"{name} {text[:20]!r} is not a year or an ISO date "
                        "(YYYY, YYYY-MM or YYYY-MM-DD); nothing was sent.",
                        details={"field": name}, remediation=f"Write {name} as 1900 or "
                        "1900-01-01.")
    year, month, day = (int(g) if g else 0 for g in match.groups())
    return year, month, day


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
_DATE_ARG = re.compile(r"^(\d{1,4})(?:-(\d{2})(?:-(\d{2}))?)?$")
FANOUT_MARGIN_S = 5.0


def _years(text: Any) -> tuple[int, int] | None:
    years = [int(y) for y in _YEAR.findall(str(text))] if text else []
    return (min(years), max(years)) if years else None


class HeritageService:
    """The operations of every tool of the server.

    Args:
        env: where settings are read (default ``os.environ``).
        transport: the innermost HTTP transport (tests pass ``httpx.MockTransport``).
        clock: for pacing, retries and receipts (tests pass ``FakeClock``).
        jitter: the retry jitter source (tests pass a constant).
        catalogue: the National Library's catalogue (default: one over the same env, transport
            and clock).
        publication_search: cross-search's NB lane (default: the catalogue's search).
    """

    def __init__(
        self,
        env: Mapping[str, str] | None = None,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        clock: Clock | None = None,
        jitter: Callable[[], float] | None = None,
        catalogue: Catalogue | None = None,
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
        self.catalogue = catalogue or Catalogue(
            HelveticatClient(env=env, clock=clock, transport=transport), server=SERVER.name,
            env=env, clock=clock)
        self.publication_search: PublicationSearch | None = (
            publication_search or helveticat_lane(self.catalogue))
        deadline = env_float(ENV_TOOL_DEADLINE, SERVER.deadline_s, 1.0, 900.0, self._env)
        self.fanout_deadline = max(1.0, deadline - min(FANOUT_MARGIN_S, deadline / 10))

    async def aclose(self) -> None:
        """Close the connection pools (the catalogue's too)."""
        await self.egress.aclose()
        await self.catalogue.client.aclose()

    # ------------------------------------------------------------------ Helveticat
    async def search_publications(self, **arguments: Any) -> Envelope:
        """Search the catalogue (SRU) or page through a collection (OAI-PMH).

        The arguments are :meth:`.catalogue.Catalogue.search`'s.
        """
        return await self.catalogue.search(**arguments)

    async def get_publication(self, identifier: str, *,
                              arguments: Mapping[str, Any] | None = None) -> Envelope:
        """One catalogue record in full (MARC21 over OAI-PMH ``GetRecord``)."""
        return await self.catalogue.get_publication(identifier, arguments=arguments)

    async def list_nb_collections(self, *,
                                  arguments: Mapping[str, Any] | None = None) -> Envelope:
        """The catalogue's OAI-PMH sets, each with the metadata format it is published in."""
        return await self.catalogue.list_collections(arguments=arguments)

    # ------------------------------------------------------------------ SIKART
    async def _artist_page(self, q: str, limit: int, offset: int) -> Page:
        payload = await ckan.fetch_artists(self.egress, self.endpoints.ckan, q, limit, offset)
        page, _fields = ckan.parse_datastore(payload, offset=offset, limit=limit,
                                             readable=ckan.SIKART_ROW)
        return page

    async def _artists_lane(self, q: str, limit: int, offset: int, *,
                            loosen: bool | None = None) -> Lane:
        """SIKART: exact, or the one loosening when the exact query matches nothing at all.

        ``loosen`` None decides (any offset: an exact total of 0 is known at every page); a
        cursor's True or False repeats page one's choice.
        """
        base = self.endpoints.ckan
        loosened = ckan.longest_term(q)
        if loosen and loosened:
            page, sent, match = await self._artist_page(loosened, limit, offset), loosened, "fuzzy"
        else:
            page, sent, match = await self._artist_page(q, limit, offset), q, "exact"
            if loosen is None and loosened and not page.rows and page.total == 0:
                page = await self._artist_page(loosened, limit, offset)
                sent, match = loosened, "fuzzy"
        notes = [f"No exact hits for {q!r}; loosened once to the longest word {loosened!r}."
                 ] if match == "fuzzy" else []
        return _lane(SIKART, page, [ckan.artist_item(r) for r in page.rows], match, sent,
                     ckan.artists_params(sent, limit, offset), f"{base}/datastore_search",
                     offset, notes)

    async def search_artists(self, query: str | None, region: str | None, limit: int,
                             offset: int, *, cursor: str | None = None,
                             arguments: dict[str, Any]) -> Envelope:
        """SIKART full-text search; one loosening (longest word) after zero hits.

        ``query``, ``region`` or both (the original's region-only search); ``cursor`` (from
        ``data.next_cursor``) continues a search, loosened or not, with the same words.
        """
        q = " ".join(p for p in (query or "", region or "") if p.strip())
        op = "heritage_search_artists"
        try:
            if not q:
                raise CoreError(Code.INVALID_INPUT, "Give query, region or both; nothing was "
                                "sent.", details={"fields": ["query", "region"]},
                                remediation="Pass query='Giacometti', or region='Graubünden'.")
            start, loosen = self._resume(cursor, "sik_isea", q, offset)
        except CoreError as exc:
            return self._refused(op, exc, [SIKART], arguments)
        try:
            lane = await self._artists_lane(q, limit, start, loosen=loosen)
        except CoreError as exc:
            return await self._failed(op, exc, [SIKART], arguments, q)
        return await self._answer(op, [lane], {}, arguments, start, cursor_kind="sik_isea",
                                  typed=q)

    async def get_artist(self, artist_id: str, *, arguments: dict[str, Any]) -> Envelope:
        """One SIKART row by HAUPTNR; an id SIKART does not have is ``NOT_FOUND``."""
        op = "heritage_get_artist"
        base = self.endpoints.ckan
        query = f"HAUPTNR={artist_id}"
        params = {"filters": f'{{"HAUPTNR": "{artist_id}"}}', "limit": "1"}
        endpoint = f"{base}/datastore_search"
        try:
            page, _fields = ckan.parse_datastore(
                await ckan.fetch_artist(self.egress, base, artist_id), limit=1,
                readable=ckan.SIKART_ROW)
            if page.rows and ckan.artist_item(page.rows[0])["id"] != artist_id:
                raise shape_error("CKAN", f"asked for HAUPTNR {artist_id}, it answered another "
                                  "artist.", reason="identifier_mismatch")
        except CoreError as exc:
            return await self._failed(op, exc, [SIKART], arguments, query)
        if not page.rows:
            return await self._not_found(
                op, SIKART, arguments, query, params, endpoint,
                f"SIKART has no artist with HAUPTNR {artist_id}.",
                "Check the id, or find the artist with heritage_search_artists.")
        lane = _lane(SIKART, page, [ckan.artist_item(page.rows[0])], "exact", query, params,
                     endpoint, 0, [])
        lane.has_more = False
        return await self._answer(op, [lane], {}, arguments, 0)

    # ------------------------------------------------------------------ SNM
    async def _dataset_page(self, q: str, limit: int, offset: int) -> Page:
        payload = await ckan.fetch_datasets(self.egress, self.endpoints.ckan, q, limit, offset)
        return ckan.parse_package_search(payload, offset=offset, limit=limit)

    async def _museum_lane(self, query: str, collection: str | None, limit: int,
                           offset: int, *, loosen: bool | None = None) -> Lane:
        """SNM datasets: exact, or the one loosening (OR-ed prefixes) when exact finds none."""
        base = self.endpoints.ckan
        q = " ".join(p for p in (query, collection or "") if p.strip())
        loosened = ckan.prefix_or_query(q)
        if loosen and loosened:
            page, sent, match = await self._dataset_page(loosened, limit, offset), loosened, "fuzzy"
        else:
            page, sent, match = await self._dataset_page(q, limit, offset), q, "exact"
            if loosen is None and loosened and not page.rows and page.total == 0:
                page = await self._dataset_page(loosened, limit, offset)
                sent, match = loosened, "fuzzy"
        problems: set[str] = set()
        items = [ckan.dataset_item(d, problems) for d in page.rows]
        if problems:
            page.notes.append((Code.RECORD_UNREADABLE, "Some datasets had fields of an "
                               f"unexpected shape, treated as absent: {names(problems)}."))
        notes = [f"No exact hits for {q!r}; loosened once to {loosened!r}."
                 ] if match == "fuzzy" else []
        if not q:
            notes.append("No query: every dataset of the Swiss National Museum, in CKAN's "
                         "order.")
        return _lane(SNM, page, items, match, sent, ckan.datasets_params(sent, limit, offset),
                     f"{base}/package_search", offset, notes)

    async def search_museum(self, query: str | None, collection: str | None, limit: int,
                            offset: int, *, cursor: str | None = None,
                            arguments: dict[str, Any]) -> Envelope:
        """SNM datasets on opendata.swiss; one loosening (OR-ed prefixes) after zero hits.

        Without ``query`` and ``collection``: every SNM dataset (the original's listing).
        """
        op = "heritage_search_museum_datasets"
        typed = " ".join(p for p in (query or "", collection or "") if p.strip())
        try:
            start, loosen = self._resume(cursor, "snm", typed, offset)
        except CoreError as exc:
            return self._refused(op, exc, [SNM], arguments)
        try:
            lane = await self._museum_lane(query or "", collection, limit, start, loosen=loosen)
        except CoreError as exc:
            return await self._failed(op, exc, [SNM], arguments, typed)
        return await self._answer(op, [lane], {}, arguments, start, cursor_kind="snm",
                                  typed=typed)

    async def browse_collection(self, resource_id: str, query: str | None, limit: int,
                                offset: int, *, arguments: dict[str, Any]) -> Envelope:
        """Rows of a CKAN DataStore resource, after checking it has a DataStore at all."""
        op = "heritage_browse_collection"
        base = self.endpoints.ckan
        try:
            resource = await ckan.fetch_resource(self.egress, base, resource_id)
        except CoreError as exc:
            if exc.code is Code.NOT_FOUND or exc.details.get("status") == 404:
                return await self._not_found(
                    op, SNM, arguments, f"resource_show id={resource_id}", {"id": resource_id},
                    f"{base}/resource_show", f"CKAN has no resource {resource_id}.",
                    "Take a resource id from heritage_search_museum_datasets.")
            return await self._failed(op, exc, [SNM], arguments, resource_id)
        if resource.get("datastore_active") is not True:
            err = CoreError(
                Code.CAPABILITY_UNAVAILABLE,
                f"Resource {resource_id} has no DataStore (datastore_active is not true): CKAN "
                "cannot search or page its rows. Nothing was browsed; this is not an empty "
                "collection.",
                details={"resource_id": resource_id,
                         "format": text_of(resource.get("format")),
                         "download_url": text_of(resource.get("url"))},
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
            page, fields = ckan.parse_datastore(
                await ckan.fetch_rows(self.egress, base, resource_id, query, limit, offset),
                offset=offset, limit=limit)
        except CoreError as exc:
            return await self._failed(op, exc, [SNM], arguments, query or "")
        items = [ckan.row_item(r, resource_id, fields) for r in page.rows]
        params = {"resource_id": resource_id, "limit": str(limit), "offset": str(offset)}
        if query:
            params["q"] = query
        lane = _lane(SNM, page, items, "exact", query or "", params,
                     f"{base}/datastore_search", offset, [])
        return await self._answer(op, [lane], {"resource_id": resource_id, "fields": fields},
                                  arguments, offset)

    def _resume(self, cursor: str | None, kind: str, typed: str,
                offset: int) -> tuple[int, bool | None]:
        """The offset and loosening a call continues with: the cursor's, checked, or fresh."""
        if cursor is None:
            return offset, None
        found = paging.decode(cursor, kind=kind, query=typed)
        if offset not in (0, found.offset):
            raise CoreError(
                Code.INVALID_INPUT,
                f"offset {offset} and the cursor (offset {found.offset}) disagree; nothing was "
                "sent.", details={"fields": ["offset", "cursor"]},
                remediation="Pass the cursor alone (it holds the offset), or offset alone.")
        return found.offset, found.loosened

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
        page = memobase.parse_search(
            await memobase.fetch_search(self.egress, base, query, limit, offset),
            offset=offset, limit=limit)
        problems: set[str] = set()
        items = [memobase.record_item(r, problems) for r in page.rows]
        if problems:
            page.notes.append((Code.RECORD_UNREADABLE, "Some records had fields of an "
                               f"unexpected shape, treated as absent: {names(problems)}."))
        return _lane(MEMOBASE, page, items, "exact", query,
                     {"q": query, "size": str(limit), "offset": str(offset)}, f"{base}/",
                     offset, [])

    async def _dodis_lane(self, query: str, limit: int, offset: int) -> Lane:
        base = self.endpoints.dodis
        page = dodis.parse_query(
            await dodis.fetch_query(self.egress, base, query, offset, limit),
            offset=offset, limit=limit)
        items = [dodis.hit_item(h) for h in page.rows]
        return _lane(DODIS, page, items, "exact", query,
                     {"query": query, "start": str(offset), "rows": str(limit)},
                     f"{base}/solr/query", offset,
                     ["Dodis gives no total; has_more means the page was full."] if items
                     else [])

    async def search_memory(self, query: str, collection: str, date_from: int | str | None,
                            date_to: int | str | None, media_type: str | None, limit: int,
                            offset: int, *, arguments: dict[str, Any]) -> Envelope:
        """Memobase and/or Dodis; date and media filters apply client-side to the fetched page.

        ``date_from``/``date_to`` are years or ISO dates (``1900``, ``"1900-01-01"``, as the
        original took them); the filter compares years. A ``date_from`` after ``date_to`` is
        refused before anything is sent.
        """
        op = "heritage_search_memory"
        wanted = ["memobase", "dodis"] if collection == "all" else [collection]
        sources = [MEMOBASE if n == "memobase" else DODIS for n in wanted]
        try:
            low, high = _date_key(date_from, "date_from"), _date_key(date_to, "date_to")
            if low is not None and high is not None and low > high:
                raise CoreError(
                    Code.INVALID_INPUT,
                    f"date_from ({date_from}) is after date_to ({date_to}); nothing was sent.",
                    details={"fields": ["date_from", "date_to"]},
                    remediation="Swap the two dates.")
        except CoreError as exc:
            return self._refused(op, exc, sources, arguments)
        year_from = low[0] if low is not None else None
        year_to = high[0] if high is not None else None
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
                              if _keep(i, year_from, year_to, media_type)]
                lane.filtered = before - len(lane.items)
                lane.notes.append(f"{lane.filtered} of {before} fetched items removed by the "
                                  f"client-side filters {sorted(filters)} (years compared; "
                                  "undated items kept); total is the upstream's, before "
                                  "filtering.")
        meta = {"clientside_filters": filters} if filters else {}
        return await self._answer(op, lanes, meta, arguments, offset, failures=failures,
                                  order=wanted)

    async def get_memory_item(self, collection: str, item_id: str, *,
                              arguments: dict[str, Any]) -> Envelope:
        """One Memobase record or Dodis document (never Dodis full text).

        An id the source does not have is ``NOT_FOUND``; a Memobase id may carry the
        ``mbr:`` prefix its records show.
        """
        op = "heritage_get_memory_item"
        source = MEMOBASE if collection == "memobase" else DODIS
        if collection == "memobase":
            base = self.endpoints.memobase
            wanted = memobase.record_id(item_id)
            endpoint = f"{base}/record/{wanted}"
        else:
            base = self.endpoints.dodis
            wanted = item_id
            endpoint = f"{base}/solr/full/{wanted}"
        described = f"{collection}:{wanted}"
        try:
            if collection == "memobase":
                item = memobase.parse_record(
                    await memobase.fetch_record(self.egress, base, wanted), wanted)
            else:
                item = dodis.parse_full(await dodis.fetch_full(self.egress, base, wanted),
                                        wanted)
        except CoreError as exc:
            if exc.details.get("status") == 404 or exc.code is Code.NOT_FOUND:
                return await self._not_found(
                    op, source, arguments, described, {"id": wanted}, endpoint,
                    f"{source.name} has no item {wanted}.",
                    "Check the id and collection, or find the item with "
                    "heritage_search_memory.")
            return await self._failed(op, exc, [source], arguments, described)
        lane = Lane(source, [item], 1, "exact", False, described, {"id": wanted}, endpoint)
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
        failures: Mapping[str, CoreError] | None = None,
        skipped: Sequence[str] = (),
        order: Sequence[str] | None = None,
        cursor_kind: str | None = None,
        typed: str = "",
    ) -> Envelope:
        failures = dict(failures or {})
        by_id = {lane.source.id: lane for lane in lanes}
        names_ = list(order) if order is not None else [lane.source.id for lane in lanes]
        pairs: list[tuple[Source, SourceStatus]] = []
        per_source: dict[str, dict[str, Any]] = {}
        items: list[dict[str, Any]] = []
        cut = [0]
        for name in names_:
            source = SOURCES[name]
            if name in by_id:
                lane = by_id[name]
                # Raw upstream values are bounded before an envelope holds them, so the reply
                # always serialises (a 900-deep value once made it fail after the receipt).
                lane.items = [bounded(i, cut=cut) for i in lane.items]
                items += lane.items
                # Items removed by our own filters were delivered: the source answered.
                status = (SourceStatus.ok if lane.items or lane.filtered
                          else SourceStatus.empty)
                pairs.append((source, status))
                per_source[name] = {"status": str(status),
                                    "returned": len(lane.items), "total": lane.total,
                                    "match_type": lane.match_type, "has_more": lane.has_more,
                                    "query_sent": lane.query, "licence": source.licence}
                if lane.filtered:
                    per_source[name]["removed_by_filters"] = lane.filtered
            elif name in failures:
                err = failures[name]
                pairs.append((source, status_for(err.code)))
                per_source[name] = {"status": str(status_for(err.code)), "error":
                                    {"code": str(err.code), "message": err.message}}
            elif name in skipped:
                pairs.append((source, SourceStatus.skipped))
                per_source[name] = {"status": "skipped", "reason": "not wired in this build"}
        query_text = " | ".join(f"{lane.source.id}: {lane.query}" for lane in lanes) if len(
            names_) > 1 else (lanes[0].query if lanes else "")
        if not lanes and failures:
            first = next(iter(failures.values()))
            env = Envelope.failure(SERVER.name, op, first, query=QueryInfo(input=arguments),
                                   data={"meta": {**meta, "per_source": per_source}})
            self._credit(env, pairs)
            await self._deposit(env, query_text, {}, [s for s, _ in pairs], str(first.code), [])
            return env
        single = len(names_) == 1 and lanes
        total = lanes[0].total if single else None
        has_more = any(lane.has_more for lane in lanes)
        match = _overall_match(lanes)
        next_offset = offset + len(lanes[0].items) + lanes[0].filtered if (
            single and has_more) else None
        data: dict[str, Any] = {
            "offset": offset, "next_offset": next_offset,
            "meta": {**meta, **({"per_source": per_source} if len(names_) > 1 else {})}}
        if next_offset is not None and cursor_kind is not None:
            data["next_cursor"] = paging.encode(paging.OffsetCursor(
                kind=cursor_kind, offset=next_offset, loosened=lanes[0].match_type == "fuzzy",
                fingerprint=paging.fingerprint(typed)))
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
            data=data,
        )
        self._credit(env, pairs)
        for lane in lanes:
            for code, warning in lane.warnings:
                env.diagnose(Level.warning, code, f"{lane.source.id}: {warning}")
            for note in lane.notes:
                env.diagnose(Level.info, Code.UPSTREAM_DIAGNOSTIC, f"{lane.source.id}: {note}")
            if lane.match_type == "fuzzy":
                env.diagnose(Level.warning, Code.ZERO_RESULT,
                             f"{lane.source.id}: no exact hits; these come from one loosened "
                             "search - check their relevance.")
        if cut[0]:
            env.diagnose(Level.warning, Code.RECORD_UNREADABLE,
                         f"{cut[0]} values nested deeper than {MAX_VALUE_DEPTH} levels inside "
                         "records were left out of the answer (shown as a placeholder).")
        for name, err in failures.items():
            env.diagnose(Level.warning, err.code, f"{name}: {err.message} Its result is "
                         "unknown, not empty; the other sources' answers stand.")
        if not items:
            if match == "none":
                env.diagnose(Level.info, Code.ZERO_RESULT, "Nothing matched.",
                             hint="Try fewer or other words.")
            else:
                env.diagnose(Level.info, Code.ZERO_RESULT,
                             "No item on this page, though the search itself matched (a page "
                             "past the last, or every item removed by the filters).")
        # The receipt says what the caller was told: the sources' status.
        outcome = "ok" if any(status is SourceStatus.ok for _, status in pairs) else "empty"
        await self._deposit(env, query_text, lanes[0].params if single else {},
                            [s for s, _ in pairs], outcome,
                            [f"{i.get('source')}:{i.get('id')}" for i in items])
        return env

    async def _not_found(self, op: str, source: Source, arguments: dict[str, Any],
                         query: str, params: Mapping[str, str], endpoint: str, message: str,
                         remediation: str) -> Envelope:
        """The suite's rule for a fetch of an id the upstream does not have: ``NOT_FOUND``."""
        err = CoreError(Code.NOT_FOUND, message, details={"query": query},
                        remediation=remediation)
        env = Envelope.failure(SERVER.name, op, err, query=QueryInfo(
            input=arguments, normalized=query, params=dict(params), endpoint=endpoint))
        self._credit(env, [(source, SourceStatus.empty)])
        await self._deposit(env, query, params, [source], str(err.code), [])
        return env

    def _refused(self, op: str, exc: CoreError, sources: Sequence[Source],
                 arguments: dict[str, Any]) -> Envelope:
        return responses.refused(SERVER.name, op, exc, sources=sources,
                                 query=QueryInfo(input=arguments))

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


def helveticat_lane(nb: Catalogue) -> PublicationSearch:
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
        warnings: list[tuple[Code, str]] = [(d.code, d.message) for d in env.diagnostics
                    if d.level is Level.warning and d.code is not Code.RECEIPT_WRITE_FAILED
                    and d.code is not Code.ZERO_RESULT]
        match = result.match_type or ("exact" if env.items else "none")
        return Lane(NB, list(env.items), result.total, match, result.has_more,
                    env.query.normalized or query if env.query else query,
                    dict(env.query.params) if env.query else {},
                    env.query.endpoint if env.query else None, notes, warnings)

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
