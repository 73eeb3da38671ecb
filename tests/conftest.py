"""Shared test fixtures.

The real upstream samples live outside the repository, in the shared fixtures folder, found
through ``READINGROOM_SAMPLES`` (default ``../shared/fixtures`` relative to the repo root).
Without them the tests that need them skip, visibly; with ``READINGROOM_REQUIRE_SAMPLES=1``
(set it in CI) they fail instead.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
PROJECT_FIXTURES = Path(__file__).resolve().parent / "fixtures"

_MISSING = "samples-missing"


def samples_dir() -> Path:
    """The shared real-sample folder: ``$READINGROOM_SAMPLES`` or ``<repo>/../shared/fixtures``."""
    configured = os.environ.get("READINGROOM_SAMPLES")
    if configured:
        return Path(configured).expanduser().resolve()
    return (REPO_ROOT.parent / "shared" / "fixtures").resolve()


def _samples_missing(where: Path) -> None:
    """Skip (or fail, when samples are required) a test that needs the shared samples."""
    message = f"shared samples not found at {where} (set READINGROOM_SAMPLES)"
    if os.environ.get("READINGROOM_REQUIRE_SAMPLES") == "1":
        pytest.fail(message)
    pytest.skip(message)


def ndl_sample_files() -> list[Any]:
    """``pytest.param`` per real NDL sample (``<samples>/ndl/*.xml``), for parametrising.

    Collected at import time. When the folder is absent, a single sentinel parameter stands in;
    the :func:`ndl_sample` fixture turns it into a visible skip (or failure).
    """
    folder = samples_dir() / "ndl"
    files = sorted(folder.glob("*.xml")) if folder.is_dir() else []
    if not files:
        return [pytest.param(None, id=_MISSING)]
    return [pytest.param(path, id=path.name) for path in files]


@pytest.fixture
def samples() -> Path:
    """The shared real-sample folder; skips (or fails) when it is absent."""
    folder = samples_dir()
    if not folder.is_dir():
        _samples_missing(folder)
    return folder


@pytest.fixture(params=ndl_sample_files())
def ndl_sample(request: pytest.FixtureRequest) -> Path:
    """Each real NDL sample file in turn; skips (or fails) when there are none."""
    if request.param is None:
        _samples_missing(samples_dir() / "ndl")
    return request.param


@pytest.fixture
def project_fixtures() -> Path:
    """The project's own hand-written fixtures (``tests/fixtures``)."""
    return PROJECT_FIXTURES


@pytest.fixture
def anyio_backend() -> str:
    """Run anyio-marked tests on asyncio only."""
    return "asyncio"
