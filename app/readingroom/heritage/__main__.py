"""``swiss-cultural-heritage-mcp`` / ``python -m readingroom.heritage``: the stdio server."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from ..core.entry import server_main
from . import SERVER

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Start swiss-cultural-heritage-mcp on stdio until stdin closes."""
    return server_main(SERVER, "readingroom.heritage.server:build_heritage_server", argv)


if __name__ == "__main__":
    sys.exit(main())
