"""toy-mcp: a server that exists only in the tests, to show what a new server needs.

Its folder (this declaration, ``server.py``, ``__main__.py``) plus one line in
``tests/contract/catalog.py`` is all it takes to be held to the contract. It runs as
``python -m toy_server`` with ``tests/contract`` on ``PYTHONPATH``.
"""

from __future__ import annotations

from readingroom.core.declaration import ServerInfo

__all__ = ["SERVER"]

SERVER = ServerInfo(
    name="toy-mcp",
    entry_point="toy_server.__main__:main",
    title="Toy server (tests only)",
    description="Echoes text, waits on request and fails on purpose, for the contract tests.",
    credit=("Toy data: made up for the readingroom contract tests (CC0).",),
    deadline_s=30.0,
)
