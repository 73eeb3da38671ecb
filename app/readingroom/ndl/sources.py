"""The five NDL Search data providers this server declared to the National Diet Library.

Only these are reachable. Any other dpid is refused in process (``PROVIDER_NOT_PERMITTED``) and no
request is sent: an unknown dpid at NDL returns a *silent zero*, so a closed list is the only
defence against a typo reading as an absence.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..core.envelope import SourceInfo, SourceStatus
from ..core.responses import Source
from .licence import LICENCE, LICENCE_URL, NDL_SEARCH_URL

__all__ = ["ALL_DPIDS", "PROVIDERS", "SOURCES", "Provider", "credit_line", "source_info",
           "sources"]


@dataclass(frozen=True)
class Provider:
    """One declared NDL Search data provider (dpid)."""

    dpid: str
    name_ja: str
    name_en: str
    repository: str


PROVIDERS: dict[str, Provider] = {
    p.dpid: p
    for p in (
        Provider("iss-ndl-opac", "国立国会図書館蔵書", "NDL holdings", "R100000002"),
        # The seed's "iss-ndl-opacnational" names no provider and returns a silent zero
        # (japan-apis.md section 0); the set is iss-ndl-opac-national.
        Provider(
            "iss-ndl-opac-national",
            "国立国会図書館全国書誌情報",
            "Japanese National Bibliography",
            "R100000002",
        ),
        Provider("zassaku", "国立国会図書館雑誌記事索引", "NDL periodicals index", "R000000004"),
        Provider(
            "zassaku-online",
            "国立国会図書館雑誌記事索引オンライン資料編",
            "NDL periodicals index, online materials",
            "R000000004",
        ),
        Provider(
            "ndl-dl-open",
            "国立国会図書館デジタルコレクション（オープンデータ）",
            "NDL Digital Collections (open data)",
            "R100000039",
        ),
    )
}

ALL_DPIDS: tuple[str, ...] = tuple(PROVIDERS)


def _credit(p: Provider) -> str:
    return (
        f"Source: 国立国会図書館サーチ (NDL Search), National Diet Library — {p.name_ja} "
        f"({p.name_en}, dpid {p.dpid}). Licence: {LICENCE} <{LICENCE_URL}>."
    )


SOURCES: dict[str, Source] = {
    p.dpid: Source(id=p.dpid, name=f"{p.name_ja} ({p.name_en})", licence=LICENCE,
                   url=NDL_SEARCH_URL, credit=_credit(p))
    for p in PROVIDERS.values()
}
"""Each declared provider as the envelope credits it (the PDL1.0 credit line per dpid)."""


def sources(dpids: Iterable[str]) -> list[Source]:
    """The :class:`Source` of each dpid, in order."""
    return [SOURCES[d] for d in dpids]


def credit_line(dpid: str) -> str:
    """The PDL1.0 credit for one provider, as the licence requires on every response."""
    return SOURCES[dpid].credit


def source_info(dpid: str, status: SourceStatus) -> SourceInfo:
    """The envelope's ``sources`` entry for one provider."""
    return SOURCES[dpid].info(status)
