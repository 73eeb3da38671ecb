"""The licence of NDL Search metadata and the credit every ndl-mcp response carries.

Standard library only: the server declaration (``readingroom.ndl.SERVER``) reads these before
anything heavy is imported.
"""

from __future__ import annotations

__all__ = ["CREDIT", "LICENCE", "LICENCE_URL", "NDL_SEARCH_URL"]

LICENCE = "公共データ利用規約 第1.0版 (PDL1.0), compatible with CC BY 4.0"
LICENCE_URL = "https://www.digital.go.jp/resources/open_data/public_data_license_v1.0"
NDL_SEARCH_URL = "https://ndlsearch.ndl.go.jp/"

CREDIT = (
    f"Source: 国立国会図書館サーチ (NDL Search), National Diet Library <{NDL_SEARCH_URL}>. "
    f"Licence: {LICENCE} <{LICENCE_URL}>."
)
"""The server-level credit line; each response credits the providers it touched by name."""
