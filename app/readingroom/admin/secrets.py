"""``readingroom secrets set|list|delete``: the OS-keyring side of the suite's secrets.

The store itself (resolution order, the keyring index) is :mod:`readingroom.core.secrets`;
this module is its command line. ``list`` shows names and where each was found, never a value.
"""

from __future__ import annotations

import argparse
import getpass
import os
import sys
from collections.abc import Callable, Mapping
from typing import Any, TextIO

from ..catalog import SERVERS
from ..core.secrets import SERVICE, backend_name, delete, store, stored_names, valid_name, where

__all__ = ["cmd_delete", "cmd_list", "cmd_set", "register"]


def register(subparsers: Any) -> None:
    """Add the ``secrets`` command group (``set``, ``list``, ``delete``) to argparse."""
    group = subparsers.add_parser(
        "secrets",
        help="store, list or delete API keys in the OS keyring",
        description="Store, list or delete the suite's secrets in the OS keyring (service "
        f"{SERVICE!r}). Servers read a secret from the environment first, then the keyring; "
        "host configs never contain one.",
    )
    commands = group.add_subparsers(dest="secrets_command", metavar="COMMAND", required=True)

    put = commands.add_parser("set", help="store a secret (asks for the value)",
                              description="Store a secret in the OS keyring. The value is "
                              "asked for without echo, or read from standard input.")
    put.add_argument("name", metavar="NAME", help="variable name, e.g. OPENALEX_API_KEY")
    put.add_argument("--stdin", action="store_true",
                     help="read the value from standard input (one line) instead of asking")
    put.set_defaults(func=cmd_set)

    show = commands.add_parser("list", help="list secret names and where each is found",
                               description="List the secrets the suite's servers use and those "
                               "stored, with where each is found. Never prints a value.")
    show.set_defaults(func=cmd_list)

    drop = commands.add_parser("delete", help="delete a secret from the keyring",
                               description="Delete a secret from the OS keyring. Exit 1 when "
                               "it was not stored there.")
    drop.add_argument("name", metavar="NAME")
    drop.set_defaults(func=cmd_delete)


def cmd_set(
    args: argparse.Namespace,
    *,
    ask: Callable[[str], str] = getpass.getpass,
    stdin: TextIO | None = None,
    env: Mapping[str, str] | None = None,
) -> int:
    """``secrets set NAME [--stdin]``: exit 0 stored, 1 keyring failed, 2 bad name or value."""
    name = args.name
    if not valid_name(name):
        print(f"secrets set: {name!r} is not a variable name (letters, digits, underscore)",
              file=sys.stderr)
        return 2
    if args.stdin:
        value = (stdin or sys.stdin).readline().rstrip("\r\n")
    else:
        value = ask(f"Value for {name} (not shown): ")
    if not value:
        print("secrets set: empty value; nothing stored", file=sys.stderr)
        return 2
    try:
        store(name, value)
    except Exception as exc:  # keyring backends raise assorted types; report, never a traceback
        print(f"secrets set: the OS keyring refused ({type(exc).__name__}: {exc}); nothing "
              f"stored. Keyring backend: {backend_name()}", file=sys.stderr)
        return 1
    print(f"stored {name} in the OS keyring (service {SERVICE!r}, {backend_name()})")
    environ = os.environ if env is None else env
    if environ.get(name, "").strip():
        print(f"note: {name} is also set in the environment, which takes precedence")
    return 0


def cmd_list(args: argparse.Namespace, *, env: Mapping[str, str] | None = None) -> int:
    """``secrets list``: names, where each is found and which server uses it; never values."""
    users: dict[str, list[str]] = {}
    for info in SERVERS.values():
        for secret in info.secrets:
            users.setdefault(secret, []).append(info.name)
    names = sorted({*users, *stored_names()})
    if not names:
        print("No secrets: the suite's servers use none, and none are stored.")
    else:
        width = max(len(n) for n in names)
        print(f"{'NAME':<{width}}  {'FOUND IN':<11}  USED BY")
        for name in names:
            found = where(name, env) or "not set"
            print(f"{name:<{width}}  {found:<11}  {', '.join(users.get(name, [])) or '-'}")
    print(f"keyring backend: {backend_name()}")
    return 0


def cmd_delete(args: argparse.Namespace) -> int:
    """``secrets delete NAME``: exit 0 deleted, 1 not stored (or keyring failed), 2 bad name."""
    name = args.name
    if not valid_name(name):
        print(f"secrets delete: {name!r} is not a variable name", file=sys.stderr)
        return 2
    try:
        deleted = delete(name)
    except Exception as exc:  # as in cmd_set
        print(f"secrets delete: the OS keyring refused ({type(exc).__name__}: {exc})",
              file=sys.stderr)
        return 1
    if not deleted:
        print(f"{name} is not stored in the OS keyring", file=sys.stderr)
        return 1
    print(f"deleted {name} from the OS keyring")
    return 0
