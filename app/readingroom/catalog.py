"""The suite's servers and programs: one line per server, everything else derived.

``hosts``, ``setup``, the self-test command, the freezer and the contract tests read this
catalogue and each server's declaration (:class:`~readingroom.core.declaration.ServerInfo`),
never a server's internals. A new server is its folder (exporting ``SERVER``) plus one line
in :data:`SERVERS` and its console script in ``pyproject.toml`` (a test keeps the two equal).
"""

from __future__ import annotations

from . import book, cinii, heritage, jstage, literature, ndl
from .core.declaration import Program, ServerInfo, unique_names

__all__ = ["ADMIN", "BUNDLED_PROGRAMS", "ENTRIES", "PROGRAMS", "SERVERS", "ServerInfo", "server"]

SERVERS: dict[str, ServerInfo] = {s.name: s for s in (
    ndl.SERVER,
    literature.SERVER,
    book.SERVER,
    heritage.SERVER,
    cinii.SERVER,
    jstage.SERVER,
)}
"""The MCP servers of the suite, by name, in registration order."""

ADMIN = Program(name="readingroom", entry_point="readingroom.cli:main")
"""The admin command line (setup, self-test, receipts, hosts, secrets)."""

PROGRAMS: dict[str, Program] = unique_names([*SERVERS.values(), ADMIN])
"""Every console script of the distribution: the servers, the admin CLI, other tools."""

ENTRIES: dict[str, Program] = {
    name: Program(name, f"readingroom.programs:{name.replace('-', '_')}")
    if isinstance(p, ServerInfo) and p.instances is not None else p
    for name, p in PROGRAMS.items()}
"""Each program's console script and frozen entry: its declared entry point, except for a
server declaring :attr:`~readingroom.core.declaration.ServerInfo.instances`, whose program
goes through ``readingroom.programs`` (that instance command is the suite's work)."""

BUNDLED_PROGRAMS: tuple[str, ...] = tuple(PROGRAMS)
"""Every executable the frozen bundle holds (the spec and entry scripts are made from it)."""


def server(name: str) -> ServerInfo:
    """The catalogue entry for ``name`` (KeyError naming the known servers otherwise)."""
    try:
        return SERVERS[name]
    except KeyError:
        raise KeyError(f"unknown server {name!r}; known: {', '.join(SERVERS)}") from None
