"""Reciprocal-rank fusion of several rankings of the same records.

A record's fused score is the sum over the rankings that hold it of ``1 / (k + rank)``, rank
counted from 1 (Cormack et al.; k = 60 as in the literature-search seed). Scores of different
backends (BM25, cosine) are never compared, only their ranks. Ties break, in this order, on the
better best rank, on the earlier ranking in the order given (lexical before semantic: an exact
match is the more certain), and last on the rowid (reading order; a guard, as one ranking
never holds two records at one rank): the same inputs always give the same order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

__all__ = ["RRF_K", "Fused", "rrf"]

RRF_K = 60
"""The constant k of reciprocal-rank fusion."""


@dataclass(frozen=True)
class Fused:
    """One record of a fused ranking."""

    rowid: int
    score: float
    ranks: dict[str, int] = field(default_factory=dict)
    """Its 1-based rank in each ranking that holds it, in the order the rankings were given."""

    @property
    def matched_by(self) -> list[str]:
        """The rankings that hold the record (``["lexical", "semantic"]`` for both)."""
        return list(self.ranks)


def rrf(rankings: Mapping[str, Sequence[int]], *, k: int = RRF_K) -> list[Fused]:
    """Fuse ``rankings`` (name → rowids best first) into one list, best first.

    A rowid listed twice in one ranking counts at its first (best) place.
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    ranks: dict[int, dict[str, int]] = {}
    for name, rowids in rankings.items():
        for place, rowid in enumerate(rowids, start=1):
            ranks.setdefault(rowid, {}).setdefault(name, place)
    order = {name: n for n, name in enumerate(rankings)}
    fused = []
    for rowid, by in ranks.items():
        # Summed in the rankings' order, so equal rank sets give bit-identical floats.
        score = sum(1.0 / (k + by[name]) for name in rankings if name in by)
        fused.append(Fused(rowid=rowid, score=score, ranks=by))

    def key(f: Fused) -> tuple[float, int, int, int]:
        best_name, best_rank = min(f.ranks.items(), key=lambda kv: (kv[1], order[kv[0]]))
        return (-f.score, best_rank, order[best_name], f.rowid)

    return sorted(fused, key=key)
