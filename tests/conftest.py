"""Shared test fixtures.

The real upstream samples live outside the repository, in the shared fixtures folder, found
through ``READINGROOM_SAMPLES`` (default ``../shared/fixtures`` relative to the repo root).
Without them the tests that need them skip, visibly; with ``READINGROOM_REQUIRE_SAMPLES=1``
(set it in CI) they fail instead.

The quick tier (``pytest --quick``, ``python run.py test --quick``) is chosen here too: see
:func:`pytest_collection_modifyitems`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
PROJECT_FIXTURES = Path(__file__).resolve().parent / "fixtures"

_MISSING = "samples-missing"

PROCESS_FOLDERS = ("stdio", "contract", "hosts_real")
"""Folders of ``tests/`` whose every test starts real processes: marked ``stdio`` by rule."""


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


# --- pytest-xdist: summary lines of the workers -----------------------------------------------
# A worker's conftest (tests/hosts_real's) puts its terminal-summary lines into
# ``config.workeroutput["summary_lines"]``; the controller, which collects no tests and so loads
# no sub-folder conftest, prints them once each.

_WORKER_LINES: list[str] = []


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """Keep the summary lines a finished worker handed over."""
    for line in getattr(node, "workeroutput", {}).get("summary_lines", []):
        if line not in _WORKER_LINES:
            _WORKER_LINES.append(line)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """The workers' summary lines (none without pytest-xdist)."""
    for line in _WORKER_LINES:
        terminalreporter.write_line(line)


# --- the quick tier ---------------------------------------------------------------------------


def pytest_configure(config: pytest.Config) -> None:
    """The markers of the quick tier (``slow`` and ``live`` are declared in pyproject.toml)."""
    config.addinivalue_line(
        "markers", "stdio: starts real server or command processes, or is in a module that does "
        f"(left out by --quick; every test under tests/{{{','.join(PROCESS_FOLDERS)}}} by rule)")
    config.addinivalue_line(
        "markers", "smoke: the quick tier's stdio check of each server (kept by --quick)")


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--quick``: the tier a developer runs after each change."""
    parser.addoption(
        "--quick", action="store_true", default=False,
        help="readingroom's quick tier: unit and in-memory MCP tests plus one stdio smoke per "
             "server (tests marked smoke); leaves out tests marked stdio or slow (every test "
             f"under tests/{{{','.join(PROCESS_FOLDERS)}}} is marked stdio)")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the process folders' tests ``stdio``; under ``--quick``, keep only the quick tier.

    The quick tier is every test not marked ``stdio`` or ``slow``, plus those marked
    ``smoke``: the contract suite's start-up, sample call and clean-exit checks, parametrised
    over the catalogue, so a new server joins the smoke by joining the catalogue. (First, so
    that ``-m`` sees the ``stdio`` marks.)
    """
    tests_root = Path(__file__).resolve().parent
    for item in items:
        try:
            first = item.path.resolve().relative_to(tests_root).parts[0]
        except ValueError:
            first = ""
        if first in PROCESS_FOLDERS:
            item.add_marker(pytest.mark.stdio)
    if not config.getoption("quick"):
        return
    keep: list[pytest.Item] = []
    left_out: list[pytest.Item] = []
    for item in items:
        full = item.get_closest_marker("stdio") or item.get_closest_marker("slow")
        (left_out if full and not item.get_closest_marker("smoke") else keep).append(item)
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = keep
