"""literature-search-mcp: seven scholarly providers searched at once, deduplicated and fused.

``SERVER`` is the whole of what the rest of the suite knows about this server. The record model
every provider produces is :mod:`.models`; the provider interface is :mod:`.upstreams.base`;
deduplication and reciprocal-rank fusion are :mod:`.fusion`; the tools are :mod:`.server`.

Standard library and ``core.declaration`` only: ``server_main`` reads this before fd 1 is
reserved. The provider modules hold the same base-URL variable names as constants (a test keeps
the two equal).
"""

from __future__ import annotations

from ..core.declaration import ServerInfo, Setting

__all__ = [
    "ENV_STATE_DIR",
    "OPTIONAL_VARIABLES",
    "SERVER",
    "URL_SETTINGS",
]

ENV_STATE_DIR = "LITERATURE_SEARCH_STATE_DIR"
"""Relocates the state folder that holds ``history.jsonl`` (tests and the self-test)."""

URL_SETTINGS: tuple[tuple[str, str, str], ...] = (
    ("PUBMED_EUTILS_URL", "PubMed E-utilities base", "https://eutils.ncbi.nlm.nih.gov/entrez/eutils"),
    ("EUROPEPMC_URL", "Europe PMC REST base (search and full text)",
     "https://www.ebi.ac.uk/europepmc/webservices/rest"),
    ("BIORXIV_URL", "bioRxiv/medRxiv search base (Europe PMC's preprint index)",
     "https://www.ebi.ac.uk/europepmc/webservices/rest"),
    ("CROSSREF_URL", "Crossref REST base", "https://api.crossref.org"),
    ("OPENALEX_URL", "OpenAlex API base", "https://api.openalex.org"),
    ("SEMANTIC_SCHOLAR_URL", "Semantic Scholar API base", "https://api.semanticscholar.org"),
    ("ARXIV_URL", "arXiv export API base", "https://export.arxiv.org"),
)
"""(variable, what it points at, default) for each provider's base URL, in provider order."""

OPTIONAL_VARIABLES: tuple[str, ...] = (
    "OPENALEX_MAILTO",
    "OPENALEX_API_KEY",
    "SEMANTIC_SCHOLAR_API_KEY",
    "CROSSREF_MAILTO",
    "NCBI_TOOL",
    "NCBI_EMAIL",
    "NCBI_API_KEY",
)
"""The seed's optional variables: read from the environment, then the OS keyring; reported by
``literature_sources`` as configured or not (and where), never by value."""

SERVER = ServerInfo(
    name="literature-search-mcp",
    entry_point="readingroom.literature.__main__:main",
    title="Literature search (PubMed, Europe PMC, bioRxiv/medRxiv, Crossref, OpenAlex, "
    "Semantic Scholar, arXiv)",
    description="Search seven scholarly metadata providers at once, deduplicated and ranked by "
    "reciprocal-rank fusion, and read Europe PMC open-access full text. "
    "`literature-search-mcp clear-history` empties the search history.",
    settings=(
        *(Setting(name, f"{what} (tests and the self-test point it at a loopback fake)",
                  default) for name, what, default in URL_SETTINGS),
        Setting(ENV_STATE_DIR, "folder of history.jsonl (default: the platform's state folder, "
                "~/.local/state/literature-search-mcp on Linux)"),
    ),
    secrets=OPTIONAL_VARIABLES,
    credit=("Metadata from PubMed (NLM), Europe PMC, bioRxiv/medRxiv, Crossref, OpenAlex, "
            "Semantic Scholar and arXiv; each result credits the providers that found it.",),
    # The outer bound of every call: under the 60 s hosts commonly give a tool call, above the
    # search's own 40 s fan-out budget (literature/budget.py); host entries add 30 s to it.
    deadline_s=50.0,
    tool_prefix="literature_",
    self_test="readingroom.literature.selftest:run_self_test",
)
