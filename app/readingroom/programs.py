"""The console scripts of servers that declare an instance command (``ServerInfo.instances``).

``book-agent install-host`` registers a host entry, which is the suite's work, while every
other ``book-agent`` command is the server's own. The program's console script and frozen
executable therefore start here (``readingroom.programs:book_agent``, one function per such
server, named after it, generated from the catalogue): a command line with the declared word
is shown to the server's ``describe`` function and what it describes is registered by
:func:`readingroom.setup.instance.register_request`; anything else runs the server's own
entry point, untouched (``book-agent mcp`` still reserves fd 1 before anything heavy loads:
nothing here imports more than the declarations). ``python -m readingroom.programs NAME ...``
runs program NAME the same way.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

from .core.declaration import ServerInfo, resolve

__all__ = ["function_name", "run"]


def function_name(server: str) -> str:
    """The function of this module that is ``server``'s program: ``book-agent`` → ``book_agent``."""
    return server.replace("-", "_")


def run(info: ServerInfo, argv: Sequence[str] | None = None) -> int:
    """Run program ``info`` on ``argv`` (default: this process's arguments); its exit status."""
    words = list(sys.argv[1:] if argv is None else argv)
    instances = info.instances
    if instances is not None and instances.command in words:
        from .hosts import HOSTS

        described = instances.resolve()(words, tuple(HOSTS))
        if isinstance(described, int):
            return described
        if described is not None:
            from .setup.instance import register_request

            return register_request(described)
    main: Callable[..., int] = resolve(info.entry_point)
    return main() if argv is None else main(words)


def __getattr__(name: str) -> Callable[[], int]:
    """``book_agent`` and the like: the program of each server that declares instances."""
    from .catalog import SERVERS

    for info in SERVERS.values():
        if info.instances is not None and function_name(info.name) == name:
            def program(argv: Sequence[str] | None = None, _info: ServerInfo = info) -> int:
                return run(_info, argv)

            program.__name__ = program.__qualname__ = name
            program.__doc__ = f"Entry point of the ``{info.name}`` program."
            return program
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if __name__ == "__main__":
    from .catalog import server

    sys.exit(run(server(sys.argv[1]), sys.argv[2:]))
