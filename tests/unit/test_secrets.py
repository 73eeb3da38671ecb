"""Secrets: environment first, then the OS keyring; names listed, values never shown."""

from __future__ import annotations

import io

import keyring
import pytest
from keyring.backend import KeyringBackend
from keyring.errors import KeyringError, PasswordDeleteError

from readingroom.cli import build_parser
from readingroom.core import secrets


class MemoryKeyring(KeyringBackend):
    """A keyring held in a dict."""

    priority = 1

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

    priority = 1

    def get_password(self, service, username):
        raise KeyringError("vault locked")

    def set_password(self, service, username, password):
        raise KeyringError("vault locked")

    def delete_password(self, service, username):
        raise KeyringError("vault locked")


@pytest.fixture
def memory_keyring():
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)


@pytest.fixture
def broken_keyring():
    previous = keyring.get_keyring()
    keyring.set_keyring(BrokenKeyring())
    yield
    keyring.set_keyring(previous)


def run(argv, **kwargs) -> int:
    args = build_parser().parse_args(["secrets", *argv])
    return args.func(args, **kwargs)


def test_environment_comes_first(memory_keyring):
    memory_keyring.set_password("readingroom", "API_KEY", "from-keyring")
    found = secrets.resolve("API_KEY", {"API_KEY": "from-env"})
    assert found.reveal() == "from-env" and found.source == "environment"
    assert secrets.where("API_KEY", {"API_KEY": "from-env"}) == "environment"


def test_keyring_is_the_fallback_and_blank_env_counts_as_unset(memory_keyring):
    memory_keyring.set_password("readingroom", "API_KEY", "from-keyring")
    for env in ({}, {"API_KEY": ""}, {"API_KEY": "   "}):
        found = secrets.resolve("API_KEY", env)
        assert found.reveal() == "from-keyring" and found.source == "keyring"
    assert secrets.resolve("OTHER", {}) is None
    assert secrets.where("OTHER", {}) is None


def test_the_value_never_shows_in_repr_or_str(memory_keyring):
    found = secrets.resolve("API_KEY", {"API_KEY": "sk-very-secret"})
    assert "sk-very-secret" not in repr(found)
    assert "sk-very-secret" not in str(found)
    assert "sk-very-secret" not in f"{found}"


def test_an_unusable_keyring_reads_as_absent(broken_keyring):
    assert secrets.resolve("API_KEY", {}) is None
    assert secrets.stored_names() == []


def test_store_and_delete_keep_the_index(memory_keyring):
    secrets.store("B_KEY", "b")
    secrets.store("A_KEY", "a")
    assert secrets.stored_names() == ["A_KEY", "B_KEY"]
    assert secrets.delete("A_KEY") is True
    assert secrets.stored_names() == ["B_KEY"]
    assert secrets.delete("A_KEY") is False
    with pytest.raises(ValueError):
        secrets.store("not-a-name", "x")
    with pytest.raises(ValueError):
        secrets.store("EMPTY", "")


def test_cli_set_from_stdin_and_list_shows_no_values(memory_keyring, capsys):
    assert run(["set", "OPENALEX_API_KEY", "--stdin"], stdin=io.StringIO("sk-stdin\n"),
               env={}) == 0
    assert memory_keyring.get_password("readingroom", "OPENALEX_API_KEY") == "sk-stdin"
    assert run(["set", "NCBI_API_KEY"], ask=lambda _prompt: "sk-asked", env={}) == 0
    assert memory_keyring.get_password("readingroom", "NCBI_API_KEY") == "sk-asked"
    capsys.readouterr()

    assert run(["list"], env={"NCBI_API_KEY": "sk-env"}) == 0
    out = capsys.readouterr().out
    assert "sk-" not in out
    lines = {line.split()[0]: line.split()[1] for line in out.splitlines()[1:3]}
    assert lines == {"NCBI_API_KEY": "environment", "OPENALEX_API_KEY": "keyring"}
    assert "keyring backend:" in out


def test_cli_set_notes_an_environment_value_takes_precedence(memory_keyring, capsys):
    assert run(["set", "API_KEY", "--stdin"], stdin=io.StringIO("v\n"),
               env={"API_KEY": "x"}) == 0
    assert "takes precedence" in capsys.readouterr().out


def test_cli_refusals(memory_keyring, capsys):
    assert run(["set", "bad-name", "--stdin"], stdin=io.StringIO("v\n")) == 2
    assert run(["set", "API_KEY", "--stdin"], stdin=io.StringIO("\n")) == 2
    assert memory_keyring.store == {}
    assert run(["delete", "API_KEY"]) == 1
    assert "not stored" in capsys.readouterr().err


def test_cli_delete(memory_keyring):
    secrets.store("API_KEY", "v")
    assert run(["delete", "API_KEY"]) == 0
    assert memory_keyring.get_password("readingroom", "API_KEY") is None


def test_cli_with_an_unusable_keyring_fails_cleanly(broken_keyring, capsys):
    assert run(["set", "API_KEY", "--stdin"], stdin=io.StringIO("secret-value\n")) == 1
    err = capsys.readouterr().err
    assert "refused" in err and "secret-value" not in err
    assert run(["list"], env={}) == 0
