"""Every file install-host writes for Claude Desktop, VS Code and Cursor has the documented shape.

No headless program of these hosts reads its file, and none publishes a JSON Schema, so the
check is against the documented shape (the schemas beside this file, each naming its source),
for every server of the catalogue, next to entries of the user's own that must survive.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import jsonschema
import pytest

from readingroom.catalog import SERVERS
from readingroom.core.platform import Machine
from readingroom.hosts import build_entries
from readingroom.hosts.claude_desktop import ClaudeDesktopHost
from readingroom.hosts.cursor import CursorHost
from readingroom.hosts.vscode import VsCodeHost

HERE = Path(__file__).resolve().parent
NOW = datetime(2026, 9, 1, 8, 0, 0)

CASES = {
    ClaudeDesktopHost: ("claude_desktop.schema.json",
                        {"mcpServers": {"files": {"command": "npx", "args": ["-y", "fs-mcp"]}},
                         "globalShortcut": "Ctrl+Space"}),
    VsCodeHost: ("vscode.schema.json",
                 {"inputs": [{"type": "promptString", "id": "tok", "password": True}],
                  "servers": {"github": {"type": "http",
                                         "url": "https://api.githubcopilot.com/mcp/"}}}),
    CursorHost: ("cursor.schema.json",
                 {"mcpServers": {"linear": {"url": "https://mcp.linear.app/sse"}}}),
}


def _schema(name: str) -> dict:
    schema = json.loads((HERE / name).read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return schema


@pytest.fixture
def machine(tmp_path: Path) -> Machine:
    return Machine(home=tmp_path / "home", platform="linux", now=lambda: NOW)


@pytest.fixture
def install_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "install"
    folder.mkdir()
    for name in SERVERS:
        exe = folder / name
        exe.write_text("#!/bin/sh\n")
        exe.chmod(0o755)
    return folder


@pytest.mark.parametrize("host_class", list(CASES), ids=lambda c: c.name)
def test_written_file_has_the_documented_shape(host_class, machine, install_dir, tmp_path):
    schema_name, existing = CASES[host_class]
    host = host_class(machine)
    path = host.candidate_paths()[0]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(existing, indent=2), encoding="utf-8")
    entries = build_entries(SERVERS.values(), install_dir, tmp_path / "data", machine)
    assert host.install(entries).ok
    written = json.loads(path.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(_schema(schema_name)).validate(written)
    servers = written[host.servers_key]
    assert set(SERVERS) <= set(servers)
    for name, value in existing[host.servers_key].items():
        assert servers[name] == value  # the user's entries survive


@pytest.mark.parametrize("host_class", list(CASES), ids=lambda c: c.name)
def test_the_shape_check_can_fail(host_class):
    schema_name, _ = CASES[host_class]
    key = "servers" if host_class is VsCodeHost else "mcpServers"
    broken = {key: {"ndl-mcp": {"type": "stdio", "command": "", "env": {"N": 1}}}}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(_schema(schema_name)).validate(broken)
