"""Shared test fixtures.

The real upstream samples live outside the repository, in the shared fixtures folder, found
through ``READINGROOM_SAMPLES`` (default ``../shared/fixtures`` relative to the repo root).
Without them the tests that need them skip, visibly; with ``READINGROOM_REQUIRE_SAMPLES=1``
(set it in CI) they fail instead.

The quick tier (``pytest --quick``, ``python run.py test --quick``) is chosen here too: see
:func:`pytest_collection_modifyitems`.
"""

from __future__ import annotations

import gc
import os
import shutil
import tempfile
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


# --- the garbage collector ---------------------------------------------------------------------

COLLECTOR_THRESHOLD = 20_000
"""New objects between young-generation collections in a test process (Python's default: 700)."""


def _tune_collector() -> None:
    """Collect less often, and never rescan what collection built.

    A worker imports the whole package, the SDK and every test module (several hundred
    thousand long-lived objects), then each test makes and drops many small ones; with
    Python's default threshold the collector runs thousands of times, rescanning the
    survivors each time. Only the test processes are tuned: servers and commands started by
    the tests run as a user's do (a server's own start-up pause is ``core.sdkimport``'s).
    """
    _, *older = gc.get_threshold()
    gc.set_threshold(COLLECTOR_THRESHOLD, *older)


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """What collection built lives for the whole run: frozen out of the collector's scans."""
    gc.collect()
    gc.freeze()


# --- the quick tier ---------------------------------------------------------------------------


RUN_DIR_ENV = "READINGROOM_TEST_RUN_DIR"
"""A folder for the whole run, shared by its workers (made before they start, which inherit
the variable; removed when the run ends): ``tests/book/ingested.py`` keeps real books there."""

_made_run_dir: list[str] = []


def pytest_configure(config: pytest.Config) -> None:
    """The markers of the quick tier (``slow`` and ``live`` are declared in pyproject.toml),
    and the run's shared folder (:data:`RUN_DIR_ENV`)."""
    _tune_collector()
    if not os.environ.get(RUN_DIR_ENV):
        _made_run_dir.append(tempfile.mkdtemp(prefix="readingroom-test-run-"))
        os.environ[RUN_DIR_ENV] = _made_run_dir[0]
    config.addinivalue_line(
        "markers", "stdio: starts real server or command processes, or is in a module that does "
        f"(left out by --quick; every test under tests/{{{','.join(PROCESS_FOLDERS)}}} by rule)")
    config.addinivalue_line(
        "markers", "smoke: the quick tier's stdio check of each server (kept by --quick)")


def pytest_unconfigure(config: pytest.Config) -> None:
    """Remove the run's shared folder, in the process that made it."""
    for folder in _made_run_dir:
        shutil.rmtree(folder, ignore_errors=True)
        os.environ.pop(RUN_DIR_ENV, None)
    _made_run_dir.clear()


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--quick``: the tier a developer runs after each change."""
    parser.addoption(
        "--quick", action="store_true", default=False,
        help="readingroom's quick tier: unit and in-memory MCP tests plus one stdio smoke per "
             "server (tests marked smoke); leaves out tests marked stdio or slow (every test "
             f"under tests/{{{','.join(PROCESS_FOLDERS)}}} is marked stdio)")


SMOKELESS_FOLDERS = ("stdio", "hosts_real")
"""Process folders with no ``smoke`` test: ``--quick`` does not even import their modules."""


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Under ``--quick``, skip :data:`SMOKELESS_FOLDERS` whole (every test there is left out)."""
    if not config.getoption("quick"):
        return None
    return True if _folder_of(collection_path) in SMOKELESS_FOLDERS else None


def _folder_of(path: Path) -> str:
    """The folder of ``tests/`` that ``path`` is in (``""`` outside it or at its top)."""
    try:
        parts = path.resolve().relative_to(Path(__file__).resolve().parent).parts
    except ValueError:
        return ""
    return parts[0] if len(parts) > 1 or path.is_dir() else ""


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the process folders' tests ``stdio``; under ``--quick``, keep only the quick tier.

    The quick tier is every test not marked ``stdio`` or ``slow``, plus those marked
    ``smoke``: the contract suite's start-up, sample call and clean-exit checks, parametrised
    over the catalogue, so a new server joins the smoke by joining the catalogue. (First, so
    that ``-m`` sees the ``stdio`` marks.)
    """
    for item in items:
        if _folder_of(item.path) in PROCESS_FOLDERS:
            item.add_marker(pytest.mark.stdio)
    if not config.getoption("quick"):
        order_slowest_modules_first(config, items)
        return
    keep: list[pytest.Item] = []
    left_out: list[pytest.Item] = []
    for item in items:
        full = item.get_closest_marker("stdio") or item.get_closest_marker("slow")
        (left_out if full and not item.get_closest_marker("smoke") else keep).append(item)
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = keep
    order_slowest_modules_first(config, items)


# --- the order modules are handed to the workers ----------------------------------------------
# pytest-xdist's ``--dist loadscope`` hands whole modules to workers in collection order. A long
# module started last keeps one worker busy while the others idle, so the modules go slowest
# first: by the seconds each took in this checkout's previous run (remembered in pytest's cache
# by the process that ran the tests), or, on a fresh clone, by their kind — a real-host module,
# then one that starts processes, then one marked slow, then the rest. Within a module the
# order is the file's; every worker sorts the same collection the same way.

def _seconds_key(config: pytest.Config) -> str:
    # The quick tier runs part of some modules: its seconds are its own.
    return "readingroom/module-seconds" + ("-quick" if config.getoption("quick") else "")


_KIND_SECONDS = {"hosts_real": 60.0, "stdio": 10.0, "slow": 5.0}
_module_seconds: dict[str, float] = {}


def _module_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def _guessed_seconds(item: pytest.Item) -> float:
    if _module_of(item.nodeid).startswith("tests/hosts_real/"):
        return _KIND_SECONDS["hosts_real"]
    if item.get_closest_marker("stdio"):
        return _KIND_SECONDS["stdio"]
    if item.get_closest_marker("slow"):
        return _KIND_SECONDS["slow"]
    return 0.0


def order_slowest_modules_first(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Sort ``items`` module by module, the longest-running module first (see above)."""
    remembered: dict[str, float] = {}
    if getattr(config, "cache", None) is not None:
        remembered = config.cache.get(_seconds_key(config), {}) or {}
    weight: dict[str, float] = {}
    first_seen: dict[str, int] = {}
    for index, item in enumerate(items):
        module = _module_of(item.nodeid)
        first_seen.setdefault(module, index)
        if module in remembered:
            weight[module] = float(remembered[module])
        else:
            weight[module] = max(weight.get(module, 0.0), _guessed_seconds(item))
    items.sort(key=lambda item: (-weight[_module_of(item.nodeid)],
                                 first_seen[_module_of(item.nodeid)]))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Add up each module's seconds (setup, call and teardown) for the next run's order."""
    module = _module_of(report.nodeid)
    _module_seconds[module] = _module_seconds.get(module, 0.0) + report.duration


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Remember the seconds of the modules this run ran (in the process that ran or led it)."""
    config = session.config
    if (getattr(config, "cache", None) is None or hasattr(config, "workerinput")
            or not _module_seconds):
        return
    remembered = config.cache.get(_seconds_key(config), {}) or {}
    remembered.update({m: round(s, 2) for m, s in _module_seconds.items()})
    config.cache.set(_seconds_key(config), remembered)
