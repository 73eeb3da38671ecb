"""ndl-mcp's tool layer: input models, tool declarations, and the server they make.

Thin on purpose: every tool validates its arguments and hands them to :class:`NdlService`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from mcp.server.lowlevel import Server
from pydantic import BaseModel, ConfigDict, Field

from ..core import responses
from ..core.clock import Clock
from ..core.envelope import Envelope, SourceStatus
from ..core.mcpkit import ToolSpec, build_server
from . import SERVER
from .service import NdlService
from .sources import ALL_DPIDS, sources
from .upstreams.ndl_search import MAX_RECORDS, NdlClient

__all__ = [
    "INSTRUCTIONS",
    "MAX_CODE_CHARS",
    "MAX_TERM_CHARS",
    "GetRecordInput",
    "SearchAllInput",
    "SearchInput",
    "build_ndl_server",
    "tool_specs",
]


MAX_TERM_CHARS = 300
"""The longest free-text term (title, creator…): far above any real title, and a refused
term is never echoed in full (issue 18 §6)."""
MAX_CODE_CHARS = 40
"""The longest identifier or classification argument (an ISBN-13 with hyphens is 17)."""


class SearchInput(BaseModel):
    """Fields of an NDL Search query; every given field must match (AND)."""

    model_config = ConfigDict(extra="forbid")

    title: str | None = Field(None, max_length=MAX_TERM_CHARS,
                              description="Words of the title (partial match).")
    creator: str | None = Field(None, max_length=MAX_TERM_CHARS,
                                description="Author, editor, translator (partial match).")
    publisher: str | None = Field(None, max_length=MAX_TERM_CHARS,
                                  description="Publisher name (partial match).")
    subject: str | None = Field(None, max_length=MAX_TERM_CHARS,
                                description="Subject heading words (partial match).")
    anywhere: str | None = Field(
        None, max_length=MAX_TERM_CHARS,
        description="Words anywhere in the record, as NDL's simple search (partial)."
    )
    ndc: str | None = Field(
        None, max_length=MAX_CODE_CHARS,
        description="NDC/NDLC classification, matched as a prefix (e.g. 913.6)."
    )
    isbn: str | None = Field(None, max_length=MAX_CODE_CHARS,
                             description="ISBN-10 or ISBN-13, exact (hyphens allowed).")
    issn: str | None = Field(None, max_length=MAX_CODE_CHARS,
                             description="ISSN, exact (e.g. 0387-3250).")
    from_year: int | None = Field(None, ge=1, le=9999, description="Published in or after.")
    to_year: int | None = Field(None, ge=1, le=9999, description="Published in or before.")
    count: int = Field(
        20, ge=1,
        description=f"Records to return, 1-{MAX_RECORDS}; more is capped at {MAX_RECORDS}.",
    )
    start: int = Field(
        1, ge=1, le=500,
        description="1-based position to start at (from result.next_start). NDL serves no "
        "record past the 500th.",
    )

    def fields(self) -> dict[str, Any]:
        """The search fields only (not paging)."""
        return self.model_dump(exclude={"count", "start"})


class SearchAllInput(SearchInput):
    """A search over several declared providers at once."""

    providers: list[Annotated[str, Field(max_length=MAX_CODE_CHARS)]] | None = Field(
        None, max_length=len(ALL_DPIDS),
        description="Subset of the five declared dpids to search: " + ", ".join(ALL_DPIDS)
        + ". Omit for all five. Any other dpid is refused.",
    )


class GetRecordInput(BaseModel):
    """Exactly one identifier of the record to fetch."""

    model_config = ConfigDict(extra="forbid")

    jpno: str | None = Field(None, max_length=MAX_CODE_CHARS,
                             description="JP number (全国書誌番号), e.g. 71009951.")
    ndl_bib_id: str | None = Field(
        None, max_length=MAX_CODE_CHARS,
        description="NDL bibliographic id (NDLBibID), e.g. 000001185032."
    )
    ndl_search_id: str | None = Field(
        None, max_length=2 * MAX_CODE_CHARS,
        description="NDL Search token from an item's ndl_search_id, e.g. "
        "R100000002-I000001185032."
    )


_FIELDS_HELP = (
    "Fields combine with AND: title, creator, publisher, subject and anywhere match partially "
    "(several words in one field must all occur); ndc matches as a prefix; isbn and issn "
    "exactly; from_year/to_year bound the publication year. Write terms in Japanese script "
    "for Japanese material: a romanised term under-returns (SCRIPT_LATIN_QUERY). Do not put "
    "'and'/'or' between words (NDL rejects the query; RESERVED_WORD_IN_QUERY) - run one "
    "search per alternative. Returns the suite's envelope: searched_for (terms and indexes), "
    "result (total, breadth, next_start), items (title, title_reading, creators, identifiers, "
    "links to digitised copies, related: the same work in CiNii Research for cinii-mcp's "
    "cinii_get_record), diagnostics, attribution to credit. A RATE_LIMITED or "
    "TRANSPORT_ERROR result is unknown, never 'nothing found'."
)

INSTRUCTIONS = (
    "ndl-mcp searches NDL Search (国立国会図書館サーチ), the National Diet Library of Japan, over "
    "SRU. Choose the tool by what you need: ndl_search_books for books and serials held by "
    "the NDL; ndl_search_national_bibliography for the Japanese National Bibliography (JNB, "
    "books published in Japan, with JP numbers); ndl_search_articles for journal articles "
    "(雑誌記事索引); ndl_search_digital_open for digitised material whose metadata is open "
    "data; ndl_search_all when unsure (all five sets at once, or a chosen subset); "
    "ndl_get_record to fetch one record by jpno, NDL bib id or NDL Search id. Requests are "
    "strictly serial with at least one second between them, so prefer one well-aimed query "
    "over many. At most 100 records per call; nothing past the 500th of a result set. "
    "Credit the attribution lines when you use the data."
)


def tool_specs(service: NdlService) -> list[ToolSpec]:
    """The six tools of ndl-mcp, bound to ``service``."""

    def search_tool(name: str, title: str, dpids: tuple[str, ...], purpose: str) -> ToolSpec:
        async def handler(args: SearchInput) -> Envelope:
            return await service.search(
                name, dpids, args.fields(), start=args.start, count=args.count,
                arguments=args.model_dump(exclude_none=True),
            )

        return ToolSpec(name=name, title=title, description=f"{purpose} {_FIELDS_HELP}",
                        input_model=SearchInput, handler=handler)

    async def search_all(args: SearchAllInput) -> Envelope:
        dpids = tuple(args.providers) if args.providers is not None else ALL_DPIDS
        fields = args.model_dump(exclude={"count", "start", "providers"})
        return await service.search(
            "ndl_search_all", dpids, fields, start=args.start, count=args.count,
            arguments=args.model_dump(exclude_none=True),
        )

    async def get_record(args: GetRecordInput) -> Envelope:
        return await service.get_record(
            jpno=args.jpno, ndl_bib_id=args.ndl_bib_id, ndl_search_id=args.ndl_search_id,
            arguments=args.model_dump(exclude_none=True),
        )

    return [
        search_tool(
            "ndl_search_books", "Search NDL holdings (books and serials)", ("iss-ndl-opac",),
            "Search the National Diet Library's own holdings (国立国会図書館蔵書, dpid "
            "iss-ndl-opac): books, serials and their issues. Use ndl_search_articles for "
            "journal articles and ndl_search_national_bibliography for the JNB.",
        ),
        search_tool(
            "ndl_search_national_bibliography", "Search the Japanese National Bibliography",
            ("iss-ndl-opac-national",),
            "Search the Japanese National Bibliography (全国書誌情報, dpid "
            "iss-ndl-opac-national): completed records of publications deposited in Japan, "
            "each with a JP number. Narrower than ndl_search_books; use it when you need "
            "authoritative bibliographic records or JP numbers.",
        ),
        search_tool(
            "ndl_search_articles", "Search Japanese journal articles",
            ("zassaku", "zassaku-online"),
            "Search journal articles in the NDL periodicals index (雑誌記事索引, dpids zassaku "
            "and zassaku-online). Items carry journal, volume, number, issue and pages. Use "
            "ndl_search_books for books.",
        ),
        search_tool(
            "ndl_search_digital_open", "Search NDL Digital Collections (open data)",
            ("ndl-dl-open",),
            "Search digitised material in NDL Digital Collections whose metadata is open data "
            "(デジタルコレクション（オープンデータ）, dpid ndl-dl-open). Items link to the "
            "digitised copy (dl.ndl.go.jp); access_rights says whether it is public online.",
        ),
        ToolSpec(
            name="ndl_search_all", title="Search all five declared NDL sets",
            description=(
                "Search the five declared NDL sets at once (books, national bibliography, two "
                "article indexes, open digital collections), or the subset named in "
                "`providers`. Use when you do not know which kind of material holds the "
                "answer; result.by_provider shows where the total came from. " + _FIELDS_HELP
            ),
            input_model=SearchAllInput, handler=search_all,
        ),
        ToolSpec(
            name="ndl_get_record", title="Fetch one NDL record by identifier",
            description=(
                "Fetch one record by exactly one identifier: jpno (JP number), ndl_bib_id "
                "(NDLBibID) or ndl_search_id (the R...-I... token of an item). Exact index "
                "lookup within the five declared sets, never a free-text search. Use after a "
                "search to re-read a record, or when you already hold an identifier. The "
                "envelope has no searched_for (no term was chosen). An identifier NDL Search "
                "does not have is a NOT_FOUND error (no such record in the declared sets); "
                "API_ERROR or TRANSPORT_ERROR means the answer is unknown."
            ),
            input_model=GetRecordInput, handler=get_record,
        ),
    ]


def _ensure_credit(env: Envelope, _tool: str) -> None:
    """Credit on every response: failures caught before the service still carry it."""
    if not env.attribution:
        responses.credit(env, sources(ALL_DPIDS), SourceStatus.skipped)


def build_ndl_server(
    client: NdlClient | None = None,
    *,
    env: Mapping[str, str] | None = None,
    clock: Clock | None = None,
) -> Server:
    """Build the ndl-mcp server (a fresh :class:`NdlClient` unless one is given).

    ``clock`` stamps the receipts (tests pin it); the client keeps its own for pacing.
    """
    service = NdlService(client or NdlClient(env=env, clock=clock), env=env, clock=clock)
    return build_server(SERVER, INSTRUCTIONS, tool_specs(service), env=env,
                        finish=_ensure_credit)
