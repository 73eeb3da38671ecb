"""The suite's servers as hosts, the installer and the freezer see them: declared metadata only.

``hosts`` and ``setup`` read this catalogue, never a server's internals. A server added to the
suite adds one :class:`ServerInfo` here (and its console script in ``pyproject.toml``).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ADMIN_EXECUTABLE", "BUNDLED_PROGRAMS", "SERVERS", "ServerInfo", "server"]

ADMIN_EXECUTABLE = "readingroom"
"""The admin CLI's executable name (also frozen into the bundle)."""

BUNDLED_PROGRAMS = ("ndl-mcp", "readingroom", "book-agent")
"""Every executable the frozen bundle holds (``build/readingroom.spec`` has one row each)."""


@dataclass(frozen=True)
class ServerInfo:
    """What a host config needs to know about one MCP server of the suite."""

    name: str
    """Server name, host entry key and executable name (``ndl-mcp`` → ``ndl-mcp.exe``)."""
    module: str
    """``python -m`` module that runs it."""
    title: str
    description: str
    settings: tuple[str, ...] = ()
    """Non-secret environment variables a host entry may set (values written into configs)."""
    secrets: tuple[str, ...] = ()
    """Secret environment variable *names* (never values) the server reads; resolved at run
    time from the environment, then the OS keyring."""
    args: tuple[str, ...] = ()
    """Extra command-line arguments of the host entry."""
    deadline_s: float = 90.0
    """The server's own per-call deadline (``READINGROOM_TOOL_DEADLINE``)."""
    requires_ndl_notification: bool = False
    """Registered with hosts only once the NDL notification date is recorded."""


SERVERS: dict[str, ServerInfo] = {
    s.name: s
    for s in (
        ServerInfo(
            name="ndl-mcp",
            module="readingroom.ndl",
            title="NDL Search (National Diet Library, Japan)",
            description="Search NDL Search over SRU under the undertakings filed with the NDL.",
            settings=("MCP_RECEIPT_LOG", "READINGROOM_TOOL_DEADLINE", "NDL_SRU_URL"),
            requires_ndl_notification=True,
        ),
    )
}


def server(name: str) -> ServerInfo:
    """The catalogue entry for ``name`` (KeyError naming the known servers otherwise)."""
    try:
        return SERVERS[name]
    except KeyError:
        raise KeyError(f"unknown server {name!r}; known: {', '.join(SERVERS)}") from None
