"""``cinii-mcp`` / ``python -m readingroom.cinii``: the stdio server."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from ..core.entry import server_main
from . import SERVER

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Start cinii-mcp on stdio (``--help`` lists its settings and its secret)."""
    return server_main(SERVER, "readingroom.cinii.server:build_cinii_server", argv)


if __name__ == "__main__":
    sys.exit(main())
