"""Fixtures of the book-agent tests."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ..conftest import samples_dir


def fixture_books() -> Path:
    """The shared real books; skips (or fails when samples are required) when absent."""
    books = samples_dir() / "books"
    if not books.is_dir():
        message = f"shared samples not found at {books} (set READINGROOM_SAMPLES)"
        if os.environ.get("READINGROOM_REQUIRE_SAMPLES") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return books
