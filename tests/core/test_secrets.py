"""The secret store: environment first, then the OS keyring; a value never shows."""

from __future__ import annotations

import pytest

from readingroom.core import secrets

from .keyrings import BrokenKeyring, MemoryKeyring, using


@pytest.fixture
def memory_keyring():
    with using(MemoryKeyring()) as backend:
        yield backend


@pytest.fixture
def broken_keyring():
    with using(BrokenKeyring()):
        yield


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
