"""literature-search-mcp's tool layer: input models, the three tool declarations, the server.

Thin on purpose: every tool validates its arguments and hands them to
:class:`~readingroom.literature.service.LiteratureService`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from mcp.server.lowlevel import Server
from pydantic import BaseModel, ConfigDict, Field

from ..core.clock import Clock
from ..core.envelope import Envelope
from ..core.mcpkit import ToolSpec, build_server
from . import SERVER
from .models import PROVIDER_ORDER, SearchRequest
from .paging import MAX_CURSOR_CHARS, MAX_RECORDS
from .service import LiteratureService

__all__ = [
    "INSTRUCTIONS",
    "FulltextInput",
    "SearchInput",
    "SourcesInput",
    "build_literature_server",
    "tool_specs",
]

SourceId = Literal["pubmed", "europepmc", "biorxiv", "crossref", "openalex", "semantic-scholar",
                   "arxiv"]


class SearchInput(BaseModel):
    """A literature search over some or all of the seven providers."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(
        min_length=1, max_length=1000,
        description="What to search for. Plain keywords work everywhere. Rich syntax passes "
        "through to the providers that have it (PubMed [tiab]/[au]/MeSH, Europe PMC TITLE:/"
        "AUTH:/DOI:, arXiv ti:/au:/abs:, Boolean AND/OR/NOT); the others get the plain words. "
        "NOT term or -term excludes a term wherever the provider can (PubMed, Europe PMC, "
        "bioRxiv, OpenAlex, arXiv); Crossref and Semantic Scholar cannot, and a diagnostic "
        "says so.",
    )
    limit: int = Field(10, ge=1, le=50, description="Fused results to return (1-50); each "
                       "provider is asked for this many.")
    sources: list[SourceId] | None = Field(
        None, min_length=1, max_length=len(PROVIDER_ORDER),
        description="Providers to search; omit for all seven: " + ", ".join(PROVIDER_ORDER)
        + ".",
    )
    cursor: str | None = Field(
        None, min_length=1, max_length=MAX_CURSOR_CHARS,
        description="data.next_cursor of the previous page, to get the next page of the same "
        "search (give the same query, sources, years and open_access). Never returns a record "
        f"already returned; paging stops at {MAX_RECORDS} records.",
    )
    year_from: int | None = Field(None, ge=1000, le=3000,
                                  description="Earliest publication year (inclusive).")
    year_to: int | None = Field(None, ge=1000, le=3000,
                                description="Latest publication year (inclusive).")
    open_access: bool | None = Field(
        None, description="true: only records with positive open-access evidence (a licence "
        "or the provider's OA flag) or an open PDF.")
    abstract_max_chars: int = Field(3000, ge=1, le=3000,
                                    description="Cap on each abstract, in characters (1-3000).")


class SourcesInput(BaseModel):
    """No arguments."""

    model_config = ConfigDict(extra="forbid")


class FulltextInput(BaseModel):
    """One identifier of the article whose open-access full text is wanted."""

    model_config = ConfigDict(extra="forbid")

    pmcid: str | None = Field(None, max_length=40,
                              description="PubMed Central id, e.g. PMC3339582 (preferred).")
    pmid: str | None = Field(None, max_length=40,
                             description="PubMed id; resolved to a PMCID through Europe PMC.")
    doi: str | None = Field(None, max_length=300,
                            description="DOI; resolved to a PMCID through Europe PMC.")
    max_chars: int = Field(100_000, ge=1000, le=1_000_000,
                           description="Cap on all the text in the answer (title, abstract, "
                           "outline, metadata and this part of full_text).")
    offset: int = Field(0, ge=0, le=50_000_000,
                        description="Where in full_text this part starts: 0, or "
                        "data.next_offset of the previous part, or a section's start.")


INSTRUCTIONS = (
    "literature-search-mcp searches seven scholarly metadata providers at once - PubMed, "
    "Europe PMC, bioRxiv/medRxiv, Crossref, OpenAlex, Semantic Scholar and arXiv - removes "
    "duplicates and ranks the papers by reciprocal-rank fusion. Use literature_search for "
    "papers on a topic (each result says which providers found it at which rank, and its "
    "identifiers, URLs and open-access evidence); literature_get_fulltext to read an "
    "open-access article's sections from Europe PMC by pmcid, pmid or doi; literature_sources "
    "to see the providers' limitations, budgets and which optional API keys are configured. A "
    "source marked rate_limited or error has an UNKNOWN result, never 'no results'. When "
    "has_more is true, pass data.next_cursor as cursor for the next page. Credit the "
    "attribution lines when you use the data."
)


def tool_specs(service: LiteratureService) -> list[ToolSpec]:
    """The three tools of literature-search-mcp, bound to ``service``."""

    async def search(args: SearchInput) -> Envelope:
        request = SearchRequest(
            query=args.query, limit=args.limit, year_from=args.year_from,
            year_to=args.year_to, open_access=args.open_access,
            abstract_max_chars=args.abstract_max_chars,
        )
        return await service.search(request, args.sources, cursor=args.cursor,
                                    arguments=args.model_dump(exclude_none=True))

    async def sources(_args: SourcesInput) -> Envelope:
        return service.sources()

    async def fulltext(args: FulltextInput) -> Envelope:
        return await service.fulltext(pmcid=args.pmcid, pmid=args.pmid, doi=args.doi,
                                      max_chars=args.max_chars, offset=args.offset,
                                      arguments=args.model_dump(exclude_none=True))

    return [
        ToolSpec(
            name="literature_search",
            title="Search seven literature providers at once",
            description=(
                "Search PubMed, Europe PMC, bioRxiv/medRxiv, Crossref, OpenAlex, Semantic "
                "Scholar and arXiv in one call (or the `sources` you name), with duplicates "
                "merged by DOI, PMID, arXiv id or title and papers ranked by reciprocal-rank "
                "fusion. Use it to find papers; use literature_get_fulltext to read one. "
                "year_from/year_to and open_access filter every provider. Each item has "
                "title, identifiers (doi, pmid, pmcid, arxiv_id), url, pdf_url, year, authors, "
                "venue, a capped abstract, rrf_score, evidence (provider and rank that found "
                "it) and open_access with its evidence. `sources` in the envelope gives each "
                "provider's status: ok, empty, rate_limited, error or skipped - rate_limited "
                "and error (including timeout) mean that provider's result is unknown, not "
                "empty; the diagnostics say why. Answers within about 40 s whatever one "
                "provider does. result.has_more true comes with data.next_cursor: pass it as "
                "`cursor` with the same arguments for the next page (no record twice; at most "
                f"{MAX_RECORDS} records per search). Abstracts and full text are never stored; "
                "metadata only."
            ),
            input_model=SearchInput, handler=search,
        ),
        ToolSpec(
            name="literature_sources",
            title="Describe the literature providers",
            description=(
                "List the seven providers with their limitations, query syntax, licences and "
                "credit lines, and say for each optional variable (OPENALEX_MAILTO, "
                "OPENALEX_API_KEY, SEMANTIC_SCHOLAR_API_KEY, CROSSREF_MAILTO, NCBI_TOOL, "
                "NCBI_EMAIL, NCBI_API_KEY) whether it is configured and where (environment or "
                "keyring) - never its value. Sends no request. Use it to explain a "
                "rate_limited source or before choosing `sources`."
            ),
            input_model=SourcesInput, handler=sources,
        ),
        ToolSpec(
            name="literature_get_fulltext",
            title="Read an open-access article from Europe PMC",
            description=(
                "Fetch the open-access full text of one article from Europe PMC (the PMC "
                "open-access subset) by pmcid, or by pmid or doi (resolved to a PMCID). "
                "Returns one part: data.full_text (the sections with their headings, from "
                "`offset`), data.sections (an outline: title, path such as 'Results > "
                "Kinetic analysis', level and start - pass a start as `offset` to read that "
                "section), data.title, data.abstract (first part only) and data.metadata, all "
                "within max_chars; data.next_offset continues the reading. A paper without "
                "open-access full text in Europe PMC (not in PMC, not in the OA subset, or "
                "published without a body) is a NOT_FOUND error (data.status not_found, with "
                "the reason) - then use the search result's url or pdf_url. A failed request "
                "is another error, never NOT_FOUND. Nothing is stored."
            ),
            input_model=FulltextInput, handler=fulltext,
        ),
    ]


def build_literature_server(
    service: LiteratureService | None = None,
    *,
    env: Mapping[str, str] | None = None,
    clock: Clock | None = None,
) -> Server:
    """Build the literature-search-mcp server (a fresh service unless one is given)."""
    chosen = service or LiteratureService(env=env, clock=clock)
    return build_server(SERVER, INSTRUCTIONS, tool_specs(chosen), env=env)
