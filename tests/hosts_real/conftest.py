"""Fixtures of the real-host layer: the pinned host programs, and a throwaway world per test
(or per module, for a module that only reads it).

The host programs are installed once per session (see :mod:`.install`). Without node and npm,
or when the install fails, the layer skips with the reason; ``READINGROOM_REQUIRE_HOSTS=1``
(set by ``.ci/run``) turns that skip into a failure.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from readingroom.catalog import SERVERS

from .install import HostPrograms, HostsUnavailable, install
from .servers import host_case
from .world import World, outside

_INSTALL: dict[str, Any] = {}


def _unavailable(message: str) -> None:
    if os.environ.get("READINGROOM_REQUIRE_HOSTS") == "1":
        pytest.fail(f"real hosts required (READINGROOM_REQUIRE_HOSTS=1): {message}")
    pytest.skip(f"real hosts unavailable: {message}")


@pytest.fixture(scope="session")
def hosts() -> HostPrograms:
    """The pinned host programs (installed now if the cache lacks them); skips or fails."""
    if "error" not in _INSTALL and "programs" not in _INSTALL:
        try:
            _INSTALL["programs"] = install()
        except HostsUnavailable as exc:
            _INSTALL["error"] = str(exc)
    if "error" in _INSTALL:
        _unavailable(_INSTALL["error"])
    programs: HostPrograms = _INSTALL["programs"]
    return programs


@contextmanager
def _world(root: Path, hosts: HostPrograms) -> Iterator[World]:
    with outside() as recorder:
        place = World(root, hosts, recorder.url)
        place.open_gates()
        for info in SERVERS.values():
            prepare = host_case(info).prepare_data
            if prepare is not None:
                prepare(place.data_dir)
        yield place
        assert recorder.seen == [], f"a host tried to reach the network: {recorder.seen}"


@pytest.fixture
def world(tmp_path: Path, hosts: HostPrograms) -> Iterator[World]:
    """A temp home and data folder, the gates open, and a recorder for stray traffic.

    After the test, nothing may have reached the recorder: every host request stays on
    loopback fakes.
    """
    with _world(tmp_path, hosts) as place:
        yield place


@pytest.fixture(scope="module")
def module_world(tmp_path_factory: pytest.TempPathFactory, hosts: HostPrograms
                 ) -> Iterator[World]:
    """:func:`world`, once for a module whose tests only read it (no host config is written,
    only servers are started): built once, checked for stray traffic after the last test."""
    with _world(tmp_path_factory.mktemp("world"), hosts) as place:
        yield place


def _summary() -> str | None:
    """Where the hosts came from and how long installing them took (None: not asked for)."""
    programs = _INSTALL.get("programs")
    if programs is not None:
        how = (f"installed in {programs.install_seconds:.1f} s" if programs.install_seconds
               else "cache warm")
        return f"real hosts: {programs.root} ({how}; node {programs.node})"
    if "error" in _INSTALL:
        return f"real hosts unavailable: {_INSTALL['error']}"
    return None


def pytest_sessionfinish(session: pytest.Session) -> None:
    """In a pytest-xdist worker: hand the summary line to the controller (tests/conftest.py)."""
    line = _summary()
    workeroutput = getattr(session.config, "workeroutput", None)
    if line is not None and workeroutput is not None:
        workeroutput.setdefault("summary_lines", []).append(line)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """One line: where the hosts came from and how long installing them took."""
    line = _summary()
    if line is not None:
        terminalreporter.write_line(line)
