"""jstage-mcp: J-STAGE (Japan Science and Technology Agency), through its WebAPI.

``SERVER`` is the whole of what the rest of the suite knows about this server. Standard library
and ``core.declaration`` only: ``server_main`` reads this before fd 1 is reserved.
"""

from __future__ import annotations

from ..core.declaration import ServerInfo, Setting

__all__ = ["CREDIT", "DEFAULT_ENDPOINT", "ENV_JSTAGE_URL", "JSTAGE_URL", "SERVER", "TERMS_URL"]

ENV_JSTAGE_URL = "JSTAGE_API_URL"
"""Overrides the WebAPI endpoint (tests and the self-test point it at a loopback fake)."""
DEFAULT_ENDPOINT = "https://api.jstage.jst.go.jp/searchapi/do"
JSTAGE_URL = "https://www.jstage.jst.go.jp/"
TERMS_URL = "https://www.jstage.jst.go.jp/static/pages/WebAPI/-char/ja"

CREDIT = (
    f"Powered by J-STAGE <{JSTAGE_URL}>. Metadata from J-STAGE (Japan Science and Technology "
    f"Agency) under the J-STAGE WebAPI terms of use <{TERMS_URL}>; each article's copyright "
    "rests with its publisher."
)
"""The credit line every jstage-mcp response carries (the WebAPI's "Powered by J-STAGE")."""

SERVER = ServerInfo(
    name="jstage-mcp",
    entry_point="readingroom.jstage.__main__:main",
    title="J-STAGE (Japan Science and Technology Agency)",
    description="Search J-STAGE's Japanese journal articles (metadata and full text), look one "
    "up by DOI, and list a journal's volumes and issues; serial requests, at least one second "
    "apart.",
    settings=(
        Setting(ENV_JSTAGE_URL, "J-STAGE WebAPI endpoint (tests and the self-test point it at "
                "a loopback fake)", DEFAULT_ENDPOINT),
    ),
    credit=(CREDIT,),
    deadline_s=90.0,
    self_test="readingroom.jstage.selftest:run_self_test",
)
