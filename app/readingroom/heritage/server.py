"""swiss-cultural-heritage-mcp's tool layer: input models, the eleven tools, the server.

All eleven tools are declared here over the one :class:`~.service.HeritageService`: Helveticat's
three (:func:`catalogue_tool_specs`, the National Library's catalogue over SRU and OAI-PMH) and
eight more (:func:`tool_specs`); Helveticat's search is also cross-search's NB lane. Every tool
takes ``response_format``: ``json`` sends the envelope's JSON as text, ``markdown`` (the
default, as in the original) a readable rendering ending with the source-and-licence footer;
``structuredContent`` always holds the envelope.

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
from .cql import SRU_INDEXES, IndexName
from .inputs import HeritageInput
from .paging import MAX_CURSOR_LEN
from .render import render_markdown
from .service import HeritageService
from .upstreams.helveticat import MAX_RECORDS

__all__ = [
    "INSTRUCTIONS",
    "RENAMED",
    "ArtistInput",
    "ArtistSearchInput",
    "BrowseInput",
    "CrossSearchInput",
    "GetPublicationInput",
    "HelveticatSearchInput",
    "ListCollectionsInput",
    "ListNbCollectionsInput",
    "MemoryItemInput",
    "MemorySearchInput",
    "MuseumSearchInput",
    "build_heritage_server",
    "catalogue_tool_specs",
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


# ---------------------------------------------------------------- the catalogue (Helveticat)
_INDEX_HELP = "; ".join(f"{k}: {v}" for k, v in SRU_INDEXES.items())


_NB_FORMAT_HELP = ("'markdown' (default): readable text ending with source and licence; "
                   "'json': the envelope as JSON text. structuredContent always holds the "
                   "envelope.")
_INDEX_HELP = "; ".join(f"{k}: {v}" for k, v in SRU_INDEXES.items())


class HelveticatSearchInput(HeritageInput):
    """Arguments of heritage_search_helveticat."""

    query: str | None = Field(
        None, min_length=1, max_length=300,
        description="Search words (title, person, subject), e.g. 'Volksschule Zürich', "
        "'Keller, Gottfried'. Without set_spec: a server-side search of the whole catalogue, "
        "as a phrase; with set_spec: filters only the fetched page of that collection.",
    )
    index: IndexName = Field(
        "all_for_ui",
        description="Which SRU index the query goes to (catalogue search only): "
        + _INDEX_HELP + ". No other index is accepted.",
    )
    set_spec: str | None = Field(
        None, min_length=1, max_length=100,
        description="Page through one collection instead of searching: an OAI set from "
        "heritage_list_nb_collections (e.g. 'swissbook', 'xrara'). Excludes the catalogue "
        "search: SRU does not know the sets.",
    )
    from_date: str | None = Field(
        None, max_length=20,
        description="Only records whose catalogue entry CHANGED on or after this date "
        "(YYYY-MM-DD). A change date, NOT a publication year: a book of 1890 may have been "
        "edited last week. Only with set_spec.",
    )
    until_date: str | None = Field(
        None, max_length=20,
        description="Only records changed on or before this date (YYYY-MM-DD). Change date, "
        "not publication year. Only with set_spec.",
    )
    limit: int = Field(
        10, ge=1, le=1000,
        description=f"Records to return, 1-{MAX_RECORDS}; more is capped at {MAX_RECORDS} "
        "(COUNT_CAPPED).",
    )
    cursor: str | None = Field(
        None, min_length=1, max_length=4096,
        description="Continue where the previous answer stopped: pass its data.next_cursor "
        "unchanged, with the same query/index (search) or set_spec (collection).",
    )
    response_format: Format = Field("markdown", description=_NB_FORMAT_HELP)


class GetPublicationInput(HeritageInput):
    """Arguments of heritage_get_publication."""

    identifier: str = Field(
        min_length=5, max_length=120,
        description="The item's id from heritage_search_helveticat "
        "(oai:helveticat.nb.admin.ch:<MMS id>), or the bare MMS id (991016034239703976).",
    )
    response_format: Format = Field("markdown", description=_NB_FORMAT_HELP)


class ListNbCollectionsInput(HeritageInput):
    """Arguments of heritage_list_nb_collections."""

    response_format: Format = Field("markdown", description=_NB_FORMAT_HELP)


_SEARCH_DESCRIPTION = (
    "Search the Swiss National Library's catalogue Helveticat, or page through one of its "
    "collections. Two paths, chosen by the arguments: query without set_spec is a "
    "server-side search of the whole catalogue over SRU, with a total; if the phrase finds "
    "nothing, it is retried once with every word anywhere and marked match_type 'fuzzy'. "
    "set_spec (from heritage_list_nb_collections), optionally with from_date/until_date "
    "(catalogue CHANGE dates, not publication years), lists that collection over OAI-PMH; a "
    "query then filters only the page fetched, and the answer says so (data.page_filter). "
    "Dates without set_spec, or neither query nor set_spec, are refused without a request. "
    "Order: catalogue search results come in TITLE order, not by relevance (data.order); "
    "collections in repository order. Page on with data.next_cursor while result.has_more. "
    "Items: id (pass to heritage_get_publication), title, creators (name, dates, GND id, "
    "roles), date, publishers, subjects, ddc, identifiers (ISBN, system numbers), rights and "
    "licence where the record has them, permalink where known. An API_ERROR result means "
    "nothing was searched, never 'nothing found'."
)


def catalogue_tool_specs(service: HeritageService) -> list[ToolSpec]:
    """The three Helveticat tools, bound to ``service``'s catalogue."""

    async def search(args: HelveticatSearchInput) -> Envelope:
        return await service.search_publications(
            query=args.query, set_spec=args.set_spec, from_date=args.from_date,
            until_date=args.until_date, index=args.index, limit=args.limit,
            cursor=args.cursor, arguments=args.model_dump(exclude_none=True),
        )

    async def get_publication(args: GetPublicationInput) -> Envelope:
        return await service.get_publication(
            args.identifier, arguments=args.model_dump(exclude_none=True))

    async def list_collections(args: ListNbCollectionsInput) -> Envelope:
        return await service.list_nb_collections(arguments=args.model_dump(exclude_none=True))

    return [
        ToolSpec(
            name="heritage_search_helveticat",
            title="Search the Swiss National Library catalogue (Helveticat)",
            description=_SEARCH_DESCRIPTION,
            input_model=HelveticatSearchInput, handler=search,
        ),
        ToolSpec(
            name="heritage_get_publication",
            title="Fetch one Helveticat record in full",
            description=(
                "Fetch one National Library record in full (MARC21 over OAI-PMH GetRecord), "
                "by the id an item of heritage_search_helveticat carries (either path) or a "
                "bare MMS id. Returns one item with title, creators and contributors (GND ids, "
                "roles), imprint, extent, subjects, DDC, notes, ISBN/system numbers, rights "
                "and the human permalink (permalink.snl.ch). An unknown id is a NOT_FOUND "
                "error, not an empty result."
            ),
            input_model=GetPublicationInput, handler=get_publication,
        ),
        ToolSpec(
            name="heritage_list_nb_collections",
            title="List the National Library's OAI collections",
            description=(
                "List the OAI-PMH collections (sets) of Helveticat, each with the one metadata "
                "format it is published in (marc21 for all but RFN and RFN2) and its family "
                "(web archive by canton, e-dissertations …). Use a set_spec with "
                "heritage_search_helveticat to page through that collection."
            ),
            input_model=ListNbCollectionsInput, handler=list_collections,
        ),
    ]


# ---------------------------------------------------------------- the server
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
    """Build the swiss-cultural-heritage-mcp server: Helveticat's three tools and eight more."""
    chosen = service or HeritageService(env=env, clock=clock, transport=transport)
    specs = [*(_formatted(s) for s in catalogue_tool_specs(chosen)), *tool_specs(chosen)]
    return build_server(SERVER, INSTRUCTIONS, specs, env=env, resources=RESOURCES,
                        prompts=PROMPTS)
