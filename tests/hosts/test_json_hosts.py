"""VS Code, Cursor and Gemini CLI: their documented files and key names, others kept."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from readingroom.catalog import SERVERS
from readingroom.core.platform import Machine
from readingroom.hosts import Action, ConfigParseError, build_entries
from readingroom.hosts.cursor import CursorHost
from readingroom.hosts.gemini import GeminiHost
from readingroom.hosts.vscode import VsCodeHost

NOW = datetime(2026, 9, 1, 8, 0, 0)

EXISTING = {
    VsCodeHost: {
        "inputs": [{"type": "promptString", "id": "gh-token", "password": True}],
        "servers": {"github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/"}},
    },
    CursorHost: {"mcpServers": {"linear": {"command": "npx", "args": ["-y", "linear-mcp"]}}},
    GeminiHost: {
        "theme": "GitHub",
        "selectedAuthType": "oauth-personal",
        "mcpServers": {"fs": {"command": "node", "args": ["fs.js"], "trust": True}},
    },
}
HOST_CLASSES = list(EXISTING)


@pytest.fixture
def ctx(tmp_path: Path) -> Machine:
    return Machine(home=tmp_path / "home", platform="linux", now=lambda: NOW)


def entries(ctx, install_dir, tmp_path):
    return build_entries(SERVERS.values(), install_dir, tmp_path / "data", ctx)


def seed(path: Path, value: dict, indent: int | str = 2) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=indent), encoding="utf-8")


def test_vscode_locations(tmp_path):
    win = Machine(home=tmp_path, appdata=tmp_path / "Roaming", platform="win32")
    assert VsCodeHost(win).candidate_paths() == [tmp_path / "Roaming" / "Code" / "User" /
                                                 "mcp.json"]
    mac = Machine(home=tmp_path, platform="darwin")
    assert VsCodeHost(mac).candidate_paths() == [
        tmp_path / "Library" / "Application Support" / "Code" / "User" / "mcp.json"]
    linux = Machine(home=tmp_path, platform="linux")
    assert VsCodeHost(linux).candidate_paths() == [tmp_path / ".config" / "Code" / "User" /
                                                   "mcp.json"]


def test_cursor_and_gemini_locations(tmp_path):
    for platform in ("win32", "darwin", "linux"):
        ctx = Machine(home=tmp_path, platform=platform)
        assert CursorHost(ctx).candidate_paths() == [tmp_path / ".cursor" / "mcp.json"]
        assert GeminiHost(ctx).candidate_paths() == [tmp_path / ".gemini" / "settings.json"]


@pytest.mark.parametrize("host_class", HOST_CLASSES, ids=lambda c: c.name)
def test_install_keeps_everything_else(ctx, install_dir, tmp_path, host_class):
    host = host_class(ctx)
    path = host.candidate_paths()[0]
    seed(path, EXISTING[host_class])
    outcome = host.install(entries(ctx, install_dir, tmp_path))
    assert outcome.ok and outcome.entries[0].action is Action.ADDED

    written = json.loads(path.read_text(encoding="utf-8"))
    key = host.servers_key
    original = EXISTING[host_class]
    assert {k: v for k, v in written.items() if k != key} == {
        k: v for k, v in original.items() if k != key}
    for name, value in original[key].items():
        assert written[key][name] == value
    ours = written[key]["ndl-mcp"]
    assert ours["command"] == str(install_dir / "ndl-mcp")
    assert ours["env"] == {"MCP_RECEIPT_LOG": str(tmp_path / "data" / "receipts.jsonl")}

    again = host.install(entries(ctx, install_dir, tmp_path))
    assert again.entries[0].action is Action.UNCHANGED
    assert len(list(path.parent.glob(path.name + ".bak-*"))) == 1

    assert host.verify(entries(ctx, install_dir, tmp_path)).ok
    assert host.remove(["ndl-mcp"]).entries[0].action is Action.REMOVED
    assert json.loads(path.read_text(encoding="utf-8")) == original


def test_entry_shapes(ctx, install_dir, tmp_path):
    wanted = entries(ctx, install_dir, tmp_path)[0]
    assert list(VsCodeHost(ctx).desired_value(wanted)) == ["type", "command", "args", "env"]
    assert VsCodeHost(ctx).desired_value(wanted)["type"] == "stdio"
    assert VsCodeHost.servers_key == "servers"
    assert list(CursorHost(ctx).desired_value(wanted)) == ["command", "args", "env"]
    assert CursorHost.servers_key == GeminiHost.servers_key == "mcpServers"
    assert GeminiHost(ctx).desired_value(wanted)["timeout"] == 120_000  # (90 + 30) s in ms


def test_vscode_file_with_comments_is_refused_untouched(ctx, install_dir, tmp_path):
    host = VsCodeHost(ctx)
    path = host.candidate_paths()[0]
    path.parent.mkdir(parents=True)
    jsonc = '{\n  // my servers\n  "servers": {}\n}\n'
    path.write_text(jsonc, encoding="utf-8")
    with pytest.raises(ConfigParseError, match="Comments and trailing commas"):
        host.install(entries(ctx, install_dir, tmp_path))
    assert path.read_text(encoding="utf-8") == jsonc
    assert list(path.parent.glob("*.bak-*")) == []


def test_the_files_own_indent_is_kept(ctx, install_dir, tmp_path):
    host = CursorHost(ctx)
    path = host.candidate_paths()[0]
    seed(path, EXISTING[CursorHost], indent=4)
    host.install(entries(ctx, install_dir, tmp_path))
    assert '\n    "mcpServers": {\n        "linear"' in path.read_text(encoding="utf-8")


def test_users_extra_keys_in_our_entry_survive_an_update(ctx, install_dir, tmp_path):
    host = GeminiHost(ctx)
    path = host.candidate_paths()[0]
    seed(path, {"mcpServers": {"ndl-mcp": {
        "command": str(install_dir / "ndl-mcp"), "trust": False, "timeout": 5000,
        "env": {"NDL_SRU_URL": "http://localhost:9/sru"}}}})
    outcome = host.install(entries(ctx, install_dir, tmp_path))
    assert outcome.entries[0].action is Action.UPDATED
    ours = json.loads(path.read_text(encoding="utf-8"))["mcpServers"]["ndl-mcp"]
    assert ours["trust"] is False and ours["timeout"] == 120_000
    assert ours["env"]["NDL_SRU_URL"] == "http://localhost:9/sru"
    assert ours["env"]["MCP_RECEIPT_LOG"] == str(tmp_path / "data" / "receipts.jsonl")


def test_an_empty_file_counts_as_an_empty_object(ctx, install_dir, tmp_path):
    host = CursorHost(ctx)
    path = host.candidate_paths()[0]
    path.parent.mkdir(parents=True)
    path.write_text("", encoding="utf-8")
    assert host.install(entries(ctx, install_dir, tmp_path)).ok
    assert "ndl-mcp" in json.loads(path.read_text(encoding="utf-8"))["mcpServers"]


@pytest.mark.parametrize("host_class", HOST_CLASSES, ids=lambda c: c.name)
def test_same_meaning_in_another_order_or_number_form_is_unchanged(ctx, install_dir, tmp_path,
                                                                   host_class):
    host = host_class(ctx)
    path = host.candidate_paths()[0]
    ours = host.desired_value(entries(ctx, install_dir, tmp_path)[0])
    reordered = dict(reversed(list(ours.items())))  # every key in the other order
    if "timeout" in reordered:
        reordered["timeout"] = float(reordered["timeout"])  # 120000.0, as JS may write it
    reordered["env"] = {"ZZ_MINE": "kept", **reordered["env"]}  # a user's variable first
    del reordered["args"]  # an absent args means no arguments
    seed(path, {host.servers_key: {"ndl-mcp": reordered}})
    before = path.read_bytes()

    outcome = host.install(entries(ctx, install_dir, tmp_path))

    assert outcome.entries[0].action is Action.UNCHANGED
    assert not outcome.files[0].written
    assert path.read_bytes() == before
    assert list(path.parent.glob(path.name + ".bak-*")) == []


def test_a_change_rewrites_only_what_differs(ctx, install_dir, tmp_path):
    host = GeminiHost(ctx)
    path = host.candidate_paths()[0]
    ours = host.desired_value(entries(ctx, install_dir, tmp_path)[0])
    seed(path, {"mcpServers": {"ndl-mcp": {"timeout": 120000.0, "command": ours["command"],
                                           "env": {"MCP_RECEIPT_LOG": "/old.jsonl"}}}})
    assert host.install(entries(ctx, install_dir, tmp_path)).entries[0].action is Action.UPDATED
    written = json.loads(path.read_text(encoding="utf-8"))["mcpServers"]["ndl-mcp"]
    assert written["env"] == ours["env"]
    assert "args" not in written  # meant the same already, so left as it was
    assert list(written) == ["timeout", "command", "env"]
