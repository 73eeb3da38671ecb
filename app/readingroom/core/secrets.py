"""Secrets (API keys): looked up at run time, never written into a host config.

Resolution order: the process environment, then the OS keyring (Windows Credential Manager,
macOS Keychain, Secret Service) under the service name ``readingroom``. The environment covers
hosts that forward variables (Codex ``env_vars``, Claude Code, VS Code, Cursor, Gemini); the
keyring covers hosts that start servers with a bare environment (Claude Desktop).

``readingroom secrets set|list|delete`` manages the keyring side; ``list`` shows names and where
each was found, never a value. Keyrings cannot enumerate their entries, so the names we stored
are kept in one more keyring entry (:data:`INDEX_KEY`), which holds names only.
"""

from __future__ import annotations

import argparse
import getpass
import json
import os
import re
import sys
from collections.abc import Callable, Mapping
from typing import Any, Literal, TextIO

__all__ = [
    "INDEX_KEY",
    "SERVICE",
    "SecretValue",
    "Source",
    "backend_name",
    "cmd_delete",
    "cmd_list",
    "cmd_set",
    "delete",
    "register",
    "resolve",
    "store",
    "stored_names",
    "valid_name",
    "where",
]

SERVICE = "readingroom"
"""The keyring service name every secret of the suite is stored under."""

INDEX_KEY = ".names"
"""Keyring entry listing the names stored (a dot is not allowed in a secret's name)."""

Source = Literal["environment", "keyring"]

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class SecretValue:
    """A secret and where it came from; its text shows only through :meth:`reveal`."""

    __slots__ = ("_value", "name", "source")

    def __init__(self, name: str, value: str, source: Source) -> None:
        self.name = name
        self.source: Source = source
        self._value = value

    def reveal(self) -> str:
        """The secret itself (for the one place that sends it upstream)."""
        return self._value

    def __repr__(self) -> str:
        return f"SecretValue(name={self.name!r}, source={self.source!r}, value='***')"

    __str__ = __repr__


def valid_name(name: str) -> bool:
    """Whether ``name`` has the shape of an environment variable name."""
    return bool(_NAME.match(name))


def _keyring() -> Any:
    import keyring

    return keyring


def resolve(name: str, env: Mapping[str, str] | None = None) -> SecretValue | None:
    """The secret called ``name``: from the environment, else the keyring, else None.

    An empty (or blank) environment value counts as unset, so a host that writes an empty
    variable does not hide the keyring value.
    """
    environ = os.environ if env is None else env
    value = environ.get(name, "")
    if value.strip():
        return SecretValue(name, value, "environment")
    stored = _read_keyring(name)
    return SecretValue(name, stored, "keyring") if stored else None


def where(name: str, env: Mapping[str, str] | None = None) -> Source | None:
    """Where :func:`resolve` would find ``name`` (never the value)."""
    found = resolve(name, env)
    return None if found is None else found.source


def _read_keyring(name: str) -> str | None:
    try:
        return _keyring().get_password(SERVICE, name)
    except Exception:
        # Backends fail in many ways (no D-Bus session, a locked vault, missing metadata in a
        # frozen build); a secret that cannot be read is simply not there, never a crash.
        return None


def stored_names() -> list[str]:
    """The names stored in the keyring through :func:`store` (empty when unreadable)."""
    raw = _read_keyring(INDEX_KEY)
    try:
        names = json.loads(raw) if raw else []
    except ValueError:
        return []
    return sorted({n for n in names if isinstance(n, str) and valid_name(n)})


def _write_index(names: set[str]) -> None:
    _keyring().set_password(SERVICE, INDEX_KEY, json.dumps(sorted(names)))


def store(name: str, value: str) -> None:
    """Store ``value`` under ``name`` in the OS keyring.

    Raises:
        ValueError: ``name`` is not a variable name, or ``value`` is empty.
        keyring.errors.KeyringError: no usable keyring (or it refused).
    """
    if not valid_name(name):
        raise ValueError(f"{name!r} is not a variable name (letters, digits, underscore)")
    if not value:
        raise ValueError("empty value")
    _keyring().set_password(SERVICE, name, value)
    _write_index({*stored_names(), name})


def delete(name: str) -> bool:
    """Delete ``name`` from the keyring; False when it was not stored there."""
    from keyring.errors import PasswordDeleteError

    try:
        _keyring().delete_password(SERVICE, name)
        deleted = True
    except PasswordDeleteError:
        deleted = False
    names = set(stored_names())
    if name in names:
        _write_index(names - {name})
    return deleted


def backend_name() -> str:
    """The keyring backend in use, e.g. ``keyring.backends.Windows.WinVaultKeyring``."""
    try:
        backend = _keyring().get_keyring()
    except Exception as exc:  # the name is for display only
        return f"unavailable ({type(exc).__name__})"
    cls = type(backend)
    return f"{cls.__module__}.{cls.__qualname__}"


# -- the command group -----------------------------------------------------------------------


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
    from ..catalog import SERVERS

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
