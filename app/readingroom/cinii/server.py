"""cinii-mcp's tool layer: input models, tool declarations, and the server they make.

Thin on purpose: every tool validates its arguments and hands them to :class:`CiniiService`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import httpx
from mcp.server.lowlevel import Server
from pydantic import BaseModel, ConfigDict, Field

from ..core import responses
from ..core.clock import Clock
from ..core.envelope import Envelope, SourceStatus
from ..core.mcpkit import ToolSpec, build_server
from . import ENV_APPID, SERVER
from .service import CiniiService
from .sources import CINII
from .upstreams.courtesy import MAX_RECORDS

__all__ = [
    "INSTRUCTIONS",
    "MAX_CODE_CHARS",
    "MAX_TERM_CHARS",
    "AllInput",
    "ArticlesInput",
    "BooksInput",
    "DissertationsInput",
    "GetRecordInput",
    "ProjectsInput",
    "build_cinii_server",
    "tool_specs",
]

MAX_TERM_CHARS = 300
"""The longest free-text term: far above any real title; a refused term is never echoed."""
MAX_CODE_CHARS = 40
"""The longest identifier argument (an ISBN-13 with hyphens is 17)."""
_DATE = r"^[0-9]{4}([0-9]{2})?$"

SortAll = Literal["relevance", "newest", "oldest"]


class _Search(BaseModel):
    """Fields of a CiNii Research search; every given field must match (AND)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    q: str | None = Field(None, max_length=MAX_TERM_CHARS,
                          description="Free words anywhere in the record (partial match; "
                          "several words must all occur).")
    title: str | None = Field(None, max_length=MAX_TERM_CHARS,
                              description="Words of the title (partial match).")
    creator: str | None = Field(None, max_length=MAX_TERM_CHARS,
                                description="Author, editor or researcher name (partial match).")
    from_: str | None = Field(None, alias="from", pattern=_DATE,
                              description="Published (awarded, started) in or after: YYYY or "
                              "YYYYMM.")
    until: str | None = Field(None, pattern=_DATE,
                              description="Published (awarded, started) in or before: YYYY or "
                              "YYYYMM.")
    count: int = Field(20, ge=1, le=10_000,
                       description=f"Records to return, 1-{MAX_RECORDS}; more is capped at "
                       f"{MAX_RECORDS}. No automatic paging.")
    start: int = Field(1, ge=1, le=1_000_000,
                       description="1-based position to start at; pass result.next_start of "
                       "the previous page to continue.")

    def fields(self) -> dict[str, Any]:
        """The search fields by their OpenSearch names."""
        data = self.model_dump(by_alias=True, exclude={"count", "start", "sortorder"})
        return {k: v for k, v in data.items() if v is not None}


class ArticlesInput(_Search):
    """A search of articles."""

    publisher: str | None = Field(None, max_length=MAX_TERM_CHARS,
                                  description="Publisher or society (partial match).")
    sortorder: Literal["relevance", "newest", "oldest", "citations"] = Field(
        "relevance", description="relevance (default), newest, oldest, or citations (most "
        "cited first).")


class BooksInput(_Search):
    """A search of books."""

    publisher: str | None = Field(None, max_length=MAX_TERM_CHARS,
                                  description="Publisher (partial match).")
    isbn: str | None = Field(None, max_length=MAX_CODE_CHARS,
                             description="ISBN-10 or ISBN-13, exact (hyphens allowed).")
    sortorder: SortAll = Field("relevance", description="relevance (default), newest, oldest.")


class DissertationsInput(_Search):
    """A search of doctoral dissertations."""

    sortorder: SortAll = Field("relevance", description="relevance (default), newest, oldest.")


class ProjectsInput(_Search):
    """A search of KAKEN research projects."""

    sortorder: SortAll = Field("relevance", description="relevance (default), newest "
                               "(research start year), oldest.")


class AllInput(_Search):
    """A search of every record type at once."""

    publisher: str | None = Field(None, max_length=MAX_TERM_CHARS,
                                  description="Publisher (partial match).")
    isbn: str | None = Field(None, max_length=MAX_CODE_CHARS,
                             description="ISBN-10 or ISBN-13, exact (hyphens allowed).")
    sortorder: SortAll = Field("relevance", description="relevance (default), newest, oldest.")


class GetRecordInput(BaseModel):
    """The record to fetch."""

    model_config = ConfigDict(extra="forbid")

    crid: str = Field(min_length=1, max_length=200,
                      description="The CiNii Research id of an item (its crid, e.g. "
                      "1390282680241132288), or its URL https://cir.nii.ac.jp/crid/<crid>.")


_FIELDS_HELP = (
    "Fields combine with AND: q matches words anywhere, title/creator/publisher match "
    "partially, isbn exactly; from/until (YYYY or YYYYMM) bound the date. Write terms in "
    "Japanese script for Japanese material: a romanised term finds only romanised or English "
    "metadata (SCRIPT_LATIN_QUERY). At most 100 records per call, no automatic paging: pass "
    "result.next_start as start for the next page. Returns the suite's envelope: searched_for "
    "(terms and fields), result (total, breadth, next_start), items (crid, record_type, "
    "title/title_ja/title_en by CiNii's language tags, creators, journal, date, identifiers, "
    "related links to NDL Search), diagnostics, attribution to credit. RATE_LIMITED, "
    "TRANSPORT_ERROR or API_ERROR means the result is unknown, never 'nothing found'; "
    f"NOT_CONFIGURED means no application id ({ENV_APPID}) is set."
)

INSTRUCTIONS = (
    "cinii-mcp searches CiNii Research (National Institute of Informatics, Japan): Japanese "
    "journal articles, books, doctoral dissertations and KAKEN research projects. Choose by "
    "what you need: cinii_search_articles, cinii_search_books, cinii_search_dissertations, "
    "cinii_search_projects (KAKEN grants), cinii_search_all when unsure (each item keeps its "
    "own record_type); cinii_get_record to read one record by its crid. Items carry `related` "
    "links to the same work in NDL Search (call ndl-mcp's ndl_get_record with the arguments "
    "given). Requests are serial, at least one second apart, 100 records at most: prefer one "
    "well-aimed query. CiNii's terms forbid bulk retrieval. Credit the attribution lines."
)


def tool_specs(service: CiniiService) -> list[ToolSpec]:
    """The six tools of cinii-mcp, bound to ``service``."""

    def search_tool(name: str, title: str, search_type: str, model: type[_Search],
                    purpose: str) -> ToolSpec:
        async def handler(args: _Search) -> Envelope:
            return await service.search(
                name, search_type, args.fields(), start=args.start, count=args.count,
                sortorder=getattr(args, "sortorder", "relevance"),
                arguments=args.model_dump(by_alias=True, exclude_none=True),
            )

        return ToolSpec(name=name, title=title, description=f"{purpose} {_FIELDS_HELP}",
                        input_model=model, handler=handler)

    async def get_record(args: GetRecordInput) -> Envelope:
        return await service.get_record(args.crid, arguments=args.model_dump())

    return [
        search_tool(
            "cinii_search_articles", "Search CiNii Research articles", "articles",
            ArticlesInput,
            "Search journal articles, conference papers and bulletin papers in CiNii "
            "Research. Use cinii_search_books for monographs (often where the foundational "
            "studies are) and jstage-mcp for J-STAGE full text.",
        ),
        search_tool(
            "cinii_search_books", "Search CiNii Research books", "books", BooksInput,
            "Search books and other monographs in CiNii Research (with CiNii Books "
            "holdings of Japanese university libraries).",
        ),
        search_tool(
            "cinii_search_dissertations", "Search CiNii Research dissertations",
            "dissertations", DissertationsInput,
            "Search Japanese doctoral dissertations (the former CiNii Dissertations) in "
            "CiNii Research.",
        ),
        search_tool(
            "cinii_search_projects", "Search KAKEN research projects", "projects",
            ProjectsInput,
            "Search KAKEN (科研費) research projects in CiNii Research: grant titles, "
            "principal investigators, start years.",
        ),
        search_tool(
            "cinii_search_all", "Search all of CiNii Research", "all", AllInput,
            "Search every record type of CiNii Research at once (articles, books, "
            "dissertations, projects, data). Each item keeps its own record_type.",
        ),
        ToolSpec(
            name="cinii_get_record", title="Fetch one CiNii Research record",
            description=(
                "Fetch one CiNii Research record by its crid (from an item of a "
                "cinii_search_* result, or a https://cir.nii.ac.jp/crid/ URL): the full "
                "JSON-LD record with language-tagged titles, creators, identifiers, abstract "
                "and related NDL links. A fetch: the envelope has no searched_for. A crid "
                "CiNii does not have is a NOT_FOUND error; API_ERROR, TRANSPORT_ERROR or "
                "RATE_LIMITED means the record is unknown, not absent."
            ),
            input_model=GetRecordInput, handler=get_record,
        ),
    ]


def _ensure_credit(env: Envelope, _tool: str) -> None:
    """Credit on every response: failures caught before the service still carry it."""
    if not env.attribution:
        responses.credit(env, [CINII], SourceStatus.skipped)


def build_cinii_server(
    service: CiniiService | None = None,
    *,
    env: Mapping[str, str] | None = None,
    clock: Clock | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
) -> Server:
    """Build the cinii-mcp server (a fresh :class:`CiniiService` unless one is given)."""
    svc = service or CiniiService(env=env, clock=clock, transport=transport)
    return build_server(SERVER, INSTRUCTIONS, tool_specs(svc), env=env, finish=_ensure_credit)
