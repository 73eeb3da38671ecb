"""Fixtures shared by the host and setup tests (tests/setup/conftest.py imports them)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def install_dir(tmp_path: Path) -> Path:
    """A fake install folder holding an executable named like our ndl-mcp."""
    folder = tmp_path / "install"
    folder.mkdir()
    exe = folder / "ndl-mcp"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    return folder


@pytest.fixture(autouse=True)
def ndl_only_catalogue() -> Iterator[None]:
    """These tests check host-file mechanics on one server's entry: the catalogue is pinned to
    ndl-mcp (literature-search-mcp's own registration is tested in tests/literature).

    Put back in its order afterwards (deleting and re-adding keys would reorder the catalogue
    for every later test in the process: the README's settings table follows that order).
    """
    from readingroom.catalog import SERVERS

    whole = dict(SERVERS)
    for name in [n for n in SERVERS if n != "ndl-mcp"]:
        del SERVERS[name]
    try:
        yield
    finally:
        SERVERS.clear()
        SERVERS.update(whole)
