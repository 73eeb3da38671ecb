"""``readingroom secrets set|list|delete``: stored, listed by name (never by value), deleted."""

from __future__ import annotations

import io

import pytest

from readingroom.cli import build_parser
from readingroom.core import secrets

from ..core.keyrings import BrokenKeyring, MemoryKeyring, using


@pytest.fixture
def memory_keyring():
    with using(MemoryKeyring()) as backend:
        yield backend


@pytest.fixture
def broken_keyring():
    with using(BrokenKeyring()):
        yield


def run(argv, **kwargs) -> int:
    args = build_parser().parse_args(["secrets", *argv])
    return args.func(args, **kwargs)


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
    lines = {line.split()[0]: line.split()[1] for line in out.splitlines()[1:]
             if line.split() and line.split()[0].isupper()}
    # literature-search-mcp declares both names (and five more, unset here).
    assert lines["NCBI_API_KEY"] == "environment" and lines["OPENALEX_API_KEY"] == "keyring"
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
