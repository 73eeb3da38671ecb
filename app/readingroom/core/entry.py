"""The one ``main`` of every server: help, version, fd 1 reserved, logging, run.

A server's ``__main__`` is two lines::

    def main(argv=None):
        return server_main(SERVER, "readingroom.ndl.server:build_ndl_server", argv)

Standard library only until fd 1 is reserved: anything imported before that could print to the
protocol stream (native libraries write to fd 1 below Python's ``sys.stdout``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

from .declaration import ServerInfo, help_text, resolve

__all__ = ["serve_stdio", "server_main"]


def server_main(
    info: ServerInfo,
    build: str | Callable[[], Any],
    argv: Sequence[str] | None = None,
) -> int:
    """Run ``info``'s server on stdio until stdin closes; ``--help``/``--version`` answer on stderr.

    Args:
        info: the server's declaration (help text and name come from it).
        build: ``"module:function"`` (imported only after fd 1 is reserved) or a callable,
            returning the low-level MCP ``Server``.
        argv: the arguments after the program name (default ``sys.argv[1:]``).
    """
    from .. import __version__

    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in ("-h", "--help"):
        sys.stderr.write(help_text(info, __version__))
        return 0
    if args and args[0] == "--version":
        sys.stderr.write(f"{info.name} {__version__}\n")
        return 0
    if args:
        sys.stderr.write(f"{info.name}: unexpected argument {args[0]!r}; see --help\n")
        return 2
    # resolve() imports the server's module: only after fd 1 is reserved, inside serve_stdio.
    serve_stdio(lambda: resolve(build)())
    return 0


def serve_stdio(build: Callable[[], Any]) -> None:
    """Reserve fd 1, build the server ``build`` returns and serve it on stdio until stdin closes.

    ``build`` runs after fd 1 is reserved, with the server half of the SDK imported and the
    garbage collector paused (:mod:`readingroom.core.sdkimport`), so it may import freely.
    """
    from .sdkimport import collector_paused, import_server_half
    from .stdio import reserve_stdout

    proto_out = reserve_stdout()
    with collector_paused():
        import_server_half()
        from .mcpkit import configure_logging, run_stdio

        configure_logging()
        server = build()
    run_stdio(server, proto_out)
