"""ndl-mcp: the National Diet Library's NDL Search, through its SRU interface.

``SERVER`` is the whole of what the rest of the suite knows about this server.
"""

from __future__ import annotations

from ..core.declaration import Gate, ServerInfo, Setting
from .licence import CREDIT

__all__ = ["DEFAULT_ENDPOINT", "ENV_NDL_SRU_URL", "SERVER"]

ENV_NDL_SRU_URL = "NDL_SRU_URL"
"""Overrides the SRU endpoint (tests and the self-test point it at a loopback fake)."""
DEFAULT_ENDPOINT = "https://ndlsearch.ndl.go.jp/api/sru"

SERVER = ServerInfo(
    name="ndl-mcp",
    entry_point="readingroom.ndl.__main__:main",
    title="NDL Search (National Diet Library, Japan)",
    description="Search NDL Search over SRU under the undertakings filed with the NDL.",
    settings=(
        Setting(ENV_NDL_SRU_URL, "NDL SRU endpoint (tests and the self-test point it at a "
                "loopback fake)", DEFAULT_ENDPOINT),
    ),
    credit=(CREDIT,),
    deadline_s=90.0,
    gate=Gate(
        option="--notification-filed",
        metavar="YYYY-MM-DD",
        help="the date you sent the NDL's API form (https://form2.ndl.go.jp/form/pub/ndl07/api)",
        keeper="readingroom.ndl.notification:KEEPER",
    ),
    self_test="readingroom.ndl.selftest:run_self_test",
)
