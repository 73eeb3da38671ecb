"""Attack: a CRLF ``config.toml`` (written on Windows) came back with mixed line endings.

tomlkit keeps the file's own lines as they were (CRLF) and writes the table it adds with LF,
so the file ended up half CRLF, half LF. Now the lines written keep the file's own line ending,
for TOML and JSON: a CRLF file stays CRLF throughout, an LF file stays LF, and an install and
remove give a CRLF ``config.toml`` back byte for byte.
"""

from __future__ import annotations

import json
import re
import tomllib
from datetime import datetime
from pathlib import Path

from readingroom.catalog import SERVERS
from readingroom.core.platform import Machine
from readingroom.hosts import Action, build_entries
from readingroom.hosts.codex import CodexHost
from readingroom.hosts.cursor import CursorHost

NOW = datetime(2026, 9, 1, 9, 0, 0)

CRLF_TOML = (
    b'# my settings\r\nmodel = "gpt-5"\r\nnotes = """\r\ntwo\r\nlines"""\r\n\r\n'
    b'[mcp_servers.zotero]\r\ncommand = "/opt/zotero"\r\n\r\n[profiles.fast]\r\nmodel = "mini"\r\n'
)


def _setup(tmp_path: Path, host_class):
    install = tmp_path / "install"
    install.mkdir(parents=True)
    (install / "ndl-mcp").write_text("#!/bin/sh\n")
    ctx = Machine(home=tmp_path / "home", platform="linux", now=lambda: NOW)
    host = host_class(ctx)
    path = host.candidate_paths()[0]
    path.parent.mkdir(parents=True)
    return host, path, build_entries([SERVERS["ndl-mcp"]], install, tmp_path / "data", ctx)


def _bare_lf(data: bytes) -> int:
    return len(re.findall(rb"(?<!\r)\n", data))


def test_crlf_toml_stays_crlf_and_round_trips(tmp_path: Path):
    host, path, entries = _setup(tmp_path, CodexHost)
    path.write_bytes(CRLF_TOML)

    assert host.install(entries).entries[0].action is Action.ADDED
    written = path.read_bytes()
    assert _bare_lf(written) == 0, "mixed line endings"
    values = tomllib.loads(written.decode("utf-8"))
    assert "ndl-mcp" in values["mcp_servers"] and values["notes"] == "two\nlines"

    assert host.install(entries).entries[0].action is Action.UNCHANGED
    assert host.remove(["ndl-mcp"]).entries[0].action is Action.REMOVED
    assert path.read_bytes() == CRLF_TOML


def test_crlf_json_stays_crlf(tmp_path: Path):
    host, path, entries = _setup(tmp_path, CursorHost)
    path.write_bytes(b'{\r\n  "mcpServers": {\r\n    "linear": {\r\n      "command": "npx"\r\n'
                     b'    }\r\n  }\r\n}\r\n')

    assert host.install(entries).entries[0].action is Action.ADDED
    written = path.read_bytes()
    assert _bare_lf(written) == 0 and written.count(b"\r\n") > 7
    assert set(json.loads(written)["mcpServers"]) == {"linear", "ndl-mcp"}


def test_lf_files_stay_lf(tmp_path: Path):
    for host_class, text in ((CodexHost, b'model = "gpt-5"\n'), (CursorHost, b"{}\n")):
        host, path, entries = _setup(tmp_path / host_class.name, host_class)
        path.write_bytes(text)
        assert host.install(entries).ok
        assert b"\r" not in path.read_bytes()
