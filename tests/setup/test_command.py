"""``readingroom setup``: the NDL gate, registration with hosts, one ledger, the self-test."""

from __future__ import annotations

import json
import os
import sys
import tomllib
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path

import pytest

from readingroom.cli import build_parser
from readingroom.core.declaration import resolve
from readingroom.core.platform import Machine
from readingroom.ndl import notification as gate
from readingroom.setup import command

TODAY = date(2026, 9, 1)
NOW = datetime(2026, 9, 1, 10, 0, 0)


@dataclass
class FakeReport:
    ok: bool

    def render(self) -> str:
        return "fake self-test: " + ("all checks passed" if self.ok else "FAILED")


class FakeSelfTest:
    def __init__(self, ok: bool = True) -> None:
        self.ok = ok
        self.commands: list[list[str]] = []
        self.servers: list[str] = []

    def __call__(self, info, argv):
        self.servers.append(info.name)
        self.commands.append(list(argv))
        return FakeReport(self.ok)


@pytest.fixture
def ctx(tmp_path: Path) -> Machine:
    return Machine(home=tmp_path / "home", platform="linux", now=lambda: NOW,
                       which=lambda _n: None)


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


def run(argv, ctx, self_test=None, today=TODAY) -> int:
    args = build_parser().parse_args(["setup", *argv])
    return args.func(args, ctx=ctx, today=today, self_test=self_test or FakeSelfTest())


def folders(install_dir: Path, data_dir: Path) -> list[str]:
    return ["--install-dir", str(install_dir), "--data-dir", str(data_dir)]


def codex_file(ctx: Machine) -> Path:
    return ctx.home / ".codex" / "config.toml"


def claude_file(ctx: Machine) -> Path:
    return ctx.home / ".config" / "Claude" / "claude_desktop_config.json"


def test_without_a_date_ndl_mcp_is_not_registered_and_the_way_on_is_shown(
        ctx, install_dir, data_dir, capsys):
    self_test = FakeSelfTest()
    status = run([*folders(install_dir, data_dir), "--no-self-test"], ctx, self_test)
    assert status == command.EXIT_OK
    out = capsys.readouterr().out
    assert "ndl-mcp was NOT registered" in out
    assert gate.NDL_FORM_URL in out
    assert "Section 17" in out
    assert (f"readingroom setup --notification-filed YYYY-MM-DD --data-dir {data_dir} "
            f"--install-dir {install_dir} --no-self-test") in out
    assert not codex_file(ctx).exists() and not claude_file(ctx).exists()
    assert not (data_dir / gate.NOTIFICATION_FILENAME).exists()
    assert self_test.commands == []


def test_with_a_valid_date_it_records_and_registers(ctx, install_dir, data_dir, capsys):
    argv = [*folders(install_dir, data_dir), "--notification-filed", "2026-08-19",
            "--no-self-test"]
    assert run(argv, ctx) == command.EXIT_OK
    record = gate.read_notification(data_dir)
    assert (record.filed, record.recorded) == (date(2026, 8, 19), TODAY)
    ledger = str(data_dir / "receipts.jsonl")
    codex = tomllib.loads(codex_file(ctx).read_text(encoding="utf-8"))
    assert codex["mcp_servers"]["ndl-mcp"]["env"]["MCP_RECEIPT_LOG"] == ledger
    claude = json.loads(claude_file(ctx).read_text(encoding="utf-8"))
    assert claude["mcpServers"]["ndl-mcp"]["env"]["MCP_RECEIPT_LOG"] == ledger
    out = capsys.readouterr().out
    assert "filed 2026-08-19" in out and "NOT registered" not in out


def test_a_date_recorded_earlier_counts(ctx, install_dir, data_dir):
    gate.record_notification(data_dir, date(2026, 7, 1), today=date(2026, 7, 2))
    assert run([*folders(install_dir, data_dir), "--no-self-test"], ctx) == command.EXIT_OK
    assert "ndl-mcp" in tomllib.loads(codex_file(ctx).read_text(encoding="utf-8"))["mcp_servers"]


@pytest.mark.parametrize("bad", ["2026-09-02", "2026-02-30", "26-1-1", "yesterday"])
def test_future_and_malformed_dates_are_refused_and_nothing_is_written(
        ctx, install_dir, data_dir, capsys, bad):
    argv = [*folders(install_dir, data_dir), "--notification-filed", bad, "--no-self-test"]
    assert run(argv, ctx) == command.EXIT_USAGE
    assert "nothing was written" in capsys.readouterr().err
    assert not data_dir.exists()
    assert not ctx.home.exists()


def test_unknown_host_is_a_usage_error(ctx, install_dir, data_dir, capsys):
    assert run([*folders(install_dir, data_dir), "--hosts", "codex,notepad"], ctx) == 2
    assert "notepad" in capsys.readouterr().err
    assert not ctx.home.exists()


def test_default_hosts_add_those_whose_config_exists(ctx, install_dir, data_dir):
    assert command.default_hosts(ctx) == ["codex", "claude-desktop"]
    cursor = ctx.home / ".cursor" / "mcp.json"
    cursor.parent.mkdir(parents=True)
    cursor.write_text('{"mcpServers": {}}', encoding="utf-8")
    assert command.default_hosts(ctx) == ["codex", "claude-desktop", "cursor"]
    argv = [*folders(install_dir, data_dir), "--notification-filed", "2026-08-19",
            "--no-self-test"]
    assert run(argv, ctx) == 0
    assert "ndl-mcp" in json.loads(cursor.read_text(encoding="utf-8"))["mcpServers"]


def test_chosen_hosts_only(ctx, install_dir, data_dir):
    argv = [*folders(install_dir, data_dir), "--notification-filed", "2026-08-19",
            "--no-self-test", "--hosts", "gemini"]
    assert run(argv, ctx) == 0
    assert (ctx.home / ".gemini" / "settings.json").is_file()
    assert not codex_file(ctx).exists() and not claude_file(ctx).exists()


def test_a_broken_host_file_fails_setup_but_not_the_other_hosts(ctx, install_dir, data_dir,
                                                                capsys):
    codex = codex_file(ctx)
    codex.parent.mkdir(parents=True)
    codex.write_text("[mcp_servers\n", encoding="utf-8")
    argv = [*folders(install_dir, data_dir), "--notification-filed", "2026-08-19",
            "--no-self-test"]
    assert run(argv, ctx) == command.EXIT_FAILED
    assert "refused" in capsys.readouterr().out
    assert codex.read_text(encoding="utf-8") == "[mcp_servers\n"
    assert "ndl-mcp" in json.loads(claude_file(ctx).read_text(encoding="utf-8"))["mcpServers"]


def test_missing_executables_change_no_host(ctx, tmp_path, data_dir, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    argv = [*folders(empty, data_dir), "--notification-filed", "2026-08-19", "--no-self-test"]
    assert run(argv, ctx) == command.EXIT_FAILED
    assert "--install-dir" in capsys.readouterr().err
    assert not ctx.home.exists()


def test_self_test_runs_against_the_installed_executable(ctx, install_dir, data_dir, capsys):
    passing = FakeSelfTest(ok=True)
    argv = [*folders(install_dir, data_dir), "--notification-filed", "2026-08-19"]
    assert run(argv, ctx, passing) == 0
    assert passing.commands == [[str(install_dir / "ndl-mcp")]]
    assert "fake self-test: all checks passed" in capsys.readouterr().out
    assert run(argv, ctx, FakeSelfTest(ok=False)) == command.EXIT_FAILED


def test_remove_takes_our_entries_from_every_host_with_a_config(ctx, install_dir, data_dir):
    cursor = ctx.home / ".cursor" / "mcp.json"
    cursor.parent.mkdir(parents=True)
    cursor.write_text('{"mcpServers": {"other": {"command": "x"}}}', encoding="utf-8")
    argv = [*folders(install_dir, data_dir), "--notification-filed", "2026-08-19",
            "--no-self-test"]
    assert run(argv, ctx) == 0
    assert run(["--remove"], ctx) == 0
    assert "ndl-mcp" not in tomllib.loads(codex_file(ctx).read_text(encoding="utf-8")).get(
        "mcp_servers", {})
    assert json.loads(claude_file(ctx).read_text(encoding="utf-8"))["mcpServers"] == {}
    assert json.loads(cursor.read_text(encoding="utf-8")) == {
        "mcpServers": {"other": {"command": "x"}}}


def test_remove_with_no_host_config_does_nothing(ctx, capsys):
    assert run(["--remove"], ctx) == 0
    assert "nothing to remove" in capsys.readouterr().out


def test_windows_rerun_command_is_quoted_for_cmd(tmp_path):
    ctx = Machine(home=tmp_path, platform="win32")
    line = command.rerun_command(
        ["readingroom", "setup", "--data-dir", "C:\\Users\\Alice Smith\\ReadingRoom"], ctx)
    assert line == 'readingroom setup --data-dir "C:\\Users\\Alice Smith\\ReadingRoom"'


@pytest.mark.slow
@pytest.mark.skipif(os.name == "nt", reason="POSIX launcher script")
def test_setup_reports_the_real_self_test(ctx, tmp_path, data_dir, capsys):
    install_dir = tmp_path / "bin"
    install_dir.mkdir()
    launcher = install_dir / "ndl-mcp"
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m readingroom.ndl "$@"\n')
    launcher.chmod(0o755)
    args = build_parser().parse_args(
        ["setup", *folders(install_dir, data_dir), "--notification-filed", "2026-08-19",
         "--hosts", "codex"])

    def shortened(info, argv):
        # The server's declared self-test, with one search instead of six: the full run with
        # its seven floors is tests/stdio/test_self_test.py's.
        return resolve(info.self_test)(argv, calls=1)

    assert args.func(args, ctx=ctx, today=TODAY, self_test=shortened) == 0
    out = capsys.readouterr().out
    assert f"readingroom self-test: ndl-mcp = {launcher}" in out
    assert "all checks passed" in out


def test_hosts_none_records_the_notification_and_changes_no_host(
        ctx, install_dir, data_dir, capsys):
    self_test = FakeSelfTest()
    argv = [*folders(install_dir, data_dir), "--notification-filed", "2026-08-19",
            "--hosts", "none"]
    assert run(argv, ctx, self_test) == command.EXIT_OK
    assert gate.read_notification(data_dir).filed == date(2026, 8, 19)
    assert not ctx.home.exists() and self_test.commands == []
    assert "no host config was changed" in capsys.readouterr().out
    # A later run with hosts registers ndl-mcp on the recorded date, no option needed.
    assert run([*folders(install_dir, data_dir), "--hosts", "codex"], ctx, self_test) == 0
    assert "ndl-mcp" in tomllib.loads(codex_file(ctx).read_text("utf-8"))["mcp_servers"]
    assert self_test.servers == ["ndl-mcp"]


def test_setup_options_come_from_the_catalogue_gates():
    options = {a.option_strings[0] for a in build_parser()._subparsers._group_actions[0]
               .choices["setup"]._actions if a.option_strings}
    assert set(command.gates()) <= options
