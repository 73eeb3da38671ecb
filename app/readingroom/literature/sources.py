"""The credit and licence table of literature-search-mcp: each provider as a
:class:`~readingroom.core.responses.Source` (name, licence of its metadata, URL, credit line).

Each provider module of :mod:`.upstreams` names its own in its ``ProviderInfo``.
"""

from __future__ import annotations

from ..core.responses import Source

__all__ = ["ARXIV", "BIORXIV", "CROSSREF", "EUROPEPMC", "OPENALEX", "PUBMED", "SEMANTIC_SCHOLAR"]

PUBMED = Source(
    id="pubmed",
    name="PubMed (NCBI E-utilities)",
    licence="NLM data: public domain in the US; abstracts may be under publisher copyright",
    url="https://pubmed.ncbi.nlm.nih.gov/",
    credit="Courtesy of the U.S. National Library of Medicine (PubMed)",
)
EUROPEPMC = Source(
    id="europepmc",
    name="Europe PMC",
    licence="Europe PMC metadata; abstracts and full texts under their own licences",
    url="https://europepmc.org/",
    credit="Europe PMC (EMBL-EBI)",
)
BIORXIV = Source(
    id="biorxiv",
    name="bioRxiv / medRxiv (via Europe PMC's preprint index)",
    licence="Preprint metadata; each preprint under the licence its authors chose",
    url="https://www.biorxiv.org/",
    credit="bioRxiv and medRxiv (Cold Spring Harbor Laboratory), indexed by Europe PMC",
)
CROSSREF = Source(
    id="crossref",
    name="Crossref",
    licence="Crossref metadata: no rights reserved (CC0); abstracts may be copyrighted",
    url="https://www.crossref.org/",
    credit="Metadata from Crossref",
)
OPENALEX = Source(
    id="openalex",
    name="OpenAlex",
    licence="CC0",
    url="https://openalex.org/",
    credit="Data from OpenAlex (OurResearch), CC0",
)
SEMANTIC_SCHOLAR = Source(
    id="semantic-scholar",
    name="Semantic Scholar",
    licence="Semantic Scholar API licence; abstracts under their publishers' terms",
    url="https://www.semanticscholar.org/",
    credit="Data from Semantic Scholar (Allen Institute for AI)",
)
ARXIV = Source(
    id="arxiv",
    name="arXiv",
    licence="arXiv metadata: CC0; papers under the licence chosen by their authors",
    url="https://arxiv.org/",
    credit="Thank you to arXiv for use of its open access interoperability.",
)
