"""Stale entries: an install folder moved or deleted is repaired, another program is not.

Every host kind: the four file hosts in JSON, Codex in the shape Codex itself writes, and Claude
Code through its CLI (an injected runner; its state file only read).
"""

from __future__ import annotations

import json
import subprocess
import tomllib
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

import pytest

from readingroom.catalog import SERVERS
from readingroom.cli import build_parser
from readingroom.core.platform import Machine
from readingroom.hosts import HOSTS, Action, build_entries
from readingroom.hosts.claude_code import ClaudeCodeHost
from readingroom.hosts.codex import CodexHost
from readingroom.hosts.entries import repair_reason
from readingroom.hosts.host import FileHost

NOW = datetime(2026, 9, 2, 10, 0, 0)
CLAUDE = "/usr/local/bin/claude"
FILE_HOSTS = [name for name in HOSTS if name != "claude-code"]


class Runner:
    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def __call__(self, argv: Sequence[str]) -> subprocess.CompletedProcess[str]:
        self.calls.append(list(argv))
        return subprocess.CompletedProcess(list(argv), 0, "", "")


@pytest.fixture
def runner() -> Runner:
    return Runner()


@pytest.fixture
def ctx(tmp_path: Path, runner: Runner) -> Machine:
    return Machine(home=tmp_path / "home", platform="linux", now=lambda: NOW,
                   env={"GEMINI_CLI_SYSTEM_SETTINGS_PATH": str(tmp_path / "no-system.json")},
                   which=lambda name: CLAUDE if name == "claude" else None, run=runner)


def wanted(ctx: Machine, install_dir: Path, tmp_path: Path):
    return build_entries(SERVERS.values(), install_dir, tmp_path / "data", ctx)


def old_install(tmp_path: Path, *, keep: bool) -> Path:
    """An earlier install folder: ``ndl-mcp`` beside ``readingroom``; deleted unless ``keep``."""
    folder = tmp_path / "old-install"
    folder.mkdir()
    for name in ("ndl-mcp", "readingroom"):
        (folder / name).write_text("#!/bin/sh\n")
        (folder / name).chmod(0o755)
    if not keep:
        for child in folder.iterdir():
            child.unlink()
        folder.rmdir()
    return folder


def seed(host: FileHost, entry: dict) -> Path:
    """The host's file holding one ``ndl-mcp`` entry (and another server), as the host writes it."""
    path = host.candidate_paths()[0]
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(host, CodexHost):
        lines = ["[mcp_servers.zotero]", 'command = "/opt/zotero-mcp"', "",
                 "[mcp_servers.ndl-mcp]"]
        lines += [f"{k} = {json.dumps(v)}" for k, v in entry.items() if k != "env"]
        if "env" in entry:
            lines += ["", "[mcp_servers.ndl-mcp.env]"]
            lines += [f"{k} = {json.dumps(v)}" for k, v in entry["env"].items()]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    else:
        doc = {host.servers_key: {"zotero": {"command": "/opt/zotero-mcp"}, "ndl-mcp": entry}}
        path.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    return path


def read_entry(host: FileHost, path: Path) -> dict:
    text = path.read_text(encoding="utf-8")
    doc = tomllib.loads(text) if isinstance(host, CodexHost) else json.loads(text)
    assert "zotero" in doc[host.servers_key]  # the other server is kept
    return doc[host.servers_key]["ndl-mcp"]


def backups(path: Path) -> list[Path]:
    return sorted(path.parent.glob(path.name + ".bak-*"))


# -- the rule -----------------------------------------------------------------------------------


def test_repair_reason_names_each_stale_case_and_nothing_else(tmp_path):
    current = str(tmp_path / "new" / "ndl-mcp")
    gone = str(tmp_path / "gone" / "ndl-mcp")
    assert "no longer exists" in repair_reason("ndl-mcp", gone, current)
    other_install = old_install(tmp_path, keep=True) / "ndl-mcp"
    assert "another folder" in repair_reason("ndl-mcp", str(other_install), current)
    assert "no longer exists" in repair_reason("ndl-mcp", str(tmp_path / "gone" / "python"),
                                               current)
    assert repair_reason("ndl-mcp", current, current) is None
    existing_other = tmp_path / "someone-elses-ndl"
    existing_other.write_text("x")
    assert repair_reason("ndl-mcp", str(existing_other), current) is None
    assert repair_reason("ndl-mcp", "npx", current) is None  # the host's PATH, not ours
    assert repair_reason("ndl-mcp", "", current) is None
    assert repair_reason("ndl-mcp", None, current) is None


def test_on_windows_paths_compare_without_case_or_slash_differences():
    wanted_exe = "C:\\Users\\Alice\\AppData\\Local\\Programs\\ReadingRoom\\ndl-mcp.exe"
    same = "c:/users/alice/appdata/local/programs/readingroom/NDL-MCP.EXE"
    assert repair_reason("ndl-mcp", same, wanted_exe, windows=True) is None
    moved = "D:/Portable/ReadingRoom/ndl-mcp.exe"
    assert "no longer exists" in repair_reason("ndl-mcp", moved, wanted_exe, windows=True)
    old_python = "C:\\Old\\venv\\Scripts\\python.exe"
    assert "no longer exists" in repair_reason("ndl-mcp", old_python, wanted_exe, windows=True)


# -- file hosts ---------------------------------------------------------------------------------


@pytest.mark.parametrize("host_name", FILE_HOSTS)
def test_our_entry_in_a_deleted_install_folder_is_repaired(host_name, ctx, install_dir,
                                                           tmp_path):
    host = HOSTS[host_name](ctx)
    assert isinstance(host, FileHost)
    gone = old_install(tmp_path, keep=False) / "ndl-mcp"
    path = seed(host, {"command": str(gone), "enabled_tools": ["ndl_search_books"],
                       "env": {"MCP_RECEIPT_LOG": "/old/receipts.jsonl"}})
    before = path.read_bytes()
    entries = wanted(ctx, install_dir, tmp_path)
    assert not host.verify(entries).ok

    outcome = host.install(entries)

    assert outcome.ok
    [result] = outcome.entries
    assert result.action is Action.REPAIRED
    assert str(gone) in result.detail and "no longer exists" in result.detail
    assert f"ndl-mcp: repaired - pointed at {gone}" in outcome.render()
    entry = read_entry(host, path)
    assert entry["command"] == str(install_dir / "ndl-mcp")
    assert entry["env"]["MCP_RECEIPT_LOG"] == str(tmp_path / "data" / "receipts.jsonl")
    assert entry["enabled_tools"] == ["ndl_search_books"]  # the user's key in our entry
    [backup] = backups(path)
    assert backup.read_bytes() == before
    assert host.verify(entries).ok
    assert host.install(entries).entries[0].action is Action.UNCHANGED
    assert len(backups(path)) == 1


@pytest.mark.parametrize("host_name", FILE_HOSTS)
def test_our_executable_in_another_install_folder_is_repaired(host_name, ctx, install_dir,
                                                              tmp_path):
    host = HOSTS[host_name](ctx)
    assert isinstance(host, FileHost)
    elsewhere = old_install(tmp_path, keep=True) / "ndl-mcp"
    path = seed(host, {"command": str(elsewhere), "args": []})
    outcome = host.install(wanted(ctx, install_dir, tmp_path))
    assert outcome.entries[0].action is Action.REPAIRED
    assert "another folder" in outcome.entries[0].detail
    assert read_entry(host, path)["command"] == str(install_dir / "ndl-mcp")
    assert len(backups(path)) == 1


@pytest.mark.parametrize("host_name", FILE_HOSTS)
def test_a_missing_program_of_another_name_is_replaced_anew(host_name, ctx, install_dir,
                                                            tmp_path):
    host = HOSTS[host_name](ctx)
    assert isinstance(host, FileHost)
    gone_python = str(tmp_path / "deleted-venv" / "bin" / "python")
    path = seed(host, {"command": gone_python, "args": ["-m", "readingroom.ndl"],
                       "env": {"PYTHONPATH": "/deleted"}})
    outcome = host.install(wanted(ctx, install_dir, tmp_path))
    assert outcome.entries[0].action is Action.REPAIRED
    entry = read_entry(host, path)
    assert entry["command"] == str(install_dir / "ndl-mcp")
    assert entry.get("args", []) == []
    assert "PYTHONPATH" not in entry["env"]  # nothing of the old program is carried over


@pytest.mark.parametrize("host_name", FILE_HOSTS)
def test_another_existing_program_is_still_left_alone(host_name, ctx, install_dir, tmp_path):
    host = HOSTS[host_name](ctx)
    assert isinstance(host, FileHost)
    other = tmp_path / "opt" / "ndl-search-server"
    other.parent.mkdir()
    other.write_text("#!/bin/sh\n")
    for command in (str(other), "npx"):
        path = seed(host, {"command": command, "args": ["--x"]})
        before = path.read_bytes()
        outcome = host.install(wanted(ctx, install_dir, tmp_path))
        assert outcome.entries[0].action is Action.FOREIGN
        assert "--force replaces it" in outcome.entries[0].detail
        assert not outcome.ok
        assert path.read_bytes() == before and backups(path) == []
        assert host.verify(wanted(ctx, install_dir, tmp_path)).entries[0].action \
            is Action.FOREIGN
    forced = host.install(wanted(ctx, install_dir, tmp_path), force=True)
    assert forced.entries[0].action is Action.UPDATED


@pytest.mark.parametrize("host_name", FILE_HOSTS)
def test_verify_says_a_stale_entry_is_broken_and_how_to_repair(host_name, ctx, install_dir,
                                                               tmp_path):
    host = HOSTS[host_name](ctx)
    assert isinstance(host, FileHost)
    seed(host, {"command": str(tmp_path / "deleted-venv" / "bin" / "python")})
    [result] = host.verify(wanted(ctx, install_dir, tmp_path)).entries
    assert result.action is Action.BROKEN
    assert "no longer exists" in result.detail and "--install-dir" in result.detail


def test_windows_codex_entry_in_a_moved_folder_is_repaired_with_forward_slashes(tmp_path):
    ctx = Machine(home=tmp_path / "home", platform="win32", now=lambda: NOW)
    host = CodexHost(ctx)
    path = seed(host, {"command": "D:/Portable/ReadingRoom/ndl-mcp.exe", "args": []})
    install = "C:\\Users\\alice\\AppData\\Local\\Programs\\ReadingRoom"
    outcome = host.install(build_entries(SERVERS.values(), install, "C:\\Users\\alice\\RR", ctx))
    assert outcome.entries[0].action is Action.REPAIRED
    assert read_entry(host, path)["command"] == \
        "C:/Users/alice/AppData/Local/Programs/ReadingRoom/ndl-mcp.exe"


# -- Claude Code (through its CLI) --------------------------------------------------------------


def claude_state(tmp_path: Path, entry: dict) -> Path:
    path = tmp_path / "home" / ".claude.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"numStartups": 4, "mcpServers": {"ndl-mcp": entry}}),
                    encoding="utf-8")
    return path


@pytest.mark.parametrize("command_of", [
    lambda tmp: str(old_install(tmp, keep=False) / "ndl-mcp"),
    lambda tmp: str(old_install(tmp, keep=True) / "ndl-mcp"),
    lambda tmp: str(tmp / "deleted-venv" / "bin" / "python"),
], ids=["deleted-folder", "other-install", "missing-other-program"])
def test_claude_code_stale_entry_is_removed_and_added(command_of, ctx, runner, install_dir,
                                                      tmp_path):
    command = command_of(tmp_path)
    path = claude_state(tmp_path, {"type": "stdio", "command": command, "args": [], "env": {}})
    before = path.read_bytes()
    host = ClaudeCodeHost(ctx)
    # An entry whose program is there still runs; verify fails only on a missing one.
    assert host.verify(wanted(ctx, install_dir, tmp_path)).ok is Path(command).is_file()

    outcome = host.install(wanted(ctx, install_dir, tmp_path))

    [result] = outcome.entries
    assert result.action is Action.REPAIRED and command in result.detail
    assert outcome.ok
    assert runner.calls[0] == [CLAUDE, "mcp", "remove", "--scope", "user", "ndl-mcp"]
    assert runner.calls[1][:3] == [CLAUDE, "mcp", "add"]
    assert runner.calls[1][-1] == str(install_dir / "ndl-mcp")
    assert path.read_bytes() == before  # the state file is never written by us


def test_claude_code_leaves_another_existing_program_alone(ctx, runner, install_dir, tmp_path):
    other = tmp_path / "ndl-search-server"
    other.write_text("#!/bin/sh\n")
    claude_state(tmp_path, {"type": "stdio", "command": str(other), "args": []})
    outcome = ClaudeCodeHost(ctx).install(wanted(ctx, install_dir, tmp_path))
    assert outcome.entries[0].action is Action.FOREIGN
    assert runner.calls == []


def test_claude_code_without_its_cli_prints_the_repair(tmp_path, install_dir):
    ctx = Machine(home=tmp_path / "home", platform="linux", which=lambda _n: None, run=Runner())
    claude_state(tmp_path, {"type": "stdio", "command": str(tmp_path / "gone" / "ndl-mcp")})
    outcome = ClaudeCodeHost(ctx).install(wanted(ctx, install_dir, tmp_path))
    [result] = outcome.entries
    assert result.action is Action.PRINTED
    assert result.detail.startswith("claude mcp remove --scope user ndl-mcp && claude mcp add")


# -- the command --------------------------------------------------------------------------------


@pytest.mark.parametrize("host_name", FILE_HOSTS)
def test_install_host_reports_repaired_and_exits_0(host_name, ctx, install_dir, tmp_path, capsys):
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    gate = SERVERS["ndl-mcp"].gate
    if gate is not None:
        from datetime import date

        gate.resolve().record(data_dir, "2026-08-19", today=date(2026, 8, 20))
    host = HOSTS[host_name](ctx)
    assert isinstance(host, FileHost)
    seed(host, {"command": str(old_install(tmp_path, keep=False) / "ndl-mcp")})
    args = build_parser().parse_args([
        "install-host", "--host", host_name, "--install-dir", str(install_dir),
        "--data-dir", str(data_dir)])
    assert args.func(args, ctx=ctx) == 0
    out = capsys.readouterr().out
    assert "ndl-mcp: repaired" in out and "backup:" in out
