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

It also marks httpx's command-line client (``httpx._main``) as absent. ``import httpx`` tries
that module and, where click and rich are installed (a developer's or a test environment, or a
user's Python with other tools in it), imports them with pygments: about 70 ms of every start
for a program no server runs. httpx then defines its own stand-in ``httpx.main``; nothing else
changes.

:func:`collector_paused` keeps Python's cyclic garbage collector off while a server imports and
builds itself. Importing the SDK and pydantic builds some two hundred model classes, and the
collector, run every 700 new objects, rescans them again and again: about a fifth of the
import's CPU, for nothing, since start-up objects live as long as the process. When the server
is built they are frozen (:func:`gc.freeze`: never scanned again) and the collector resumes.
"""

from __future__ import annotations

import contextlib
import gc
import importlib.util
import sys
from collections.abc import Iterator

__all__ = ["ABSENT_MODULES", "SKIPPED_PACKAGE_INITS", "collector_paused", "import_server_half"]

SKIPPED_PACKAGE_INITS = ("mcp", "mcp.server")
"""The SDK packages whose ``__init__`` a server process does not run (parent first)."""

ABSENT_MODULES = {"httpx._main": "httpx"}
"""Optional modules a server process treats as not installed, by the package that tries them."""


def import_server_half() -> bool:
    """Register :data:`SKIPPED_PACKAGE_INITS` unexecuted; whether it was done (see above).

    :data:`ABSENT_MODULES` are marked absent whenever the package that tries them is not yet
    imported.
    """
    for name, package in ABSENT_MODULES.items():
        if package not in sys.modules:
            # None in sys.modules makes the import an ImportError, which httpx expects.
            sys.modules.setdefault(name, None)  # type: ignore[arg-type]
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


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The garbage collector off for the block, then what exists frozen and the collector as it was.

    For a process's start-up (imports, building the server), not for work that makes garbage
    in cycles: nothing made inside the block is ever collected if it becomes garbage later.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if was_enabled:
            gc.enable()
