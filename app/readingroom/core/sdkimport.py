"""A server process imports the server half of the MCP SDK, not the whole SDK.

``import mcp`` runs the SDK's ``mcp/__init__.py``, which imports its client (session, session
group, the stdio, SSE and streamable-HTTP clients) and ``mcp/server/__init__.py``, which
imports FastMCP with Starlette, uvicorn and SSE. A readingroom server uses none of them: it
needs ``mcp.types``, ``mcp.server.lowlevel``, ``mcp.server.stdio`` and ``mcp.shared``. Skipping
those two ``__init__`` files saves about a seventh of a server's start-up CPU (``bench/startup.py``
on this project's 2-core machine: 955 → 822 ms CPU, 740 → 661 ms to the initialize answer),
paid every time a host launches a server.

:func:`import_server_half` puts the two packages into ``sys.modules`` as found but not run, so
their submodules import as usual while the re-exports of the two ``__init__`` files are never
built. A name only those files re-export (``from mcp import ClientSession``) is then an
ImportError in that process, which no server code asks for (``tests/stdio/test_sdk_import.py``
starts every server this way and checks that no client module was imported). It does nothing
when the SDK is already imported (in-process tests, a host embedding us) or cannot be found.
Standard library only: it runs before anything else of the SDK is imported.
"""

from __future__ import annotations

import importlib.util
import sys

__all__ = ["SKIPPED_PACKAGE_INITS", "import_server_half"]

SKIPPED_PACKAGE_INITS = ("mcp", "mcp.server")
"""The SDK packages whose ``__init__`` a server process does not run (parent first)."""


def import_server_half() -> bool:
    """Register :data:`SKIPPED_PACKAGE_INITS` unexecuted; whether it was done (see above)."""
    if any(name in sys.modules for name in SKIPPED_PACKAGE_INITS):
        return False
    parent = None
    for name in SKIPPED_PACKAGE_INITS:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.submodule_search_locations is None:
            for done in SKIPPED_PACKAGE_INITS:
                sys.modules.pop(done, None)
            return False
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        if parent is not None:
            setattr(parent, name.rpartition(".")[2], module)
        parent = module
    return True
