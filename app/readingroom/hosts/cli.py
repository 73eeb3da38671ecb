"""``readingroom install-host``: write, print, verify or remove the suite's entries in one host.

Exit status: 0 done (or already so); 1 verify failed, or nothing was done (an entry of the same
name belongs to another program, the ``claude`` CLI is missing so its commands were only
printed, no server's gate is open, an executable is missing, or a write failed); 2 usage error
(such as naming a server whose gate is closed), or a host file that does not parse (it is left
untouched).

A server declares its gate (:attr:`readingroom.core.declaration.ServerInfo.gate`; ndl-mcp's is
the notification the NDL asks of continuous users); this command reads only that declaration.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..catalog import SERVERS
from ..core.declaration import ServerInfo
from ..core.platform import Machine, default_data_dir
from . import HOSTS, get_host
from .apply import EXIT_FAILED, EXIT_USAGE, apply_entries
from .entries import build_entries

__all__ = ["cmd_install_host", "register"]


def register(subparsers: Any) -> None:
    """Add ``install-host`` to the ``readingroom`` argparse subparsers."""
    gated = "; ".join(f"{s.name} only once `readingroom setup {s.gate.option} {s.gate.metavar}` "
                      "has recorded it" for s in SERVERS.values() if s.gate is not None)
    parser = subparsers.add_parser(
        "install-host",
        help="register the suite's servers with one MCP host (or print, verify, remove)",
        description="Register the suite's servers with one MCP host, editing only our own "
        "entries: the file is parsed first (a file that does not parse is refused), backed up "
        "with a timestamp, replaced atomically and read back. Without --server: every server "
        f"whose gate is open ({gated or 'no server has a gate'}). Exit 0 done, 1 verify failed "
        "or nothing done, 2 usage error or a config file that does not parse.",
    )
    parser.add_argument("--host", required=True, choices=list(HOSTS), help="the host")
    parser.add_argument("--server", action="append", choices=list(SERVERS), metavar="NAME",
                        help=f"a server to handle (repeatable; one of {', '.join(SERVERS)}; "
                        "default: every server whose gate is open, all for --remove)")
    parser.add_argument("--config", type=Path, metavar="FILE",
                        help="the host's config file, when not in its documented place "
                        "(for claude-code: the ~/.claude.json to read; claude writes its own)")
    parser.add_argument("--install-dir", metavar="DIR",
                        help="folder holding the server executables (default: the folder of "
                        "the running program)")
    parser.add_argument("--data-dir", metavar="DIR",
                        help="the suite's data folder: receipt ledger, gate records "
                        "(default: as readingroom setup)")
    parser.add_argument("--force", action="store_true",
                        help="replace or remove an entry of the same name even when it points "
                        "at another program")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--print", dest="mode", action="store_const", const="print",
                      help="print the entries (or claude commands) to add; change nothing")
    mode.add_argument("--remove", dest="mode", action="store_const", const="remove",
                      help="remove our entries")
    mode.add_argument("--verify", dest="mode", action="store_const", const="verify",
                      help="check the file parses and our entries point at existing executables")
    parser.set_defaults(func=cmd_install_host, mode="install")


def _say_error(message: str) -> None:
    print(f"install-host: {message}", file=sys.stderr)


def _refusal(info: ServerInfo, data_dir: Path) -> str | None:
    """Why ``info`` may not be registered yet (its gate is closed), or None when it may."""
    if info.gate is None:
        return None
    status = info.gate.resolve().status(data_dir)
    if status.open:
        return None
    return (f"{info.name} is registered only once its gate is open: {status.detail} "
            f"(run `readingroom setup {info.gate.option} {info.gate.metavar}`; data folder "
            f"{data_dir})")


def _servers_to_handle(args: argparse.Namespace, data_dir: Path) -> list[str] | int:
    """The servers named, or those whose gate is open; an exit status when refused."""
    if args.mode == "remove":
        return list(args.server or SERVERS)
    if args.mode == "verify" and args.server:
        return list(args.server)
    requested = list(dict.fromkeys(args.server or SERVERS))
    refusals = {n: why for n in requested if (why := _refusal(SERVERS[n], data_dir))}
    if args.server and refusals:
        for why in refusals.values():
            _say_error(why)
        return EXIT_USAGE
    allowed = [n for n in requested if n not in refusals]
    if not allowed:
        _say_error("no server to handle: " + "; ".join(refusals.values()))
        return EXIT_FAILED
    return allowed


def cmd_install_host(args: argparse.Namespace, *, ctx: Machine | None = None) -> int:
    """Run ``install-host``; ``ctx`` replaces this machine's folders (tests)."""
    context = ctx or Machine.current()
    host = get_host(args.host, context)
    data_dir = Path(context.absolute(args.data_dir or default_data_dir(context)))
    install_dir = context.absolute(args.install_dir or Path(sys.executable).parent)
    selected = _servers_to_handle(args, data_dir)
    if isinstance(selected, int):
        return selected
    try:
        entries = build_entries([SERVERS[n] for n in selected], install_dir, data_dir, context)
    except ValueError as exc:
        _say_error(str(exc))
        return EXIT_FAILED
    return apply_entries(host, args.mode, entries, config=args.config, force=args.force,
                         say=_say_error)
