"""The upstream of cinii-mcp as data: CiNii Research, its terms and the credit it is given.

NII's API terms (学術コンテンツサービス利用規程, CiNii Research利用細則, 学術コンテンツサービス
ウェブAPI利用細則) ask for no fixed credit string; the research found none. The line here names
the service and its operator, as the original server did, and links the terms. They forbid
large volumes of access in a short time (bulk retrieval) and ask for contact before commercial
use (ciniiadm@nii.ac.jp).
"""

from __future__ import annotations

from ..core.envelope import SourceInfo, SourceStatus
from ..core.responses import Source
from . import CREDIT

__all__ = ["CINII", "LICENCE", "SOURCES", "source_info"]

LICENCE = (
    "NII 学術コンテンツサービス利用規程 / CiNii Research利用細則 / ウェブAPI利用細則: no bulk "
    "retrieval; commercial use only after contacting NII"
)

CINII = Source(
    id="cinii-research",
    name="CiNii Research (National Institute of Informatics)",
    licence=LICENCE,
    url="https://cir.nii.ac.jp/",
    credit=CREDIT,
)
"""CiNii Research, credited on every cinii-mcp envelope."""

SOURCES: tuple[Source, ...] = (CINII,)
"""Every upstream of cinii-mcp (one)."""


def source_info(status: SourceStatus) -> SourceInfo:
    """The envelope's ``sources`` entry for CiNii Research with ``status``."""
    return CINII.info(status)
