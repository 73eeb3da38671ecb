"""The generated library, built once per session and copied for a test that changes it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from .books import make_library


@pytest.fixture(scope="session")
def template_library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The data folder of the twelve generated books (never changed by a test)."""
    return make_library(tmp_path_factory.mktemp("library-template"))


@pytest.fixture
def library(template_library: Path, tmp_path: Path) -> Path:
    """A copy of the generated library this test may change."""
    data = tmp_path / "data"
    shutil.copytree(template_library, data)
    return data
