"""literature-search-mcp joins the suite by its catalogue line: entries, bundle, self-test."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from readingroom.catalog import BUNDLED_PROGRAMS, SERVERS
from readingroom.core.declaration import resolve
from readingroom.core.platform import Machine
from readingroom.hosts import build_entries
from readingroom.literature import OPTIONAL_VARIABLES, SERVER


def test_the_catalogue_line_gives_a_host_entry_without_secret_values(tmp_path: Path):
    assert SERVERS["literature-search-mcp"] is SERVER
    assert "literature-search-mcp" in BUNDLED_PROGRAMS
    ctx = Machine(home=tmp_path / "home", platform="linux",
                  now=lambda: datetime(2026, 1, 1, tzinfo=UTC), env={})
    entries = {e.name: e for e in build_entries(SERVERS.values(), tmp_path / "install",
                                                tmp_path / "data", ctx)}
    entry = entries["literature-search-mcp"]
    assert entry.command == str(tmp_path / "install" / "literature-search-mcp")
    assert entry.secret_names == OPTIONAL_VARIABLES  # names only, resolved at run time
    assert set(entry.env) == {"MCP_RECEIPT_LOG"}


def test_the_declared_self_test_and_entry_point_resolve():
    assert callable(resolve(SERVER.self_test))
    assert callable(resolve(SERVER.entry_point))
    assert SERVER.gate is None
