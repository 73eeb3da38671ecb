"""The one record shape every literature provider's ``parse()`` returns, and the search request.

Provider modules turn their upstream's payload into :class:`LiteratureRecord` values, in the
provider's own rank order; fusion (deduplication and reciprocal-rank fusion) works on these
alone. Identifiers are stored *normalised* (see :mod:`readingroom.literature.identifiers`
once it exists: DOI lower-cased without ``https://doi.org/``, PMID digits, PMCID ``PMC…``,
arXiv id without version), so that equality is identity.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core.envelope import Level
from ..core.errors import Code

__all__ = ["PROVIDER_ORDER", "LiteratureRecord", "Note", "OpenAccessEvidence", "SearchRequest"]

PROVIDER_ORDER: tuple[str, ...] = (
    "pubmed",
    "europepmc",
    "biorxiv",
    "crossref",
    "openalex",
    "semantic-scholar",
    "arxiv",
)
"""The seed's fixed provider order (also the default ``sources``)."""


@dataclass(frozen=True)
class SearchRequest:
    """What ``literature_search`` asks every chosen provider for (validated by the tool).

    The query is stripped here, once: providers, cache keys, cursors, receipts and history
    all read it as made.
    """

    query: str
    limit: int = 10
    """How many fused results are returned; each provider is asked for about this many."""
    year_from: int | None = None
    year_to: int | None = None
    open_access: bool | None = None
    abstract_max_chars: int = 3000

    def __post_init__(self) -> None:
        object.__setattr__(self, "query", self.query.strip())


@dataclass(frozen=True)
class OpenAccessEvidence:
    """Why a record is (or is not known to be) open access, by the seed's rule.

    Open access means a licence or a positive OA flag from the provider — never merely a
    text-mining or landing-page link.
    """

    is_open_access: bool | None = None
    """True with evidence, False when the provider says closed, None when it says nothing."""
    licence: str | None = None
    """The licence the provider reports (e.g. ``cc-by``), as given."""
    source: str | None = None
    """What said so: ``licence``, ``oa_flag``, ``pmc``, ``arxiv`` …"""


@dataclass(frozen=True)
class LiteratureRecord:
    """One result from one provider, before fusion.

    Every field but ``provider``, ``rank`` and ``title`` may be missing; missing is ``None``
    (or an empty tuple), never an empty string.
    """

    provider: str
    """The provider id (one of :data:`PROVIDER_ORDER`)."""
    rank: int
    """1-based position in that provider's answer."""
    title: str
    provider_id: str | None = None
    """The provider's own record id (OpenAlex W-id, S2 paperId, Europe PMC id …)."""
    doi: str | None = None
    pmid: str | None = None
    pmcid: str | None = None
    arxiv_id: str | None = None
    """Versionless (``2104.12255``, ``astro-ph/0601001``)."""
    arxiv_version: str | None = None
    year: int | None = None
    authors: tuple[str, ...] = ()
    venue: str | None = None
    abstract: str | None = None
    """Cleaned plain text (JATS/HTML tags removed, OpenAlex inverted index rebuilt), uncapped;
    the service caps it at ``abstract_max_chars``."""
    url: str | None = None
    """The canonical landing page."""
    pdf_url: str | None = None
    open_access: OpenAccessEvidence = field(default_factory=OpenAccessEvidence)


@dataclass(frozen=True)
class Note:
    """A remark a provider makes about one answer (a term it could not send, a short page)."""

    code: Code
    message: str
    """Without the provider prefix; the service adds it."""
    field: str | None = None
    level: Level = Level.warning
