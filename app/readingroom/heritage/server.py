"""swiss-cultural-heritage-mcp's tool layer: input models, the eleven tools, the server.

Eight tools are declared here over :class:`~.service.HeritageService`; Helveticat's three come
from :func:`readingroom.heritage.helveticat.tools.helveticat_tool_specs`, and Helveticat's
search is cross-search's NB lane. Every tool takes ``response_format``: ``json`` sends the
envelope's JSON as text, ``markdown`` (the default, as in the original) a readable rendering
ending with the source-and-licence footer; ``structuredContent`` always holds the envelope.

Three of the original's names did not carry the server prefix; they are renamed (see
:data:`RENAMED`), so every tool of the suite starts with its server's prefix.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Mapping
from typing import Annotated, Any, Literal

import httpx
from mcp.server.lowlevel import Server
from pydantic import BaseModel, Field, StringConstraints, field_validator

from ..core.clock import Clock
from ..core.envelope import Envelope
from ..core.mcpkit import Reply, ToolSpec, build_server
from . import SERVER
from .content import PROMPTS, RESOURCES
from .helveticat.client import HelveticatClient
from .helveticat.service import HelveticatService
from .helveticat.tools import helveticat_tool_specs
from .inputs import HeritageInput
from .paging import MAX_CURSOR_LEN
from .render import render_markdown
from .service import HeritageService, helveticat_lane

__all__ = [
    "INSTRUCTIONS",
    "RENAMED",
    "ArtistInput",
    "ArtistSearchInput",
    "BrowseInput",
    "CrossSearchInput",
    "ListCollectionsInput",
    "MemoryItemInput",
    "MemorySearchInput",
    "MuseumSearchInput",
    "build_heritage_server",
    "reply",
    "tool_specs",
]

log = logging.getLogger("readingroom.heritage")

RENAMED: Mapping[str, str] = {
    "search_heritage": "heritage_search_memory",
    "get_heritage_item": "heritage_get_memory_item",
    "list_heritage_collections": "heritage_list_memory_collections",
}
"""The original's unprefixed names → ours."""

Format = Literal["markdown", "json"]
CrossSource = Literal["sik_isea", "snm", "nb"]
_ALL_CROSS: tuple[CrossSource, ...] = ("sik_isea", "snm", "nb")
_FORMAT_HELP = ("markdown: readable text with a source-and-licence footer; json: the envelope "
                "as JSON text. structuredContent always holds the envelope.")
_DATE_ARG = re.compile(r"^\d{1,4}(?:-\d{2}(?:-\d{2})?)?$")


_CURSOR_HELP = ("Continue where the previous answer stopped: its data.next_cursor, passed with "
                "the same words. Keeps a loosened (fuzzy) search loosened on every page.")


class ArtistSearchInput(HeritageInput):
    """Search SIKART artists."""

    query: str | None = Field(None, min_length=1, max_length=200, pattern=r"\S",
                              description="Name or words (all must match), e.g. 'Giacometti'. "
                              "May be left out when region is given.")
    region: str | None = Field(None, max_length=100,
                               description="Birth/death place or canton, added to the query; "
                               "alone, it lists the artists of that place.")
    limit: int = Field(20, ge=1, le=100, description="Rows to return (1-100).")
    offset: int = Field(0, ge=0, le=100_000, description="Rows to skip (paging).")
    cursor: str | None = Field(None, min_length=1, max_length=MAX_CURSOR_LEN,
                               description=_CURSOR_HELP)
    response_format: Format = Field("markdown", description=_FORMAT_HELP)


class ArtistInput(HeritageInput):
    """One SIKART artist."""

    artist_id: str = Field(min_length=1, max_length=20, pattern=r"^\d+$",
                           description="The SIKART id (HAUPTNR), e.g. '4005571'.")
    response_format: Format = Field("markdown", description=_FORMAT_HELP)


class MuseumSearchInput(HeritageInput):
    """Search the Swiss National Museum's datasets."""

    query: str | None = Field(None, min_length=1, max_length=200, pattern=r"\S",
                              description="Words, e.g. 'Archäologie', 'Waffen'. Leave out to "
                              "list every SNM dataset.")
    collection: str | None = Field(None, max_length=100,
                                   description="A collection word added to the query.")
    limit: int = Field(10, ge=1, le=100, description="Datasets to return (1-100).")
    offset: int = Field(0, ge=0, le=10_000, description="Datasets to skip (paging).")
    cursor: str | None = Field(None, min_length=1, max_length=MAX_CURSOR_LEN,
                               description=_CURSOR_HELP)
    response_format: Format = Field("markdown", description=_FORMAT_HELP)


class BrowseInput(HeritageInput):
    """Rows of one CKAN DataStore resource."""

    resource_id: str = Field(min_length=8, max_length=64, pattern=r"^[A-Za-z0-9-]+$",
                             description="A resource id from heritage_search_museum_datasets.")
    query: str | None = Field(None, max_length=200, description="Full-text filter of rows.")
    limit: int = Field(20, ge=1, le=100, description="Rows to return (1-100).")
    offset: int = Field(0, ge=0, le=100_000, description="Rows to skip (paging).")
    response_format: Format = Field("markdown", description=_FORMAT_HELP)


class CrossSearchInput(HeritageInput):
    """One query over artists, museum and National Library."""

    query: str = Field(min_length=2, max_length=200, description="Words to search for.")
    sources: list[CrossSource] = Field(
        default_factory=lambda: list(_ALL_CROSS), min_length=1, max_length=3,
        description="Sources to ask (default all three); repeats are ignored.")
    limit_per_source: int = Field(5, ge=1, le=20, description="Items per source (1-20).")
    response_format: Format = Field("markdown", description=_FORMAT_HELP)


DateText = Annotated[str, StringConstraints(max_length=20)]


class MemorySearchInput(HeritageInput):
    """Search Memobase and/or Dodis."""

    query: str = Field(min_length=2, max_length=200, description="Words to search for.")
    collection: Literal["memobase", "dodis", "all"] = Field(
        "all", description="memobase (photo, film, sound), dodis (diplomatic documents), or "
        "all.")
    date_from: int | DateText | None = Field(
        None, description="Earliest year: 1900, or an ISO date '1900-01-01' as the original "
        "took it (the year is compared). Client-side on the page; undated items kept.")
    date_to: int | DateText | None = Field(None, description="Latest year or ISO date (likewise).")
    media_type: str | None = Field(None, max_length=50,
                                   description="Type substring, e.g. 'Foto' (client-side).")
    limit: int = Field(10, ge=1, le=100, description="Items per source (1-100).")
    offset: int = Field(0, ge=0, le=100_000, description="Items to skip per source.")
    response_format: Format = Field("markdown", description=_FORMAT_HELP)

    @field_validator("date_from", "date_to", mode="before")
    @classmethod
    def _date(cls, value: Any) -> Any:
        if isinstance(value, bool):
            raise ValueError("a year or an ISO date, not a boolean")
        if isinstance(value, int) and not 0 <= value <= 2100:
            raise ValueError("a year between 0 and 2100")
        if isinstance(value, str) and not _DATE_ARG.fullmatch(value.strip()):
            raise ValueError("a year (1900) or an ISO date (1900-01-01)")
        return value


class MemoryItemInput(HeritageInput):
    """One Memobase record or Dodis document."""

    collection: Literal["memobase", "dodis"] = Field(description="Where the item is.")
    item_id: str = Field(min_length=1, max_length=200, pattern=r"^[A-Za-z0-9_.:\-]+$",
                         description="The item id from heritage_search_memory, e.g. "
                         "'abb-001-1603_39_Foto_St' (the 'mbr:' prefix may stay) or 'G27'.")
    response_format: Format = Field("markdown", description=_FORMAT_HELP)


class ListCollectionsInput(HeritageInput):
    """No arguments but the format."""

    response_format: Format = Field("markdown", description=_FORMAT_HELP)


INSTRUCTIONS = (
    "swiss-cultural-heritage-mcp searches Swiss heritage sources. Artists: "
    "heritage_search_artists, then heritage_get_artist (SIKART). Museum: "
    "heritage_search_museum_datasets, then heritage_browse_collection for a resource with "
    "datastore_active true. Books and the National Library's collections: "
    "heritage_search_helveticat, heritage_list_nb_collections, heritage_get_publication. One "
    "query everywhere: heritage_cross_search. Photos, film, sound and diplomatic documents: "
    "heritage_search_memory, heritage_get_memory_item, heritage_list_memory_collections "
    "(the original's search_heritage, get_heritage_item, list_heritage_collections). "
    "match_type fuzzy means one loosened retry after zero exact hits: check relevance. A "
    "source with status error or rate_limited, an API_ERROR, or a missing result.total is "
    "UNKNOWN, not empty; match_type none is a genuine zero. An unknown id in a fetch tool is "
    "NOT_FOUND. Continue with data.next_cursor. Each item carries its own licence; respect it "
    "(SIKART: CC BY-NC-SA). Every tool also accepts the original's {\"params\": {...}} form."
)


def reply(env: Envelope, response_format: str) -> Envelope | Reply:
    """The envelope as JSON text, or with its Markdown rendering as the text."""
    if response_format == "json":
        return env
    return Reply(env, text=render_markdown(env))


def _args(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(exclude_none=True)


def tool_specs(service: HeritageService) -> list[ToolSpec]:
    """The eight tools of this package, bound to ``service``."""

    async def search_artists(a: ArtistSearchInput) -> Envelope | Reply:
        return reply(await service.search_artists(a.query, a.region, a.limit, a.offset,
                                                  cursor=a.cursor, arguments=_args(a)),
                     a.response_format)

    async def get_artist(a: ArtistInput) -> Envelope | Reply:
        return reply(await service.get_artist(a.artist_id, arguments=_args(a)),
                     a.response_format)

    async def search_museum(a: MuseumSearchInput) -> Envelope | Reply:
        return reply(await service.search_museum(a.query, a.collection, a.limit, a.offset,
                                                 cursor=a.cursor, arguments=_args(a)),
                     a.response_format)

    async def browse(a: BrowseInput) -> Envelope | Reply:
        return reply(await service.browse_collection(a.resource_id, a.query, a.limit, a.offset,
                                                     arguments=_args(a)), a.response_format)

    async def cross(a: CrossSearchInput) -> Envelope | Reply:
        return reply(await service.cross_search(a.query, a.sources, a.limit_per_source,
                                                arguments=_args(a)), a.response_format)

    async def search_memory(a: MemorySearchInput) -> Envelope | Reply:
        return reply(await service.search_memory(
            a.query, a.collection, a.date_from, a.date_to, a.media_type, a.limit, a.offset,
            arguments=_args(a)), a.response_format)

    async def get_item(a: MemoryItemInput) -> Envelope | Reply:
        return reply(await service.get_memory_item(a.collection, a.item_id,
                                                   arguments=_args(a)), a.response_format)

    async def list_collections(a: ListCollectionsInput) -> Envelope | Reply:
        return reply(service.list_memory_collections(), a.response_format)

    return [
        ToolSpec(
            "heritage_search_artists", "Search Swiss artists (SIKART)",
            "Search the SIKART Lexikon's ~17,000 artists (SIK-ISEA, opendata.swiss) by name or "
            "words; all words must match. region (place or canton) narrows, or alone lists a "
            "place's artists. Zero hits with 2+ words → one retry with the longest word, "
            "match_type fuzzy. Items: id (HAUPTNR for heritage_get_artist), name, life dates, "
            "canton, vita, SIKART link, the row's own licence (CC BY-NC-SA) and the raw row. "
            "Paging: pass data.next_cursor (keeps a fuzzy search fuzzy) with the same words, or "
            "offset. No result.total means the count is unknown, not zero.",
            ArtistSearchInput, search_artists),
        ToolSpec(
            "heritage_get_artist", "Get one SIKART artist",
            "The full SIKART row of one artist by HAUPTNR (from heritage_search_artists), with "
            "its licence. An id SIKART does not have is a NOT_FOUND error; an upstream failure "
            "is API_ERROR (unknown, not 'no such artist').",
            ArtistInput, get_artist),
        ToolSpec(
            "heritage_search_museum_datasets", "Search Swiss National Museum datasets",
            "Search the Swiss National Museum's (SNM) open datasets on opendata.swiss; without "
            "a query, list them all. Zero hits → one retry with every word as a prefix, OR-ed "
            "(fuzzy). Items: dataset name, title, description, link, licence, resources (id, "
            "format, url, datastore_active). Use a resource id with datastore_active true in "
            "heritage_browse_collection; others are downloads only. Paging: data.next_cursor "
            "with the same words, or offset.",
            MuseumSearchInput, search_museum),
        ToolSpec(
            "heritage_browse_collection", "Browse a museum dataset's rows",
            "Rows of one CKAN DataStore resource (an id from heritage_search_museum_datasets), "
            "optionally filtered by query. Checks datastore_active first: a resource without a "
            "DataStore is refused with its download URL (CAPABILITY_UNAVAILABLE), never "
            "answered as empty; an unknown resource id is NOT_FOUND. data.meta.fields lists "
            "the columns.",
            BrowseInput, browse),
        ToolSpec(
            "heritage_cross_search", "Search artists, museum and National Library at once",
            "One query to SIKART artists (sik_isea), SNM datasets (snm) and the National "
            "Library (nb) in parallel. A failing source is reported in sources and "
            "data.meta.per_source (status, match_type, total) and never fails the others. "
            "Every item carries its source tag. Use the single-source tools to page further.",
            CrossSearchInput, cross),
        ToolSpec(
            "heritage_search_memory", "Search Memobase and Dodis",
            "Search Memobase (photos, film, video, sound of Swiss memory institutions) and/or "
            "Dodis (Swiss diplomatic documents, persons, places). Was search_heritage. "
            "date_from/date_to (years, or ISO dates like '1900-01-01': the year is compared) "
            "and media_type filter the fetched page client-side (undated items kept; the "
            "answer says how many were removed). Items: id for "
            "heritage_get_memory_item, title, type, date, permalink, metadata licence and the "
            "object's own usage rule. Dodis gives no total.",
            MemorySearchInput, search_memory),
        ToolSpec(
            "heritage_get_memory_item", "Get one Memobase or Dodis item",
            "One Memobase record or Dodis document by id (from heritage_search_memory). Was "
            "get_heritage_item. Memobase ids may keep their 'mbr:' prefix. Dodis full-text "
            "fields are never returned (their names are in withheld_fields). An id the source "
            "does not have is a NOT_FOUND error.",
            MemoryItemInput, get_item),
        ToolSpec(
            "heritage_list_memory_collections", "List the memory institutions",
            "The memory institutions this server knows: Memobase and Dodis (active), "
            "Bundesarchiv and Landesmuseum online collection (not connected, with the reason). "
            "Was list_heritage_collections. A fixed list; sends no request.",
            ListCollectionsInput, list_collections, open_world=False),
    ]


def _formatted(spec: ToolSpec) -> ToolSpec:
    """A Helveticat tool whose envelope is rendered by its ``response_format``."""
    inner = spec.handler

    async def handler(args: Any) -> Envelope | Reply:
        out = await inner(args)
        env = out.envelope if isinstance(out, Reply) else out
        return reply(env, getattr(args, "response_format", "markdown"))

    return dataclasses.replace(spec, handler=handler)


def build_heritage_server(
    service: HeritageService | None = None,
    *,
    env: Mapping[str, str] | None = None,
    clock: Clock | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
) -> Server:
    """Build the swiss-cultural-heritage-mcp server: Helveticat's three tools and our eight.

    Helveticat's service is also cross-search's NB lane (unless ``service`` has one already).
    """
    nb = HelveticatService(HelveticatClient(env=env, clock=clock, transport=transport),
                           server=SERVER.name, env=env, clock=clock)
    chosen = service or HeritageService(env=env, clock=clock, transport=transport)
    if chosen.publication_search is None:
        chosen.publication_search = helveticat_lane(nb)
    specs = [*(_formatted(s) for s in helveticat_tool_specs(nb)), *tool_specs(chosen)]
    return build_server(SERVER, INSTRUCTIONS, specs, env=env, resources=RESOURCES,
                        prompts=PROMPTS)
