"""Attack: a concurrent writer's changes to a host config were lost.

While install and remove ran in a loop, another process added 300 servers to the same
``mcp.json``; 2 of its 300 writes were gone at the end: install had read the file before the
other write and replaced it after. Now an edit (a) holds the config's lock (``.<name>.lock``
beside it), so another readingroom waits its turn, and (b) replaces the file only while it
still holds what was read, so a program that does not take the lock (the host itself) is not
overwritten either: the edit is redone on the new text, and after ``EDIT_ATTEMPTS`` refused.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from datetime import datetime
from pathlib import Path

import pytest

from readingroom.catalog import SERVERS
from readingroom.core.platform import Machine
from readingroom.hosts import Action, ConfigWriteError, build_entries
from readingroom.hosts.cursor import CursorHost

# Starts real server or command processes: left out of the quick tier (tests/conftest.py).
pytestmark = pytest.mark.stdio

NOW = datetime(2026, 9, 1, 9, 0, 0)
APPENDS = 300

# A second writer that shares our lock, as a second readingroom (or the installer) would.
APPENDER = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    from readingroom.core.files import write_atomically
    from readingroom.hosts.files import config_lock
    path = Path(sys.argv[1])
    for i in range(int(sys.argv[2])):
        with config_lock([path]):
            doc = json.loads(path.read_text(encoding="utf-8"))
            doc["mcpServers"][f"other-{i}"] = {"command": "npx", "args": [str(i)]}
            write_atomically(path, json.dumps(doc, indent=2) + "\\n")
""")


def _setup(tmp_path: Path, now=lambda: NOW):
    install = tmp_path / "install"
    install.mkdir()
    (install / "ndl-mcp").write_text("#!/bin/sh\n")
    ctx = Machine(home=tmp_path / "home", platform="linux", now=now)
    host = CursorHost(ctx)
    path = host.candidate_paths()[0]
    path.parent.mkdir(parents=True)
    path.write_text('{"mcpServers": {}}\n', encoding="utf-8")
    return host, path, build_entries([SERVERS["ndl-mcp"]], install, tmp_path / "data", ctx)


def _servers(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))["mcpServers"]


def test_a_concurrent_writer_process_loses_nothing(tmp_path: Path):
    host, path, entries = _setup(tmp_path)
    appender = subprocess.Popen([sys.executable, "-c", APPENDER, str(path), str(APPENDS)])
    cycles = 0
    try:
        # Install and remove for as long as the other process writes (bounded by the cycles).
        while appender.poll() is None and cycles < 5_000:
            assert host.install(entries).ok
            assert host.remove(["ndl-mcp"]).ok
            cycles += 1
        assert appender.wait(timeout=120) == 0
    finally:
        appender.kill()
    assert cycles > 0
    assert host.install(entries).ok
    servers = _servers(path)
    lost = [i for i in range(APPENDS) if f"other-{i}" not in servers]
    assert lost == [], f"{len(lost)} of {APPENDS} concurrent writes lost"
    assert "ndl-mcp" in servers


def test_a_writer_that_ignores_the_lock_is_not_overwritten(tmp_path: Path):
    path_box: list[Path] = []

    def clock_that_lets_the_host_write() -> datetime:
        # Called to name the backup: after our read, before our replace. The host writes now.
        path = path_box[0]
        doc = json.loads(path.read_text(encoding="utf-8"))
        if "host-added" not in doc["mcpServers"]:
            doc["mcpServers"]["host-added"] = {"command": "uvx", "args": ["x"]}
            path.write_text(json.dumps(doc), encoding="utf-8")
        return NOW

    host, path, entries = _setup(tmp_path, now=clock_that_lets_the_host_write)
    path_box.append(path)

    outcome = host.install(entries)

    assert outcome.ok and outcome.entries[0].action is Action.ADDED
    servers = _servers(path)
    assert "host-added" in servers, "the host's own write was overwritten"
    assert "ndl-mcp" in servers
    backups = list(path.parent.glob(path.name + ".bak-*"))
    assert len(backups) == 1 and "host-added" in backups[0].read_text(encoding="utf-8")


def test_a_writer_that_never_stops_is_refused_after_a_few_attempts(tmp_path: Path):
    path_box: list[Path] = []
    writes = []

    def clock_of_a_busy_host() -> datetime:
        writes.append(1)
        path_box[0].write_text(json.dumps({"mcpServers": {f"h{len(writes)}": {}}}),
                               encoding="utf-8")
        return NOW

    host, path, entries = _setup(tmp_path, now=clock_of_a_busy_host)
    path_box.append(path)

    with pytest.raises(ConfigWriteError, match="another program changed it"):
        host.install(entries)

    assert 1 < len(writes) <= 10  # retried, and bounded
    assert _servers(path) == {f"h{len(writes)}": {}}  # the host's last write stands
    leftovers = [p.name for p in path.parent.iterdir()
                 if p.name != path.name and not p.name.endswith(".lock")]
    assert leftovers == []  # no backup of a replace that did not happen, no temp file
