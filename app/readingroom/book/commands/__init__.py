"""book-agent's front doors: the command line, its MCP server's launch, its host registration.

- :mod:`.cli`: ``book-agent`` (the console script and ``python -m readingroom.book``);
- :mod:`.mcp`: ``book-agent [--data-dir DATA] mcp [BOOK_ID]``, the catalogue's stdio server;
- :mod:`.install`: ``book-agent [--data-dir DATA] install-host --host HOST [BOOK_ID]``.

Each of them finds the data folder the same way (:func:`data_folder`); nothing below this
package imports it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ...core.platform import server_data_dir
from .. import ENV_DATA_DIR, SERVER

__all__ = ["data_folder", "split_command"]


def data_folder(given: Path | None = None) -> Path:
    """``given`` (``--data-dir``), else ``$BOOK_AGENT_DATA_DIR``, else the suite's data folder +
    ``book-agent``.

    On Windows the suite's data folder is ``%USERPROFILE%\\ReadingRoom``, outside AppData:
    Store-packaged hosts virtualise AppData writes, which would hide packages from each other.
    """
    return given or server_data_dir(SERVER.name, ENV_DATA_DIR)


def split_command(argv: Sequence[str], command: str) -> tuple[Path | None, list[str]] | None:
    """``(--data-dir, the arguments after command)`` when ``argv`` is ``command`` (``mcp``,
    ``install-host``) after the common options, else None."""
    data_dir: Path | None = None
    i = 0
    while i < len(argv):
        word = argv[i]
        if word == "--data-dir" and i + 1 < len(argv):
            data_dir, i = Path(argv[i + 1]), i + 2
        elif word.startswith("--data-dir="):
            data_dir, i = Path(word.partition("=")[2]), i + 1
        elif word in ("--json", "--debug"):
            i += 1
        else:
            return (data_dir, list(argv[i + 1:])) if word == command else None
    return None
