"""book-agent's front doors: the command line, its MCP server's launch, its host registration.

- :mod:`.cli`: ``book-agent`` (the console script and ``python -m readingroom.book``);
- :mod:`.mcp`: ``book-agent [--data-dir DATA] mcp [BOOK_ID]``, the catalogue's stdio server;
- :mod:`.install`: ``book-agent [--data-dir DATA] install-host --host HOST [BOOK_ID]``.

Each of them finds the data folder the same way (:func:`data_folder`); nothing below this
package imports it.
"""

from __future__ import annotations

from pathlib import Path

from ...core.platform import server_data_dir
from .. import ENV_DATA_DIR, SERVER

__all__ = ["data_folder"]


def data_folder(given: Path | None = None) -> Path:
    """``given`` (``--data-dir``), else ``$BOOK_AGENT_DATA_DIR``, else the suite's data folder +
    ``book-agent``.

    On Windows the suite's data folder is ``%USERPROFILE%\\ReadingRoom``, outside AppData:
    Store-packaged hosts virtualise AppData writes, which would hide packages from each other.
    """
    return given or server_data_dir(SERVER.name, ENV_DATA_DIR)
