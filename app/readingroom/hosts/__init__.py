"""Register the suite's servers with MCP hosts: one module per host, one write discipline.

Each host can ``render`` (what ``--print`` shows), ``install`` (idempotent), ``remove`` (only
our own entries) and ``verify``. The file hosts share one discipline (:mod:`.files`, applied by
:class:`.host.FileHost`): parse or refuse, timestamped backup, atomic replace, UTF-8 without
BOM, re-read and verify. Claude Code is driven through its own CLI. :mod:`.entries` makes and
recognises the suite's entries; :mod:`.outcome` reports what happened; :mod:`.apply` carries out
one command (install, print, verify, remove) and gives its exit status. ``readingroom
install-host`` (:mod:`.cli`), ``readingroom setup`` and a server's per-instance registration
(``book-agent install-host``, through :mod:`readingroom.setup.instance`) use these modules.
"""

from __future__ import annotations

from ..core.platform import Machine
from .claude_code import ClaudeCodeHost
from .claude_desktop import ClaudeDesktopHost
from .codex import CodexHost
from .cursor import CursorHost
from .entries import ServerEntry, build_entries, build_entry, is_ours
from .gemini import GeminiHost
from .host import Host
from .outcome import Action, ConfigParseError, ConfigWriteError, HostError, HostOutcome
from .vscode import VsCodeHost

__all__ = [
    "HOSTS",
    "Action",
    "ConfigParseError",
    "ConfigWriteError",
    "Host",
    "HostError",
    "HostOutcome",
    "ServerEntry",
    "build_entries",
    "build_entry",
    "get_host",
    "is_ours",
]

HOSTS: dict[str, type[Host]] = {
    cls.name: cls
    for cls in (CodexHost, ClaudeDesktopHost, ClaudeCodeHost, VsCodeHost, CursorHost, GeminiHost)
}
"""Every supported host by its ``--host`` name, in the order the CLI lists them."""


def get_host(name: str, ctx: Machine | None = None) -> Host:
    """The host called ``name`` (see :data:`HOSTS`), bound to ``ctx`` (default: this machine).

    Raises:
        KeyError: naming the known hosts.
    """
    try:
        cls = HOSTS[name]
    except KeyError:
        raise KeyError(f"unknown host {name!r}; known: {', '.join(HOSTS)}") from None
    return cls(ctx or Machine.current())
