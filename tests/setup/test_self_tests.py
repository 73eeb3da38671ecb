"""``readingroom self-test``: which servers it runs, read from the catalogue alone."""

from __future__ import annotations

import pytest

from readingroom.catalog import SERVERS
from readingroom.setup import self_tests


@pytest.fixture(autouse=True)
def ndl_only_catalogue() -> None:
    """Overrides the folder's fixture: these tests read the whole catalogue."""


def test_by_default_every_server_with_a_self_test_is_chosen():
    servers, command = self_tests._choose([])
    assert [s.name for s in servers] == [s.name for s in SERVERS.values() if s.self_test]
    assert command is None and len(servers) >= 2


def test_named_servers_then_a_command_for_one_of_them():
    first = self_tests.testable_servers()[0]
    servers, command = self_tests._choose([first.name, "/opt/x/server", "--flag"])
    assert [s.name for s in servers] == [first.name]
    assert command == ["/opt/x/server", "--flag"]


def test_a_command_without_a_server_is_ambiguous_when_several_have_self_tests():
    with pytest.raises(ValueError, match="name it first"):
        self_tests._choose(["/opt/x/server"])
