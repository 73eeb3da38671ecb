"""``readingroom install-host``: each host written, re-written, verified, removed; exit codes."""

from __future__ import annotations

import json
import subprocess
import tomllib
from dataclasses import replace
from datetime import date, datetime
from pathlib import Path

import pytest

from readingroom.catalog import SERVERS
from readingroom.cli import build_parser
from readingroom.core.declaration import Gate, GateStatus, ServerInfo
from readingroom.core.platform import Machine
from readingroom.hosts import HOSTS

from ..core.keyrings import MemoryKeyring, using

NOW = datetime(2026, 9, 1, 9, 0, 0)
CLAUDE = "/opt/bin/claude"
ENV_SECRET = "sk-env-d41d8cd98f00b204"
KEYRING_SECRET = "sk-keyring-e9800998ecf8427e"


class Runner:
    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def __call__(self, argv):
        self.calls.append(list(argv))
        return subprocess.CompletedProcess(list(argv), 0, "", "")


class FileGate:
    """A gate that is open once the data folder holds a file called ``OPEN``."""

    def status(self, data_dir: Path) -> GateStatus:
        if (data_dir / "OPEN").is_file():
            return GateStatus(True, "OPEN is there")
        return GateStatus(False, "the data folder has no OPEN file")

    def record(self, data_dir: Path, value: str, *, today: date | None = None) -> GateStatus:
        (data_dir / "OPEN").write_text(value, encoding="utf-8")
        return self.status(data_dir)

    def explanation(self) -> list[str]:
        return ["Put a file called OPEN in the data folder."]


FILE_GATE = FileGate()
TEST_GATE = Gate(option="--open-it", metavar="WORD", help="opens the test gate",
                 keeper=f"{__name__}:FILE_GATE")


def add_server(monkeypatch, install_dir: Path, info: ServerInfo) -> ServerInfo:
    """Put ``info`` into the catalogue for one test, with an executable in ``install_dir``."""
    monkeypatch.setitem(SERVERS, info.name, info)
    exe = install_dir / info.name
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    return info


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def runner() -> Runner:
    return Runner()


@pytest.fixture
def ctx(home: Path, runner: Runner) -> Machine:
    return Machine(home=home, platform="linux", now=lambda: NOW,
                   which=lambda name: CLAUDE if name == "claude" else None, run=runner)


@pytest.fixture
def install_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "install"
    folder.mkdir()
    for name in SERVERS:
        exe = folder / name
        exe.write_text("#!/bin/sh\n")
        exe.chmod(0o755)
    return folder


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "data"
    folder.mkdir()
    ndl_gate = SERVERS["ndl-mcp"].gate
    assert ndl_gate is not None
    assert ndl_gate.resolve().record(folder, "2026-08-19", today=date(2026, 8, 20)).open
    return folder


def run(argv: list[str], ctx: Machine) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args, ctx=ctx)


def base_args(host: str, install_dir: Path, data_dir: Path) -> list[str]:
    return ["install-host", "--host", host, "--install-dir", str(install_dir),
            "--data-dir", str(data_dir)]


FILE_HOSTS = [name for name in HOSTS if name != "claude-code"]


@pytest.mark.parametrize("host", FILE_HOSTS)
def test_write_rewrite_verify_remove(host, ctx, install_dir, data_dir, capsys):
    args = base_args(host, install_dir, data_dir)
    assert run(args, ctx) == 0
    assert "ndl-mcp: added" in capsys.readouterr().out
    assert run(args, ctx) == 0
    assert "ndl-mcp: unchanged" in capsys.readouterr().out
    assert run([*args, "--verify"], ctx) == 0
    assert run([*args, "--remove"], ctx) == 0
    assert "ndl-mcp: removed" in capsys.readouterr().out
    assert run([*args, "--verify"], ctx) == 1


def test_config_option_points_at_a_portable_file(ctx, install_dir, data_dir, tmp_path):
    portable = tmp_path / "portable" / "codex.toml"
    args = [*base_args("codex", install_dir, data_dir), "--config", str(portable)]
    assert run(args, ctx) == 0
    table = tomllib.loads(portable.read_text(encoding="utf-8"))["mcp_servers"]["ndl-mcp"]
    assert table["env"]["MCP_RECEIPT_LOG"] == str(data_dir / "receipts.jsonl")
    assert not (ctx.home / ".codex").exists()


def test_claude_code_runs_the_cli(ctx, runner, install_dir, data_dir):
    assert run(base_args("claude-code", install_dir, data_dir), ctx) == 0
    assert runner.calls[0][:8] == [CLAUDE, "mcp", "add", "--scope", "user", "--transport",
                                   "stdio", "ndl-mcp"]


def test_claude_code_without_cli_prints_and_exits_1(home, install_dir, data_dir, capsys):
    ctx = Machine(home=home, which=lambda _n: None, run=Runner())
    assert run(base_args("claude-code", install_dir, data_dir), ctx) == 1
    out = capsys.readouterr().out
    assert "claude mcp add --scope user" in out and "not on PATH" in out


def test_without_a_notification_record_ndl_mcp_is_not_registered(ctx, install_dir, tmp_path,
                                                                 capsys):
    args = base_args("codex", install_dir, tmp_path / "no-record")
    assert run(args, ctx) == 1
    err = capsys.readouterr().err
    assert "no server to handle" in err and "--notification-filed YYYY-MM-DD" in err
    assert run([*args, "--server", "ndl-mcp"], ctx) == 2
    assert "--notification-filed" in capsys.readouterr().err
    assert not (ctx.home / ".codex" / "config.toml").exists()


def test_a_closed_gate_refuses_its_server_with_the_reason_and_the_option(
        monkeypatch, ctx, install_dir, tmp_path, capsys):
    add_server(monkeypatch, install_dir, replace(SERVERS["ndl-mcp"], name="gated-mcp",
                                                 gate=TEST_GATE))
    data = tmp_path / "data"
    data.mkdir()
    args = [*base_args("codex", install_dir, data), "--server", "gated-mcp"]
    assert run(args, ctx) == 2
    err = capsys.readouterr().err
    assert "gated-mcp" in err and "the data folder has no OPEN file" in err
    assert "readingroom setup --open-it WORD" in err
    assert not (ctx.home / ".codex").exists()

    (data / "OPEN").write_text("yes", encoding="utf-8")
    assert run(args, ctx) == 0
    assert "gated-mcp: added" in capsys.readouterr().out


def test_servers_without_a_gate_go_ahead_while_gated_ones_wait(monkeypatch, ctx, install_dir,
                                                               tmp_path, capsys):
    add_server(monkeypatch, install_dir, replace(SERVERS["ndl-mcp"], name="open-mcp", gate=None))
    assert run(base_args("codex", install_dir, tmp_path / "no-record"), ctx) == 0
    out = capsys.readouterr().out
    assert "open-mcp: added" in out and "ndl-mcp" not in out


def test_verify_and_remove_of_named_servers_ignore_the_gate(ctx, install_dir, tmp_path, capsys):
    args = [*base_args("codex", install_dir, tmp_path / "no-record"), "--server", "ndl-mcp"]
    assert run([*args, "--verify"], ctx) == 1
    assert "ndl-mcp: missing" in capsys.readouterr().out
    assert run([*args, "--remove"], ctx) == 0
    assert "ndl-mcp: absent" in capsys.readouterr().out


def test_unparsable_file_exits_2_and_is_untouched(ctx, install_dir, data_dir, capsys):
    path = ctx.home / ".cursor" / "mcp.json"
    path.parent.mkdir(parents=True)
    path.write_text("{oops", encoding="utf-8")
    assert run(base_args("cursor", install_dir, data_dir), ctx) == 2
    assert "not valid JSON" in capsys.readouterr().err
    assert path.read_text(encoding="utf-8") == "{oops"
    assert list(path.parent.iterdir()) == [path]


def test_verify_fails_when_the_executable_is_gone(ctx, install_dir, data_dir, capsys):
    args = base_args("gemini", install_dir, data_dir)
    assert run(args, ctx) == 0
    (install_dir / "ndl-mcp").unlink()
    assert run([*args, "--verify"], ctx) == 1
    assert "executable not found" in capsys.readouterr().out


def test_install_refuses_when_the_executable_is_missing(ctx, tmp_path, data_dir, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run(base_args("codex", empty, data_dir), ctx) == 1
    assert "--install-dir" in capsys.readouterr().err
    assert not (ctx.home / ".codex").exists()


def test_print_changes_nothing(ctx, install_dir, data_dir, capsys):
    assert run([*base_args("vscode", install_dir, data_dir), "--print"], ctx) == 0
    captured = capsys.readouterr()
    snippet = json.loads(captured.out)
    assert snippet["servers"]["ndl-mcp"]["type"] == "stdio"
    assert "mcp.json" in captured.err
    assert not ctx.home.exists()


def test_modes_are_mutually_exclusive_and_host_is_required(capsys):
    parser = build_parser()
    with pytest.raises(SystemExit) as exc:
        parser.parse_args(["install-host", "--host", "codex", "--print", "--remove"])
    assert exc.value.code == 2
    with pytest.raises(SystemExit) as exc:
        parser.parse_args(["install-host"])
    assert exc.value.code == 2
    with pytest.raises(SystemExit) as exc:
        parser.parse_args(["install-host", "--host", "notepad"])
    assert exc.value.code == 2


def test_remove_leaves_a_foreign_entry_and_says_so(ctx, install_dir, data_dir, capsys):
    path = ctx.home / ".cursor" / "mcp.json"
    path.parent.mkdir(parents=True)
    foreign = {"mcpServers": {"ndl-mcp": {"command": "uvx", "args": ["ndl-mcp"]}}}
    path.write_text(json.dumps(foreign), encoding="utf-8")
    args = base_args("cursor", install_dir, data_dir)
    assert run([*args, "--remove"], ctx) == 1
    assert "not ours" in capsys.readouterr().out
    assert json.loads(path.read_text(encoding="utf-8")) == foreign
    assert run([*args, "--remove", "--force"], ctx) == 0


def test_no_secret_value_reaches_any_config(monkeypatch, ctx, runner, install_dir, data_dir,
                                            tmp_path):
    secret_name = "READINGROOM_TEST_API_KEY"
    add_server(monkeypatch, install_dir, ServerInfo(
        name="lit-mcp", entry_point="readingroom.lit.__main__:main", title="Literature",
        description="test server with a secret", secrets=(secret_name,)))
    monkeypatch.setenv(secret_name, ENV_SECRET)
    memory = MemoryKeyring()
    memory.set_password("readingroom", secret_name, KEYRING_SECRET)
    with using(memory):
        from readingroom.core import secrets

        assert secrets.resolve(secret_name).reveal() == ENV_SECRET
        assert secrets.resolve(secret_name, {}).reveal() == KEYRING_SECRET
        secret_ctx = Machine(home=ctx.home, platform="linux", now=ctx.now,
                             env={secret_name: ENV_SECRET}, which=ctx.which, run=runner)
        for host in HOSTS:
            assert run(base_args(host, install_dir, data_dir), secret_ctx) == 0, host

    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.name == "config.toml" for p in written)
    for path in written:
        text = path.read_text(encoding="utf-8", errors="replace")
        assert ENV_SECRET not in text and KEYRING_SECRET not in text, path
    for argv in runner.calls:
        assert not any(ENV_SECRET in a or KEYRING_SECRET in a for a in argv)
    codex = tomllib.loads((ctx.home / ".codex" / "config.toml").read_text(encoding="utf-8"))
    assert codex["mcp_servers"]["lit-mcp"]["env_vars"] == [secret_name]
