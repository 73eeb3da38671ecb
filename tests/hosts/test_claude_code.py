"""Claude Code: registered through its own CLI (an injected runner here); never its state file."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest

from readingroom.catalog import SERVERS
from readingroom.core.platform import Machine
from readingroom.hosts import Action, ConfigParseError, build_entries
from readingroom.hosts.claude_code import ClaudeCodeHost

CLAUDE = "/usr/local/bin/claude"


class FakeClaude:
    """Records every command; answers with the given exit code."""

    def __init__(self, returncode: int = 0, stderr: str = "") -> None:
        self.calls: list[list[str]] = []
        self.returncode = returncode
        self.stderr = stderr

    def __call__(self, argv: Sequence[str]) -> subprocess.CompletedProcess[str]:
        self.calls.append(list(argv))
        return subprocess.CompletedProcess(list(argv), self.returncode, "", self.stderr)


def context(tmp_path: Path, runner: FakeClaude | None = None, *, on_path: bool = True,
            env: dict[str, str] | None = None) -> Machine:
    return Machine(
        home=tmp_path / "home", platform="linux", env=env or {},
        which=lambda name: CLAUDE if on_path and name == "claude" else None,
        run=runner or FakeClaude(),
    )


def wanted(ctx: Machine, install_dir: Path, tmp_path: Path):
    return build_entries(SERVERS.values(), install_dir, tmp_path / "data", ctx)


def state(tmp_path: Path, servers: dict) -> Path:
    path = tmp_path / "home" / ".claude.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"numStartups": 3, "mcpServers": servers,
                                "projects": {"/x": {"mcpServers": {}}}}), encoding="utf-8")
    return path


def our_state_entry(install_dir: Path, tmp_path: Path) -> dict:
    return {"type": "stdio", "command": str(install_dir / "ndl-mcp"), "args": [],
            "env": {"MCP_RECEIPT_LOG": str(tmp_path / "data" / "receipts.jsonl")}}


def test_add_command_puts_the_name_before_env_options(tmp_path, install_dir):
    runner = FakeClaude()
    ctx = context(tmp_path, runner)
    outcome = ClaudeCodeHost(ctx).install(wanted(ctx, install_dir, tmp_path))
    assert [e.action for e in outcome.entries] == [Action.ADDED]
    assert runner.calls == [[
        CLAUDE, "mcp", "add", "--scope", "user", "--transport", "stdio", "ndl-mcp",
        "--env", f"MCP_RECEIPT_LOG={tmp_path / 'data' / 'receipts.jsonl'}",
        "--", str(install_dir / "ndl-mcp"),
    ]]


def test_registered_entry_is_unchanged_and_runs_nothing(tmp_path, install_dir):
    path = state(tmp_path, {"ndl-mcp": our_state_entry(install_dir, tmp_path)})
    before = path.read_bytes()
    runner = FakeClaude()
    ctx = context(tmp_path, runner)
    outcome = ClaudeCodeHost(ctx).install(wanted(ctx, install_dir, tmp_path))
    assert [e.action for e in outcome.entries] == [Action.UNCHANGED]
    assert runner.calls == []
    assert path.read_bytes() == before


def test_stale_entry_is_removed_then_added(tmp_path, install_dir):
    stale = our_state_entry(install_dir, tmp_path) | {"env": {"MCP_RECEIPT_LOG": "/old.jsonl"}}
    path = state(tmp_path, {"ndl-mcp": stale})
    before = path.read_bytes()
    runner = FakeClaude()
    ctx = context(tmp_path, runner)
    outcome = ClaudeCodeHost(ctx).install(wanted(ctx, install_dir, tmp_path))
    assert outcome.entries[0].action is Action.UPDATED
    assert [c[:3] for c in runner.calls] == [[CLAUDE, "mcp", "remove"], [CLAUDE, "mcp", "add"]]
    assert runner.calls[0] == [CLAUDE, "mcp", "remove", "--scope", "user", "ndl-mcp"]
    assert path.read_bytes() == before  # never written by us


def test_foreign_entry_is_left_alone_unless_forced(tmp_path, install_dir):
    state(tmp_path, {"ndl-mcp": {"type": "stdio", "command": "npx", "args": ["ndl"]}})
    runner = FakeClaude()
    ctx = context(tmp_path, runner)
    host = ClaudeCodeHost(ctx)
    assert host.install(wanted(ctx, install_dir, tmp_path)).entries[0].action is Action.FOREIGN
    assert host.remove(["ndl-mcp"]).entries[0].action is Action.FOREIGN
    assert runner.calls == []
    assert host.install(wanted(ctx, install_dir, tmp_path), force=True).ok
    assert len(runner.calls) == 2


def test_without_the_cli_the_commands_are_printed_and_nothing_runs(tmp_path, install_dir):
    runner = FakeClaude()
    ctx = context(tmp_path, runner, on_path=False)
    host = ClaudeCodeHost(ctx)
    entries = wanted(ctx, install_dir, tmp_path)
    outcome = host.install(entries)
    assert runner.calls == []
    assert outcome.printed
    assert outcome.entries[0].action is Action.PRINTED
    assert outcome.entries[0].detail.startswith(
        "claude mcp add --scope user --transport stdio ndl-mcp --env MCP_RECEIPT_LOG=")
    assert "not on PATH" in outcome.render()
    assert host.render(entries) == outcome.entries[0].detail + "\n"
    assert not (tmp_path / "home" / ".claude.json").exists()


def test_windows_rendering_quotes_for_cmd(tmp_path):
    ctx = Machine(home=tmp_path, platform="win32", which=lambda _n: None)
    entries = build_entries(SERVERS.values(), "C:\\Program Files\\RR", "C:\\Users\\a\\RR", ctx)
    line = ClaudeCodeHost(ctx).render(entries)
    assert '-- "C:\\Program Files\\RR\\ndl-mcp.exe"' in line


def test_a_failing_cli_is_reported(tmp_path, install_dir):
    runner = FakeClaude(returncode=1, stderr="boom\nMCP server ndl-mcp already exists\n")
    ctx = context(tmp_path, runner)
    outcome = ClaudeCodeHost(ctx).install(wanted(ctx, install_dir, tmp_path))
    assert not outcome.ok
    assert outcome.entries[0].action is Action.FAILED
    assert "already exists" in outcome.entries[0].detail


def test_a_cli_that_cannot_start_is_reported(tmp_path, install_dir):
    def broken(argv):
        raise FileNotFoundError(argv[0])

    ctx = Machine(home=tmp_path / "home", which=lambda _n: CLAUDE, run=broken)
    outcome = ClaudeCodeHost(ctx).install(wanted(ctx, install_dir, tmp_path))
    assert outcome.entries[0].action is Action.FAILED


def test_remove(tmp_path, install_dir):
    state(tmp_path, {"ndl-mcp": our_state_entry(install_dir, tmp_path)})
    runner = FakeClaude()
    ctx = context(tmp_path, runner)
    outcome = ClaudeCodeHost(ctx).remove(["ndl-mcp"])
    assert outcome.entries[0].action is Action.REMOVED
    assert runner.calls == [[CLAUDE, "mcp", "remove", "--scope", "user", "ndl-mcp"]]

    nothing = ClaudeCodeHost(context(tmp_path / "empty", FakeClaude())).remove(["ndl-mcp"])
    assert nothing.entries[0].action is Action.ABSENT and nothing.ok


def test_verify_reads_the_state_file(tmp_path, install_dir):
    ctx = context(tmp_path)
    host = ClaudeCodeHost(ctx)
    entries = wanted(ctx, install_dir, tmp_path)
    assert host.verify(entries).entries[0].action is Action.MISSING
    state(tmp_path, {"ndl-mcp": our_state_entry(install_dir, tmp_path)})
    assert host.verify(entries).ok
    (install_dir / "ndl-mcp").unlink()
    assert host.verify(entries).entries[0].action is Action.BROKEN


def test_claude_config_dir_is_honoured(tmp_path):
    ctx = context(tmp_path, env={"CLAUDE_CONFIG_DIR": str(tmp_path / "alt")})
    assert ClaudeCodeHost(ctx).candidate_paths() == [tmp_path / "alt" / ".claude.json"]


def test_unparsable_state_is_refused_and_nothing_runs(tmp_path, install_dir):
    path = tmp_path / "home" / ".claude.json"
    path.parent.mkdir(parents=True)
    path.write_text("{not json", encoding="utf-8")
    runner = FakeClaude()
    ctx = context(tmp_path, runner)
    with pytest.raises(ConfigParseError):
        ClaudeCodeHost(ctx).install(wanted(ctx, install_dir, tmp_path))
    assert runner.calls == []


def test_state_with_the_same_meaning_in_another_form_is_unchanged(tmp_path, install_dir):
    ours = our_state_entry(install_dir, tmp_path)
    reordered = {"env": {"OTHER": "1", **ours["env"]}, "command": ours["command"],
                 "type": "stdio"}  # no args key: no arguments
    state(tmp_path, {"ndl-mcp": reordered})
    runner = FakeClaude()
    ctx = context(tmp_path, runner)
    outcome = ClaudeCodeHost(ctx).install(wanted(ctx, install_dir, tmp_path))
    assert outcome.entries[0].action is Action.UNCHANGED
    assert runner.calls == []
