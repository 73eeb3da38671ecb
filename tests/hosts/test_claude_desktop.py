"""Claude Desktop: every location (classic and MSIX), other servers and keys kept, no BOM."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from readingroom.catalog import SERVERS
from readingroom.core.platform import Machine
from readingroom.hosts import Action, ConfigParseError, build_entries
from readingroom.hosts.claude_desktop import CONFIG_NAME, ClaudeDesktopHost

NOW = datetime(2026, 9, 1, 8, 0, 0)

OTHERS = {
    "globalShortcut": "Ctrl+Space",
    "mcpServers": {
        "filesystem": {
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-filesystem", "C:\\Users\\alice\\Desktop"],
        },
        "zotero": {"command": "/opt/zotero-mcp", "env": {"ZOTERO_LOCAL": "1"}},
    },
    "preferences": {"sidebarMode": "chat", "日本語": "はい"},
}


@pytest.fixture
def install_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "install"
    folder.mkdir()
    for name in ("ndl-mcp", "ndl-mcp.exe"):
        exe = folder / name
        exe.write_text("#!/bin/sh\n")
        exe.chmod(0o755)
    return folder


def linux_ctx(tmp_path: Path) -> Machine:
    return Machine(home=tmp_path / "home", platform="linux", now=lambda: NOW)


def windows_ctx(tmp_path: Path) -> Machine:
    return Machine(home=tmp_path / "home", appdata=tmp_path / "Roaming",
                   localappdata=tmp_path / "Local", platform="win32", now=lambda: NOW)


def entries(ctx, install_dir, data_dir):
    return build_entries(SERVERS.values(), install_dir, data_dir, ctx)


def write_json(path: Path, value, *, bom: bool = False) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(value, indent=2, ensure_ascii=False)
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8"))
    return text


def read_json(path: Path):
    raw = path.read_bytes()
    assert not raw.startswith(b"\xef\xbb\xbf")
    return json.loads(raw.decode("utf-8"))


def backups(path: Path) -> list[Path]:
    return sorted(path.parent.glob(path.name + ".bak-*"))


def test_locations_per_platform(tmp_path):
    assert ClaudeDesktopHost(linux_ctx(tmp_path)).candidate_paths() == [
        tmp_path / "home" / ".config" / "Claude" / CONFIG_NAME]
    xdg = Machine(home=tmp_path, env={"XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    assert ClaudeDesktopHost(xdg).classic_path() == tmp_path / "xdg" / "Claude" / CONFIG_NAME
    mac = Machine(home=tmp_path, platform="darwin")
    assert ClaudeDesktopHost(mac).candidate_paths() == [
        tmp_path / "Library" / "Application Support" / "Claude" / CONFIG_NAME]
    assert ClaudeDesktopHost(windows_ctx(tmp_path)).candidate_paths() == [
        tmp_path / "Roaming" / "Claude" / CONFIG_NAME]


def test_other_servers_and_keys_come_through_intact(tmp_path, install_dir):
    ctx = linux_ctx(tmp_path)
    path = ClaudeDesktopHost(ctx).classic_path()
    write_json(path, OTHERS)
    outcome = ClaudeDesktopHost(ctx).install(entries(ctx, install_dir, tmp_path / "data"))

    assert outcome.ok and [e.action for e in outcome.entries] == [Action.ADDED]
    written = read_json(path)
    assert list(written) == list(OTHERS)
    assert written["globalShortcut"] == OTHERS["globalShortcut"]
    assert written["preferences"] == OTHERS["preferences"]
    for name, value in OTHERS["mcpServers"].items():
        assert written["mcpServers"][name] == value
    assert written["mcpServers"]["ndl-mcp"] == {
        "command": str(install_dir / "ndl-mcp"),
        "args": [],
        "env": {"MCP_RECEIPT_LOG": str(tmp_path / "data" / "receipts.jsonl"),
                "READINGROOM_TOOL_DEADLINE": "50"},
    }
    assert "はい" in path.read_text(encoding="utf-8")  # not \u-escaped


def test_install_twice_is_unchanged_and_makes_no_new_backup(tmp_path, install_dir):
    ctx = linux_ctx(tmp_path)
    host = ClaudeDesktopHost(ctx)
    path = host.classic_path()
    write_json(path, OTHERS)
    host.install(entries(ctx, install_dir, tmp_path / "data"))
    first = path.read_bytes()
    again = host.install(entries(ctx, install_dir, tmp_path / "data"))
    assert [e.action for e in again.entries] == [Action.UNCHANGED]
    assert path.read_bytes() == first
    assert len(backups(path)) == 1
    assert list(read_json(path)["mcpServers"]).count("ndl-mcp") == 1


def test_a_bom_is_tolerated_on_read_and_removed_on_write(tmp_path, install_dir):
    ctx = linux_ctx(tmp_path)
    host = ClaudeDesktopHost(ctx)
    path = host.classic_path()
    write_json(path, OTHERS, bom=True)
    wanted = entries(ctx, install_dir, tmp_path / "data")
    before = host.verify(wanted)
    assert any("byte-order mark" in p for f in before.files for p in f.problems)

    outcome = host.install(wanted)
    assert "removed a UTF-8 byte-order mark" in outcome.files[0].notes
    written = read_json(path)  # asserts no BOM
    assert written["mcpServers"]["zotero"] == OTHERS["mcpServers"]["zotero"]
    assert backups(path)[0].read_bytes().startswith(b"\xef\xbb\xbf")
    assert host.verify(wanted).ok


def test_unparsable_file_is_refused_untouched_without_backup(tmp_path, install_dir):
    ctx = linux_ctx(tmp_path)
    host = ClaudeDesktopHost(ctx)
    path = host.classic_path()
    path.parent.mkdir(parents=True)
    broken = '{"mcpServers": {"zotero": {"command": "x",}}}'
    path.write_text(broken, encoding="utf-8")
    with pytest.raises(ConfigParseError, match="line 1, column"):
        host.install(entries(ctx, install_dir, tmp_path / "data"))
    assert path.read_text(encoding="utf-8") == broken
    assert backups(path) == []


@pytest.mark.parametrize("text, message", [
    ('{"mcpServers": {}, "mcpServers": {}}', "duplicate key"),
    ('["not", "an", "object"]', "top level is not an object"),
    ('{"mcpServers": []}', "not a table of servers"),
])
def test_wrong_shapes_are_refused(tmp_path, install_dir, text, message):
    ctx = linux_ctx(tmp_path)
    path = ClaudeDesktopHost(ctx).classic_path()
    path.parent.mkdir(parents=True)
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigParseError, match=message):
        ClaudeDesktopHost(ctx).install(entries(ctx, install_dir, tmp_path / "data"))
    assert path.read_text(encoding="utf-8") == text


def msix_dir(tmp_path: Path, package: str = "Claude_pzs8sxrjxfjjc") -> Path:
    folder = tmp_path / "Local" / "Packages" / package / "LocalCache" / "Roaming" / "Claude"
    folder.mkdir(parents=True)
    return folder


def test_msix_and_classic_locations_are_both_written(tmp_path, install_dir):
    ctx = windows_ctx(tmp_path)
    classic = tmp_path / "Roaming" / "Claude" / CONFIG_NAME
    write_json(classic, OTHERS)
    msix = msix_dir(tmp_path) / CONFIG_NAME
    write_json(msix, {"mcpServers": {"other": {"command": "x.exe"}}})
    (tmp_path / "Local" / "Packages" / "NotClaude_123").mkdir()

    host = ClaudeDesktopHost(ctx)
    assert host.target_paths() == [classic, msix]
    outcome = host.install(entries(ctx, install_dir, tmp_path / "data"))
    assert [f.path for f in outcome.files] == [classic, msix]
    for path in (classic, msix):
        assert "ndl-mcp" in read_json(path)["mcpServers"]
    assert read_json(msix)["mcpServers"]["other"] == {"command": "x.exe"}
    assert len(host.verify(entries(ctx, install_dir, tmp_path / "data")).files) == 2

    host.remove(["ndl-mcp"])
    assert "ndl-mcp" not in read_json(classic)["mcpServers"]
    assert "ndl-mcp" not in read_json(msix)["mcpServers"]


def test_msix_only_writes_the_package_location_and_creates_no_classic_file(tmp_path,
                                                                          install_dir):
    ctx = windows_ctx(tmp_path)
    folder = msix_dir(tmp_path)
    outcome = ClaudeDesktopHost(ctx).install(entries(ctx, install_dir, tmp_path / "data"))
    assert [f.path for f in outcome.files] == [folder / CONFIG_NAME]
    assert not (tmp_path / "Roaming" / "Claude").exists()
    entry = read_json(folder / CONFIG_NAME)["mcpServers"]["ndl-mcp"]
    assert entry["command"].endswith("ndl-mcp.exe")


def test_no_claude_folder_creates_the_classic_file(tmp_path, install_dir):
    ctx = windows_ctx(tmp_path)
    ClaudeDesktopHost(ctx).install(entries(ctx, install_dir, tmp_path / "data"))
    assert (tmp_path / "Roaming" / "Claude" / CONFIG_NAME).is_file()


def test_one_broken_location_leaves_every_location_untouched(tmp_path, install_dir):
    ctx = windows_ctx(tmp_path)
    classic = tmp_path / "Roaming" / "Claude" / CONFIG_NAME
    original = write_json(classic, OTHERS)
    msix = msix_dir(tmp_path) / CONFIG_NAME
    msix.write_text("{broken", encoding="utf-8")
    with pytest.raises(ConfigParseError):
        ClaudeDesktopHost(ctx).install(entries(ctx, install_dir, tmp_path / "data"))
    assert classic.read_text(encoding="utf-8") == original
    assert backups(classic) == [] and backups(msix) == []


def test_remove_only_ours(tmp_path, install_dir):
    ctx = linux_ctx(tmp_path)
    host = ClaudeDesktopHost(ctx)
    path = host.classic_path()
    write_json(path, OTHERS)
    host.install(entries(ctx, install_dir, tmp_path / "data"))
    outcome = host.remove(["ndl-mcp"])
    assert [e.action for e in outcome.entries] == [Action.REMOVED]
    assert read_json(path) == OTHERS


def test_foreign_entry_of_our_name_is_kept(tmp_path, install_dir):
    ctx = linux_ctx(tmp_path)
    host = ClaudeDesktopHost(ctx)
    path = host.classic_path()
    foreign = {"mcpServers": {"ndl-mcp": {"command": "uvx", "args": ["ndl-mcp"]}}}
    write_json(path, foreign)
    assert host.install(entries(ctx, install_dir, tmp_path / "data")).entries[0].action \
        is Action.FOREIGN
    assert host.remove(["ndl-mcp"]).entries[0].action is Action.FOREIGN
    assert read_json(path) == foreign
    assert host.remove(["ndl-mcp"], force=True).entries[0].action is Action.REMOVED


def test_verify_fails_when_the_executable_is_missing(tmp_path, install_dir):
    ctx = linux_ctx(tmp_path)
    host = ClaudeDesktopHost(ctx)
    wanted = entries(ctx, install_dir, tmp_path / "data")
    assert host.verify(wanted).entries[0].action is Action.MISSING
    host.install(wanted)
    assert host.verify(wanted).ok
    (install_dir / "ndl-mcp").unlink()
    result = host.verify(wanted)
    assert not result.ok and result.entries[0].action is Action.BROKEN
