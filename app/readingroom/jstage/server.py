"""jstage-mcp's tool layer: input models, tool declarations, and the server they make.

Thin on purpose: every tool validates its arguments and hands them to :class:`JstageService`.
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
from . import SERVER
from .service import JstageService
from .sources import JSTAGE
from .upstreams.courtesy import MAX_RECORDS

__all__ = [
    "INSTRUCTIONS",
    "MAX_CODE_CHARS",
    "MAX_TERM_CHARS",
    "GetByDoiInput",
    "ListIssuesInput",
    "SearchArticlesInput",
    "build_jstage_server",
    "tool_specs",
]

MAX_TERM_CHARS = 300
"""The longest free-text term: far above any real title; a refused term is never echoed."""
MAX_CODE_CHARS = 40
"""The longest code argument (ISSN, journal code, volume, number)."""



def _text(description: str) -> Any:
    return Field(None, max_length=MAX_TERM_CHARS, description=description)


def _code(description: str) -> Any:
    return Field(None, max_length=MAX_CODE_CHARS, description=description)


class SearchArticlesInput(BaseModel):
    """Fields of a J-STAGE article search; every given field must match (AND)."""

    model_config = ConfigDict(extra="forbid")

    article: str | None = _text("Words of the article title (partial, case-insensitive).")
    author: str | None = _text("Author name (partial).")
    affil: str | None = _text("Author affiliation (partial).")
    keyword: str | None = _text("Author keywords (partial).")
    abst: str | None = _text("Words of the abstract (partial).")
    text: str | None = _text("Words anywhere in the full text (partial; broad: many hits are "
                             "incidental).")
    material: str | None = _text("Journal name (partial).")
    issn: str | None = _code("Journal ISSN, exact (XXXX-XXXX).")
    cdjournal: str | None = _code("J-STAGE journal code, exact (from an item's cdjournal).")
    vol: str | None = _code("Volume, exact (with cdjournal or issn).")
    no: str | None = _code("Issue number, exact (with vol).")
    pubyearfrom: int | None = Field(None, ge=1000, le=2999,
                                    description="Published in or after this year.")
    pubyearto: int | None = Field(None, ge=1000, le=2999,
                                  description="Published in or before this year.")
    sortflg: Literal["score", "volume"] | None = Field(
        None, description="score (J-STAGE's default) or volume (volume, issue, page order).")
    count: int = Field(20, ge=1, le=10_000,
                       description=f"Records to return, 1-{MAX_RECORDS}; more is capped at "
                       f"{MAX_RECORDS}. No automatic paging.")
    start: int = Field(1, ge=1, le=1_000_000,
                       description="1-based position to start at; pass result.next_start of "
                       "the previous page to continue.")

    def fields(self) -> dict[str, Any]:
        """The search fields by their WebAPI names."""
        return self.model_dump(exclude={"count", "start", "sortflg"}, exclude_none=True)


class ListIssuesInput(BaseModel):
    """The journal whose volumes and issues to list."""

    model_config = ConfigDict(extra="forbid")

    material: str | None = _text("The journal's name, exactly as J-STAGE writes it.")
    issn: str | None = _code("The journal's ISSN (XXXX-XXXX).")
    cdjournal: str | None = _code("The J-STAGE journal code (from an article's cdjournal).")
    pubyearfrom: int | None = Field(None, ge=1000, le=2999,
                                    description="Volumes published in or after this year.")
    pubyearto: int | None = Field(None, ge=1000, le=2999,
                                  description="Volumes published in or before this year.")
    volorder: Literal["ascending", "descending"] | None = Field(
        None, description="Volume order (J-STAGE's default: ascending).")
    count: int = Field(20, ge=1, le=10_000,
                       description=f"Issues to return, 1-{MAX_RECORDS}; more is capped.")
    start: int = Field(1, ge=1, le=1_000_000,
                       description="1-based position; pass result.next_start to continue.")

    def fields(self) -> dict[str, Any]:
        """The list fields by their WebAPI names."""
        return self.model_dump(exclude={"count", "start", "volorder"}, exclude_none=True)


class GetByDoiInput(BaseModel):
    """The DOI of the article to look up."""

    model_config = ConfigDict(extra="forbid")

    doi: str = Field(min_length=5, max_length=320,
                     description="The DOI, with or without https://doi.org/ (e.g. "
                     "10.11249/jsbpjjpp.23.1_53).")


_ENVELOPE_HELP = (
    "Returns the suite's envelope: result (total, breadth, next_start), items, diagnostics, "
    "attribution (Powered by J-STAGE: credit it). RATE_LIMITED (J-STAGE's ERR_003 or HTTP "
    "429), TRANSPORT_ERROR or API_ERROR means the result is unknown, never 'nothing found'."
)

INSTRUCTIONS = (
    "jstage-mcp searches J-STAGE (Japan Science and Technology Agency), the platform where "
    "Japanese learned societies publish their journals, many with full text. "
    "jstage_search_articles finds articles by title, author, affiliation, keyword, abstract, "
    "full text or journal; jstage_get_article_by_doi reads one article by DOI; "
    "jstage_list_issues lists a journal's volumes and issues (then list an issue's articles "
    "with the arguments each issue item gives). Titles, authors and journal names come in "
    "separate ja and en fields. Requests are serial, at least one second apart, 100 records "
    "at most: prefer one well-aimed query. J-STAGE's terms forbid bulk downloading; for-profit "
    "use needs J-STAGE's prior approval. Credit 'Powered by J-STAGE'."
)


def tool_specs(service: JstageService) -> list[ToolSpec]:
    """The three tools of jstage-mcp, bound to ``service``."""

    async def search(args: SearchArticlesInput) -> Envelope:
        return await service.search_articles(
            args.fields(), start=args.start, count=args.count, sortflg=args.sortflg,
            arguments=args.model_dump(exclude_none=True))

    async def by_doi(args: GetByDoiInput) -> Envelope:
        return await service.get_article_by_doi(args.doi, arguments=args.model_dump())

    async def issues(args: ListIssuesInput) -> Envelope:
        return await service.list_issues(
            args.fields(), start=args.start, count=args.count, volorder=args.volorder,
            arguments=args.model_dump(exclude_none=True))

    return [
        ToolSpec(
            name="jstage_search_articles", title="Search J-STAGE articles",
            description=(
                "Search J-STAGE's journal articles. Fields combine with AND; article, author, "
                "affil, keyword, abst (abstract), text (full text) and material (journal) match "
                "partially, issn/cdjournal/vol/no exactly; pubyearfrom/pubyearto bound the "
                "year. `text` searches full text and is broad: read the count as noisy. Write "
                "terms in Japanese script for Japanese articles (SCRIPT_LATIN_QUERY). Items: "
                "title_ja/title_en, authors_ja/authors_en (separate lists, not pairs), "
                "journal, volume, number, pages, year, doi, url. Use cinii-mcp for wider "
                "coverage of Japanese journals. " + _ENVELOPE_HELP
            ),
            input_model=SearchArticlesInput, handler=search,
        ),
        ToolSpec(
            name="jstage_get_article_by_doi", title="Look up a J-STAGE article by DOI",
            description=(
                "Look up one J-STAGE article by its DOI: the DOI's journal code and volume are "
                "listed and the exact DOI picked out. A fetch: no searched_for. A DOI not "
                "there is NOT_FOUND (the journal code in a DOI is not always J-STAGE's: then "
                "find the article with jstage_search_articles). " + _ENVELOPE_HELP
            ),
            input_model=GetByDoiInput, handler=by_doi,
        ),
        ToolSpec(
            name="jstage_list_issues", title="List a J-STAGE journal's volumes and issues",
            description=(
                "List the volumes and issues of one journal on J-STAGE, by its exact name "
                "(material), ISSN or journal code (cdjournal), optionally within years. Each "
                "item gives its table-of-contents url and the jstage_search_articles "
                "arguments (cdjournal, vol, no) that list its articles. " + _ENVELOPE_HELP
            ),
            input_model=ListIssuesInput, handler=issues,
        ),
    ]


def _ensure_credit(env: Envelope, _tool: str) -> None:
    """Credit on every response: failures caught before the service still carry it."""
    if not env.attribution:
        responses.credit(env, [JSTAGE], SourceStatus.skipped)


def build_jstage_server(
    service: JstageService | None = None,
    *,
    env: Mapping[str, str] | None = None,
    clock: Clock | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
) -> Server:
    """Build the jstage-mcp server (a fresh :class:`JstageService` unless one is given)."""
    svc = service or JstageService(env=env, clock=clock, transport=transport)
    return build_server(SERVER, INSTRUCTIONS, tool_specs(svc), env=env, finish=_ensure_credit)
