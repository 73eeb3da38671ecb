"""Attack: a read-only host config (``chmod 0444``, or Windows' read-only attribute) was
silently rewritten.

An atomic replace only needs the folder to be writable, so the file's own permission was
ignored and the user's "do not touch" was overridden. Now a read-only config is refused with a
message saying so and how to go on; nothing is written, no backup is made. A read-only file
that already holds our entry is fine: nothing needs writing.
"""

from __future__ import annotations

import os
import stat
from datetime import datetime
from pathlib import Path

import pytest

from readingroom.catalog import SERVERS
from readingroom.core.platform import Machine
from readingroom.hosts import Action, ConfigWriteError, build_entries
from readingroom.hosts.codex import CodexHost
from readingroom.hosts.cursor import CursorHost

NOW = datetime(2026, 9, 1, 9, 0, 0)


@pytest.mark.parametrize("host_class", [CursorHost, CodexHost], ids=lambda c: c.name)
def test_a_read_only_config_is_refused_untouched(tmp_path: Path, host_class):
    install = tmp_path / "install"
    install.mkdir()
    (install / "ndl-mcp").write_text("#!/bin/sh\n")
    ctx = Machine(home=tmp_path / "home", platform="linux", now=lambda: NOW)
    host = host_class(ctx)
    path = host.candidate_paths()[0]
    path.parent.mkdir(parents=True)
    path.write_text("{}\n" if host_class is CursorHost else 'model = "gpt-5"\n',
                    encoding="utf-8")
    before = path.read_bytes()
    entries = build_entries([SERVERS["ndl-mcp"]], install, tmp_path / "data", ctx)
    os.chmod(path, stat.S_IREAD)  # 0444; the read-only attribute on Windows
    try:
        mode = path.stat().st_mode
        with pytest.raises(ConfigWriteError, match="read-only; not changed"):
            host.install(entries)
        assert path.read_bytes() == before
        assert path.stat().st_mode == mode
        assert [p.name for p in path.parent.iterdir() if not p.name.startswith(".")] == [
            path.name]  # no backup
        assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]

        os.chmod(path, stat.S_IREAD | stat.S_IWRITE)
        assert host.install(entries).entries[0].action is Action.ADDED
        os.chmod(path, stat.S_IREAD)
        assert host.install(entries).entries[0].action is Action.UNCHANGED  # nothing to write
        with pytest.raises(ConfigWriteError, match="read-only"):
            host.remove(["ndl-mcp"])
    finally:
        os.chmod(path, stat.S_IREAD | stat.S_IWRITE)
