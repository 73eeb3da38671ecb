"""``python -m toy_server``: the toy on stdio, started like every server of the suite."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from readingroom.core.entry import server_main

from . import SERVER

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Start toy-mcp on stdio (``--help`` lists its settings)."""
    return server_main(SERVER, f"{__package__}.server:build_toy_server", argv)


if __name__ == "__main__":
    sys.exit(main())
