"""The three Helveticat tools: input models and :class:`~readingroom.core.mcpkit.ToolSpec`s.

Thin on purpose: each tool validates its arguments and hands them to
:class:`~.service.HelveticatService`. Every input has ``response_format`` (``markdown`` or
``json``); the service ignores it and the server renders the envelope's text accordingly.

**The envelope these tools fill** (for the renderer): ``items`` are publications in the shape
of :data:`~.service.ITEM_KEYS` (search and get) or sets ``{set_spec, name, metadata_prefix,
group?, note?}`` (list). ``result`` has ``total`` (None when unknown, e.g. a page filter),
``returned``, ``has_more``, ``match_type`` (exact, fuzzy, none; None for a page filter).
``data`` has ``path`` (sru/oai), ``order`` and ``order_note`` (state them: SRU answers are in
title order, never relevance), ``next_cursor`` when ``has_more``, ``loosened`` for a fuzzy
search, ``page_filter.note`` when a query filtered one OAI page, ``set_spec`` and
``metadata_prefix`` on the OAI path.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ...core.envelope import Envelope
from ...core.mcpkit import ToolSpec
from ..inputs import HeritageInput
from .client import MAX_RECORDS
from .query import SRU_INDEXES, IndexName
from .service import HelveticatService

__all__ = [
    "GetPublicationInput",
    "HelveticatSearchInput",
    "ListNbCollectionsInput",
    "helveticat_tool_specs",
]

ResponseFormat = Literal["markdown", "json"]
_FORMAT_HELP = ("'markdown' (default): readable text ending with source and licence; 'json': "
                "the envelope as JSON text. structuredContent always holds the envelope.")
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
    response_format: ResponseFormat = Field("markdown", description=_FORMAT_HELP)


class GetPublicationInput(HeritageInput):
    """Arguments of heritage_get_publication."""

    identifier: str = Field(
        min_length=5, max_length=120,
        description="The item's id from heritage_search_helveticat "
        "(oai:helveticat.nb.admin.ch:<MMS id>), or the bare MMS id (991016034239703976).",
    )
    response_format: ResponseFormat = Field("markdown", description=_FORMAT_HELP)


class ListNbCollectionsInput(HeritageInput):
    """Arguments of heritage_list_nb_collections."""

    response_format: ResponseFormat = Field("markdown", description=_FORMAT_HELP)


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


def helveticat_tool_specs(service: HelveticatService) -> list[ToolSpec]:
    """The three Helveticat tools, bound to ``service``."""

    async def search(args: HelveticatSearchInput) -> Envelope:
        return await service.search(
            query=args.query, set_spec=args.set_spec, from_date=args.from_date,
            until_date=args.until_date, index=args.index, limit=args.limit,
            cursor=args.cursor, arguments=args.model_dump(exclude_none=True),
        )

    async def get_publication(args: GetPublicationInput) -> Envelope:
        return await service.get_publication(
            args.identifier, arguments=args.model_dump(exclude_none=True))

    async def list_collections(args: ListNbCollectionsInput) -> Envelope:
        return await service.list_collections(arguments=args.model_dump(exclude_none=True))

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
