"""cinii-mcp as a catalogue server: declaration, setup with and without an application id, and a
planted application id that must surface in no host config, no output, no log.

Host files are written under a temporary home by the real command lines, as subprocesses. The
install folder holds launchers named like the servers that run ``python -m``, so an entry that
was written can be started exactly as a host starts it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

from readingroom.catalog import BUNDLED_PROGRAMS, SERVERS
from readingroom.cinii import ENV_APPID, REGISTRATION_URL, SERVER
from readingroom.cinii.fake import FakeCinii
from readingroom.core.declaration import help_text
from readingroom.core.rawstdio import RawStdioClient

pytestmark = pytest.mark.stdio  # starts the server (or the CLI) as a process

posix_only = pytest.mark.skipif(os.name == "nt", reason="the launcher stub is a shell script")
PLANTED = "planted-cinii-appid-44b1d9"
HOSTS = "codex,claude-desktop,cursor,vscode,gemini"


def test_cinii_mcp_is_a_catalogue_server_with_a_secret_and_a_self_test():
    assert SERVERS["cinii-mcp"] is SERVER and SERVER.secrets == (ENV_APPID,)
    assert SERVER.prefix == "cinii_" and SERVER.gate is None
    assert SERVER.self_test == "readingroom.cinii.selftest:run_self_test"
    assert [(c.name, c.obtain) for c in SERVER.credentials] == [(ENV_APPID, REGISTRATION_URL)]


def test_both_japanese_siblings_are_frozen_with_their_canned_answers():
    """The spec freezes BUNDLED_PROGRAMS (tests/test_catalog.py) and collects the package data."""
    assert {"cinii-mcp", "jstage-mcp"} <= set(BUNDLED_PROGRAMS)
    spec = (Path(__file__).resolve().parents[2] / "build" / "readingroom.spec").read_text()
    assert 'collect_data_files("readingroom")' in spec
    for package in ("cinii", "jstage"):
        canned = resources.files(f"readingroom.{package}").joinpath("canned")
        assert any(p.name.endswith((".json", ".xml")) for p in canned.iterdir()), package


def test_help_says_the_appid_is_required_and_where_to_get_it():
    [line] = [x for x in help_text(SERVER, "0").splitlines() if x.strip().startswith(ENV_APPID)]
    assert "required" in line and "NOT_CONFIGURED" in line and REGISTRATION_URL in line


@pytest.fixture
def world(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, info in SERVERS.items():
        launcher = bin_dir / name
        launcher.write_text(f"#!/bin/sh\nexec '{sys.executable}' -m {info.module} \"$@\"\n")
        launcher.chmod(0o755)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("READINGROOM_", "CLAUDE_", "CODEX_", "XDG_", "CINII_"))}
    # No OS keyring: the application id is found in the environment or nowhere.
    env.update(HOME=str(home), USERPROFILE=str(home),
               PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring")
    return {"home": home, "bin": bin_dir, "env": env, "data": tmp_path / "data",
            "tmp": tmp_path}


def _readingroom(world, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "readingroom", *args],
                          env={**world["env"], **extra}, capture_output=True, text=True,
                          encoding="utf-8", timeout=120)


def _configs(home: Path) -> dict[Path, str]:
    return {p: p.read_text("utf-8", "replace") for p in home.rglob("*") if p.is_file()}


@posix_only
def test_setup_registers_cinii_mcp_with_or_without_an_appid_and_says_which(world):
    common = ["setup", "--hosts", HOSTS, "--data-dir", str(world["data"]),
              "--install-dir", str(world["bin"]), "--no-self-test"]
    without = _readingroom(world, *common)
    assert without.returncode == 0, without.stdout + without.stderr
    [said] = [line for line in without.stdout.splitlines()
              if line.startswith(f"cinii-mcp: registered without {ENV_APPID}")]
    assert "NOT_CONFIGURED" in said and REGISTRATION_URL in said
    cursor = json.loads((world["home"] / ".cursor" / "mcp.json").read_text())["mcpServers"]
    assert "cinii-mcp" in cursor and "jstage-mcp" in cursor

    planted = _readingroom(world, *common, **{ENV_APPID: PLANTED})
    assert planted.returncode == 0, planted.stdout + planted.stderr
    assert f"cinii-mcp: registered with {ENV_APPID} (found in this environment" in \
        planted.stdout
    installed = _readingroom(world, "install-host", "--host", "codex", "--server", "cinii-mcp",
                             "--install-dir", str(world["bin"]), "--data-dir",
                             str(world["data"]), **{ENV_APPID: PLANTED})
    assert installed.returncode == 0, installed.stdout + installed.stderr
    for result in (without, planted, installed):
        assert PLANTED not in result.stdout + result.stderr
    configs = _configs(world["home"])
    assert configs, "setup wrote the host configs"
    for path, text in configs.items():
        assert PLANTED not in text, path
    codex = (world["home"] / ".codex" / "config.toml").read_text()
    assert 'env_vars = ["CINII_APPID"]' in codex


@posix_only
def test_a_written_entry_starts_a_server_that_keeps_the_planted_appid_secret(world):
    done = _readingroom(world, "install-host", "--host", "cursor", "--server", "cinii-mcp",
                        "--install-dir", str(world["bin"]), "--data-dir", str(world["data"]))
    assert done.returncode == 0, done.stderr
    entry = json.loads((world["home"] / ".cursor" / "mcp.json").read_text())["mcpServers"][
        "cinii-mcp"]
    ledger = Path(entry["env"]["MCP_RECEIPT_LOG"])
    errlog = world["tmp"] / "stderr.log"
    with FakeCinii() as fake, errlog.open("wb") as err:
        env = {**world["env"], **entry["env"], **fake.env(), ENV_APPID: PLANTED}
        with RawStdioClient([entry["command"], *entry["args"]], env=env, stderr=err) as client:
            client.initialize()
            answers = [client.call_tool(name, args) for name, args in (
                ("cinii_search_articles", {"q": "漱石"}),
                ("cinii_get_record", {"crid": "9990000000000000001"}),
                ("cinii_get_record", {"crid": "1234"}),
                ("cinii_search_books", {"q": "__forbidden__"}),
            )]
            assert client.close() == 0
            stdout = b"\n".join(client.raw_lines)
        assert [r.params.get("appid") for r in fake.log] == [PLANTED] * 4
        # The fake named the request, application id included, in every search answer.
        assert all(a["structuredContent"]["attribution"] for a in answers)
    assert [(a["structuredContent"].get("error") or {}).get("code") for a in answers] == [
        None, None, "NOT_FOUND", "API_ERROR"]
    for place, data in (("stdout", stdout), ("ledger", ledger.read_bytes()),
                        ("stderr", errlog.read_bytes())):
        assert PLANTED.encode() not in data, place
    assert len(ledger.read_text("utf-8").splitlines()) == 4


@posix_only
def test_without_an_appid_the_server_starts_lists_its_tools_and_answers_not_configured(world):
    with FakeCinii() as fake:
        env = {**world["env"], **fake.env()}
        with RawStdioClient([str(world["bin"] / "cinii-mcp")], env=env) as client:
            client.initialize()
            tools = client.request("tools/list", {})["result"]["tools"]
            answer = client.call_tool("cinii_search_all", {"q": "漱石"})
            assert client.close() == 0
        assert fake.log == []
    assert len(tools) == 6
    data = answer["structuredContent"]
    assert answer["isError"] is True and data["error"]["code"] == "NOT_CONFIGURED"
    assert REGISTRATION_URL in data["error"]["remediation"]
