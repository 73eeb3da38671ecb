"""``readingroom self-test [SERVER ...] [-- COMMAND ...]``: every server's own self-test.

Each server that declares a self-test (``ServerInfo.self_test``) proves its promises offline: a
real stdio subprocess of the server against a loopback fake of its upstream. By default every
such server of the catalogue is tested; naming servers tests only those. A ``COMMAND`` after
``--`` replaces the command of the one server tested (the frozen executable, a broken copy in a
test). Nothing here names a server.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from typing import Any

from ..catalog import SERVERS, ServerInfo
from ..core.declaration import resolve

__all__ = ["cmd_self_test", "register", "run_self_tests", "testable_servers"]


def testable_servers() -> list[ServerInfo]:
    """The catalogue's servers that declare a self-test, in catalogue order."""
    return [s for s in SERVERS.values() if s.self_test is not None]


def register(subparsers: Any) -> None:
    """Add ``self-test`` to the ``readingroom`` argparse subparsers."""
    names = ", ".join(s.name for s in testable_servers()) or "none"
    parser = subparsers.add_parser(
        "self-test",
        help="check each server's promises against a loopback fake (no network)",
        description="Run each server's self-test: the server as a real stdio subprocess "
        "against a loopback fake of its upstream, checking what it promised to its upstream "
        "(pacing, caps, guards), credit on every response, the response schema, stdout "
        "purity and the receipt chain. "
        f"Servers with a self-test: {names}. Exit 0 only when every check passed.",
    )
    parser.add_argument("words", nargs="*", metavar="SERVER",
                        help="servers to test (default: all); after --, the command line of "
                        "the one server to test (default: the frozen executable beside this "
                        "one, else python -m)")
    parser.add_argument("--json", action="store_true", help="print the reports as JSON")
    parser.set_defaults(func=cmd_self_test)


def _choose(words: Sequence[str]) -> tuple[list[ServerInfo], list[str] | None]:
    """Leading words naming servers choose them; the rest is one server's command."""
    testable = {s.name: s for s in testable_servers()}
    chosen: list[ServerInfo] = []
    rest = list(words)
    while rest and rest[0] in SERVERS:
        name = rest.pop(0)
        if name not in testable:
            raise ValueError(f"{name} declares no self-test")
        chosen.append(testable[name])
    if not rest:
        return chosen or list(testable.values()), None
    targets = chosen or list(testable.values())
    if len(targets) != 1:
        raise ValueError("a server command tests one server: name it first "
                         f"({', '.join(testable)})")
    return targets, rest


def run_self_tests(
    servers: Sequence[ServerInfo], command: Sequence[str] | None = None, *, quiet: bool = False
) -> list[tuple[ServerInfo, Any]]:
    """Run each server's self-test (``command`` only with one server); ``(server, report)``."""
    def say(message: str) -> None:
        if not quiet:
            print(f"... {message}", file=sys.stderr)

    results = []
    for info in servers:
        assert info.self_test is not None
        run = resolve(info.self_test)
        results.append((info, run(list(command) if command else None, progress=say)))
    return results


def cmd_self_test(args: argparse.Namespace) -> int:
    """Run the chosen self-tests and print their reports; 0 only when every check passed."""
    try:
        servers, command = _choose(args.words)
    except ValueError as exc:
        print(f"self-test: {exc}", file=sys.stderr)
        return 2
    began = time.monotonic()
    results = run_self_tests(servers, command)
    ok = bool(results) and all(report.ok for _, report in results)
    if args.json:
        print(json.dumps({
            "ok": ok,
            "seconds": round(time.monotonic() - began, 2),
            "servers": [{"server": info.name, **report.to_dict()} for info, report in results],
        }, ensure_ascii=False, indent=2))
    else:
        print("\n".join(report.render() for _, report in results))
    return 0 if ok else 1
