"""Deduplication and reciprocal-rank fusion of the providers' lists (pure).

:func:`fuse` takes every provider's records (each list in that provider's rank order) and
returns merged :class:`FusedRecord` values, best first. The rules (the seed's, with the
research's refinements, ``research/literature-apis.md`` §5):

* Providers are processed in the fixed order of :data:`~.models.PROVIDER_ORDER`, each list in
  rank order, so the outcome never depends on which provider answered first.
* A record joins an existing group through its normalised DOI, then its PMID, then its
  versionless arXiv id, then its normalised title. arXiv's DataCite DOI (``10.48550/arXiv.*``)
  counts as the arXiv id, not as a DOI, so a preprint's arXiv DOI never "conflicts" with the
  journal DOI of the same paper.
* Two groups or records holding *different* values of the same strong identifier (DOI, PMID,
  PMCID, arXiv id) are never merged, whatever else they share. A record that links two
  compatible groups (Crossref's DOI-only record and Semantic Scholar's PMID-only one, joined by
  Europe PMC's record carrying both) merges them.
* Title-only merges are the risky ones: they also need publication years at most one apart
  (when both are known), a title of at least :data:`MIN_TITLE_WORDS` words, and not a generic
  title (``Editorial``, ``Correction`` …).
* Score: reciprocal-rank fusion, ``Σ 1 / (k + rank)`` with ``k`` = :data:`RRF_K`. Within one
  group each *upstream* votes once, at its best rank: a provider whose records merged twice
  counts once, and providers that query another's index (``ProviderInfo.upstream``: bioRxiv is
  served from Europe PMC's preprint index) share that index's one vote.
* Ties: the earliest provider in the fixed order that found the record, then its rank there,
  then the normalised title. Provider-native scores are never read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from .identifiers import arxiv_from_doi, normalize_title
from .models import PROVIDER_ORDER, LiteratureRecord, OpenAccessEvidence

__all__ = [
    "GENERIC_TITLES",
    "MIN_TITLE_WORDS",
    "RRF_K",
    "Evidence",
    "FusedRecord",
    "fuse",
    "identity",
]

RRF_K = 60
"""The reciprocal-rank fusion constant (Cormack, Clarke & Büttcher, SIGIR 2009)."""
MIN_TITLE_WORDS = 3
"""A title-only merge needs at least this many words in the normalised title."""
GENERIC_TITLES: frozenset[str] = frozenset({
    "editorial", "correction", "erratum", "corrigendum", "introduction", "preface",
    "foreword", "commentary", "response", "reply", "letter to the editor", "in this issue",
    "retraction", "retraction notice", "book review", "news", "abstracts", "index",
    "contents", "table of contents", "front matter", "back matter", "obituary",
})
"""Normalised titles never merged on their title alone."""

_STRONG = ("doi", "pmid", "arxiv", "pmcid")


@dataclass(frozen=True)
class Evidence:
    """One provider that found the record, at its best rank, and the upstream it voted for."""

    provider: str
    rank: int
    upstream: str


def identity(record: LiteratureRecord) -> dict[str, str]:
    """The strong identifiers of ``record`` as fusion compares them.

    ``doi`` is the non-arXiv DOI; ``arxiv`` is the versionless arXiv id, from the record or
    from its ``10.48550/arXiv.*`` DOI.
    """
    ids: dict[str, str] = {}
    arxiv_doi = arxiv_from_doi(record.doi)
    if record.doi and arxiv_doi is None:
        ids["doi"] = record.doi
    if record.pmid:
        ids["pmid"] = record.pmid
    if record.pmcid:
        ids["pmcid"] = record.pmcid
    arxiv = record.arxiv_id or arxiv_doi
    if arxiv:
        ids["arxiv"] = arxiv
    return ids


@dataclass(eq=False)
class _Group:
    members: list[LiteratureRecord]
    ids: dict[str, str]
    years: set[int]
    merged_into: _Group | None = None

    def live(self) -> _Group:
        group = self
        while group.merged_into is not None:
            group = group.merged_into
        return group

    def compatible(self, ids: Mapping[str, str]) -> bool:
        return all(self.ids.get(k) in (None, v) for k, v in ids.items())

    def absorb(self, other: _Group) -> None:
        self.members.extend(other.members)
        self.ids.update(other.ids)
        self.years |= other.years
        other.merged_into = self


@dataclass
class FusedRecord:
    """One paper after deduplication: its members' best fields, its score and its evidence.

    Field values come from the members in the fixed provider order (the first provider that
    gives a value supplies it), except identifiers, which are the union of the members' (they
    never conflict inside a group).
    """

    members: list[LiteratureRecord]
    score: float
    evidence: list[Evidence]
    ids: dict[str, str] = field(default_factory=dict)

    def first(self, attribute: str) -> object:
        """The first non-empty value of ``attribute`` among the members, in provider order."""
        for member in self.members:
            value = getattr(member, attribute)
            if value not in (None, "", ()):
                return value
        return None

    @property
    def title(self) -> str:
        """The title given by the first provider in the fixed order."""
        return self.members[0].title

    @property
    def doi(self) -> str | None:
        """The non-arXiv DOI, else arXiv's DataCite DOI, else None."""
        if "doi" in self.ids:
            return self.ids["doi"]
        value = self.first("doi")
        return value if isinstance(value, str) else None

    @property
    def year(self) -> int | None:
        """The publication year of the first provider that gives one."""
        value = self.first("year")
        return value if isinstance(value, int) else None

    @property
    def arxiv_version(self) -> str | None:
        """The highest arXiv version any member reports (``v3`` beats ``v2``)."""
        versions = [m.arxiv_version for m in self.members if m.arxiv_version]
        return max(versions, key=lambda v: int(v[1:]) if v[1:].isdigit() else 0, default=None)

    def open_access(self) -> tuple[bool | None, list[dict[str, str]]]:
        """Whether any member gives positive OA evidence, and that evidence by provider.

        True with evidence; False when some member says closed and none says open; None when
        no member says anything.
        """
        positive: list[dict[str, str]] = []
        negative = False
        for member in self.members:
            oa: OpenAccessEvidence = member.open_access
            if oa.is_open_access:
                entry = {"provider": member.provider}
                if oa.source:
                    entry["evidence"] = oa.source
                if oa.licence:
                    entry["licence"] = oa.licence
                if entry not in positive:
                    positive.append(entry)
            elif oa.is_open_access is False:
                negative = True
        if positive:
            return True, positive
        return (False if negative else None), []


def _order_key(provider: str) -> int:
    try:
        return PROVIDER_ORDER.index(provider)
    except ValueError:
        return len(PROVIDER_ORDER)


def fuse(
    lists: Mapping[str, Sequence[LiteratureRecord]],
    *,
    upstreams: Mapping[str, str] | None = None,
    k: int = RRF_K,
) -> list[FusedRecord]:
    """Deduplicate and rank every provider's records; best first.

    Args:
        lists: provider id → its records in rank order (the ``rank`` field is used as given).
        upstreams: provider id → the index it really queries, for providers that share one
            (``{"biorxiv": "europepmc"}``); absent providers vote as themselves.
        k: the RRF constant.
    """
    shared = dict(upstreams or {})
    groups: list[_Group] = []
    # Every key maps to the groups holding it: two groups may share a DOI when another
    # identifier of theirs conflicts.
    index: dict[tuple[str, str], list[_Group]] = {}

    for provider in sorted(lists, key=_order_key):
        for record in sorted(lists[provider], key=lambda r: r.rank):
            ids = identity(record)
            title = normalize_title(record.title)
            candidates: list[_Group] = []
            for kind in _STRONG:
                if kind in ids:
                    for group in index.get((kind, ids[kind]), ()):
                        found = group.live()
                        if found.compatible(ids) and found not in candidates:
                            candidates.append(found)
            if title:
                for group in index.get(("title", title), ()):
                    found = group.live()
                    if found not in candidates and _title_merge_ok(found, ids, title,
                                                                   record.year):
                        candidates.append(found)
            target: _Group | None = None
            for candidate in candidates:
                if target is None:
                    target = candidate
                elif target.compatible(candidate.ids):
                    target.absorb(candidate)
            if target is None:
                target = _Group(members=[], ids={}, years=set())
                groups.append(target)
            target.members.append(record)
            target.ids.update(ids)
            if record.year is not None:
                target.years.add(record.year)
            keys = [(kind, value) for kind, value in ids.items()]
            if title:
                keys.append(("title", title))
            for key in keys:
                holders = index.setdefault(key, [])
                if target not in holders:
                    holders.append(target)
    fused = [_score(g, shared, k) for g in groups if g.merged_into is None]
    fused.sort(key=_sort_key)
    return fused


def _title_merge_ok(group: _Group, ids: Mapping[str, str], title: str, year: int | None) -> bool:
    if not group.compatible(ids):
        return False
    if title in GENERIC_TITLES or len(title.split()) < MIN_TITLE_WORDS:
        return False
    if year is not None and group.years:
        return any(abs(year - y) <= 1 for y in group.years)
    return True


def _score(group: _Group, upstreams: Mapping[str, str], k: int) -> FusedRecord:
    members = sorted(group.members, key=lambda r: (_order_key(r.provider), r.rank))
    best: dict[str, Evidence] = {}
    for member in members:
        known = best.get(member.provider)
        if known is None or member.rank < known.rank:
            best[member.provider] = Evidence(
                member.provider, member.rank, upstreams.get(member.provider, member.provider)
            )
    evidence = sorted(best.values(), key=lambda e: (_order_key(e.provider), e.rank))
    votes: dict[str, int] = {}
    for item in evidence:
        votes[item.upstream] = min(votes.get(item.upstream, item.rank), item.rank)
    # Summed in a fixed order so equal rank sets give bit-identical scores.
    score = sum(1.0 / (k + rank) for rank in sorted(votes.values()))
    return FusedRecord(members=members, score=score, evidence=evidence, ids=dict(group.ids))


def _sort_key(record: FusedRecord) -> tuple[float, int, int, str]:
    lead = record.evidence[0]
    return (-round(record.score, 12), _order_key(lead.provider), lead.rank,
            normalize_title(record.title) or "")
