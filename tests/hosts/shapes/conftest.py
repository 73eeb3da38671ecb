"""The shape tests run over the whole catalogue (the parent conftest pins it to ndl-mcp)."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def ndl_only_catalogue() -> None:
    """Overrides the parent fixture: every catalogue server is written here."""
