"""Keyring backends for tests: one held in a dict, one that fails every call."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import keyring
from keyring.backend import KeyringBackend
from keyring.errors import KeyringError, PasswordDeleteError

__all__ = ["BrokenKeyring", "MemoryKeyring", "using"]


class MemoryKeyring(KeyringBackend):
    """A keyring held in a dict."""

    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.store: dict[tuple[str, str], str] = {}

    def get_password(self, service, username):
        return self.store.get((service, username))

    def set_password(self, service, username, password):
        self.store[(service, username)] = password

    def delete_password(self, service, username):
        if self.store.pop((service, username), None) is None:
            raise PasswordDeleteError(username)


class BrokenKeyring(KeyringBackend):
    """A keyring that fails every call, like a locked or missing vault."""

    priority = 1  # type: ignore[assignment]

    def get_password(self, service, username):
        raise KeyringError("vault locked")

    def set_password(self, service, username, password):
        raise KeyringError("vault locked")

    def delete_password(self, service, username):
        raise KeyringError("vault locked")


@contextmanager
def using(backend: KeyringBackend) -> Iterator[KeyringBackend]:
    """Make ``backend`` the process's keyring for the ``with`` block."""
    previous = keyring.get_keyring()
    keyring.set_keyring(backend)
    try:
        yield backend
    finally:
        keyring.set_keyring(previous)
