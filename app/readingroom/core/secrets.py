"""Secrets (API keys): looked up at run time, never written into a host config.

Resolution order: the process environment, then the OS keyring (Windows Credential Manager,
macOS Keychain, Secret Service) under the service name ``readingroom``. The environment covers
hosts that forward variables (Codex ``env_vars``, Claude Code, VS Code, Cursor, Gemini); the
keyring covers hosts that start servers with a bare environment (Claude Desktop).

``readingroom secrets set|list|delete`` (:mod:`readingroom.admin.secrets`) manages the keyring
side. Keyrings cannot enumerate their entries, so the names we stored are kept in one more
keyring entry (:data:`INDEX_KEY`), which holds names only.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from typing import Any, Literal

__all__ = [
    "INDEX_KEY",
    "SERVICE",
    "SecretValue",
    "Source",
    "backend_name",
    "delete",
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
    return bool(_NAME.fullmatch(name))


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
