"""The upstream of jstage-mcp as data: J-STAGE, its terms and the credit it asks for.

The J-STAGE WebAPI terms (利用規約) allow non-profit use without an application (第2条) and ask
for a prior application for any for-profit use, paid or free; the viewing terms (閲覧規約)
forbid bulk downloading beyond viewing needs. The credit is "Powered by J-STAGE" with the link.
"""

from __future__ import annotations

from ..core.envelope import SourceInfo, SourceStatus
from ..core.responses import Source
from . import CREDIT, JSTAGE_URL

__all__ = ["JSTAGE", "LICENCE", "SOURCES", "source_info"]

LICENCE = (
    "J-STAGE WebAPI 利用規約: non-profit use without application; for-profit use needs a prior "
    "application; no bulk downloading. Article copyrights rest with their publishers"
)

JSTAGE = Source(
    id="jstage",
    name="J-STAGE (Japan Science and Technology Agency)",
    licence=LICENCE,
    url=JSTAGE_URL,
    credit=CREDIT,
)
"""J-STAGE, credited on every jstage-mcp envelope."""

SOURCES: tuple[Source, ...] = (JSTAGE,)
"""Every upstream of jstage-mcp (one)."""


def source_info(status: SourceStatus) -> SourceInfo:
    """The envelope's ``sources`` entry for J-STAGE with ``status``."""
    return JSTAGE.info(status)
