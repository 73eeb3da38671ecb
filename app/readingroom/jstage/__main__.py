"""``jstage-mcp`` / ``python -m readingroom.jstage``: the stdio server."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from ..core.entry import server_main
from . import SERVER

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Start jstage-mcp on stdio (``--help`` lists its settings)."""
    return server_main(SERVER, "readingroom.jstage.server:build_jstage_server", argv)


if __name__ == "__main__":
    sys.exit(main())
