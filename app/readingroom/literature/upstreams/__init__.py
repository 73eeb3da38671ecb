"""One module per literature provider: a pure ``parse()`` and a paced client behind
:class:`~readingroom.literature.upstreams.base.Provider`.

:data:`PROVIDERS` holds the seven in the seed's fixed order (:data:`..models.PROVIDER_ORDER`).
"""

from __future__ import annotations

from collections.abc import Mapping

from ..models import PROVIDER_ORDER
from . import arxiv, biorxiv, crossref, europepmc, openalex, pubmed, semantic_scholar
from .base import Provider

__all__ = ["PROVIDERS"]

PROVIDERS: Mapping[str, Provider] = {
    p.info.id: p
    for p in (
        pubmed.PROVIDER,
        europepmc.PROVIDER,
        biorxiv.PROVIDER,
        crossref.PROVIDER,
        openalex.PROVIDER,
        semantic_scholar.PROVIDER,
        arxiv.PROVIDER,
    )
}
"""Provider id → provider, in the seed's order."""

assert tuple(PROVIDERS) == PROVIDER_ORDER
