"""``literature-search-mcp`` / ``python -m readingroom.literature``: the stdio server.

One command besides serving: ``literature-search-mcp clear-history`` empties the search history
(``--help`` and ``--version`` are :func:`~readingroom.core.entry.server_main`'s).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from ..core.entry import server_main
from . import ENV_STATE_DIR, SERVER

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Start literature-search-mcp on stdio, or run ``clear-history``."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] == "clear-history":
        if len(args) > 1:
            sys.stderr.write(f"{SERVER.name} clear-history: unexpected argument {args[1]!r}\n")
            return 2
        from .history import History

        history = History.from_environment()
        try:
            removed = history.clear()
        except OSError as exc:
            what = ("is a directory, not the history file" if isinstance(exc, IsADirectoryError)
                    or history.path.is_dir() else f"cannot be cleared ({exc.strerror or exc})")
            sys.stderr.write(f"{SERVER.name} clear-history: {history.path} {what}; nothing was "
                             f"removed (set {ENV_STATE_DIR} to the folder that holds "
                             "history.jsonl).\n")
            return 1
        print(f"cleared {removed} search{'es' if removed != 1 else ''} from {history.path}")
        return 0
    return server_main(SERVER, "readingroom.literature.server:build_literature_server", args)


if __name__ == "__main__":
    sys.exit(main())
