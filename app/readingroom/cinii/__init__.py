"""cinii-mcp: CiNii Research (National Institute of Informatics), through its OpenSearch API.

``SERVER`` is the whole of what the rest of the suite knows about this server. Standard library
and ``core.declaration`` only: ``server_main`` reads this before fd 1 is reserved.
"""

from __future__ import annotations

from ..core.declaration import Credential, ServerInfo, Setting

__all__ = [
    "CREDIT",
    "DEFAULT_BASE_URL",
    "ENV_APPID",
    "ENV_CINII_URL",
    "REGISTRATION_URL",
    "SERVER",
    "TERMS_URL",
]

ENV_CINII_URL = "CINII_RESEARCH_URL"
"""Overrides the CiNii Research base URL (tests and the self-test point it at a loopback fake);
the OpenSearch endpoints are ``<base>/opensearch/v2/<type>``, records ``<base>/crid/<id>.json``."""
DEFAULT_BASE_URL = "https://cir.nii.ac.jp"

ENV_APPID = "CINII_APPID"
"""The CiNii Web API application id: a secret, read from the environment, then the OS keyring."""
REGISTRATION_URL = "https://support.nii.ac.jp/ja/cinii/api/developer"
"""Where an application id is applied for (and the Web API terms are)."""
TERMS_URL = REGISTRATION_URL

CREDIT = (
    "Data via CiNii Research, National Institute of Informatics (NII) <https://cir.nii.ac.jp/>, "
    "used under NII's 学術コンテンツサービス利用規程, CiNii Research利用細則 and "
    f"学術コンテンツサービスウェブAPI利用細則 <{TERMS_URL}>."
)
"""The credit line every cinii-mcp response carries."""

SERVER = ServerInfo(
    name="cinii-mcp",
    entry_point="readingroom.cinii.__main__:main",
    title="CiNii Research (National Institute of Informatics, Japan)",
    description="Search CiNii Research for Japanese articles, books, dissertations and KAKEN "
    "research projects (OpenSearch v2), and fetch one record by CRID; serial requests, at "
    "least one second apart.",
    settings=(
        Setting(ENV_CINII_URL, "CiNii Research base URL (tests and the self-test point it at a "
                "loopback fake)", DEFAULT_BASE_URL),
    ),
    secrets=(ENV_APPID,),
    credentials=(Credential(ENV_APPID, "NII's application id for the CiNii Web API",
                            REGISTRATION_URL),),
    credit=(CREDIT,),
    deadline_s=90.0,
    self_test="readingroom.cinii.selftest:run_self_test",
)
