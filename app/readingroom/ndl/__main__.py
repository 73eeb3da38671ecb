"""``ndl-mcp`` / ``python -m readingroom.ndl``: the stdio server."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from ..core.entry import server_main
from . import SERVER

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Start ndl-mcp on stdio (``--help`` lists its settings)."""
    return server_main(SERVER, "readingroom.ndl.server:build_ndl_server", argv)


if __name__ == "__main__":
    sys.exit(main())
