"""book-agent as a catalogue server: host entries, `book-agent install-host`, setup, self-test.

Host files are written under a temporary home (``HOME``, ``--config``) by the real command
lines, each a process of its own (:mod:`tests.forked`); the install folder holds a small
launcher named ``book-agent`` that runs ``python -m readingroom.book``, so an entry that was
written can be started exactly as a host starts it, and answers.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from readingroom.book import SERVER
from readingroom.book.service import BookService
from readingroom.catalog import SERVERS
from readingroom.core.platform import Machine
from readingroom.core.rawstdio import RawStdioClient
from readingroom.hosts.entries import build_entry, is_ours
from readingroom.ndl import SERVER as NDL
from readingroom.setup.instance import Instance, instance_entry
from tests.forked import program, readingroom

# Starts real server or command processes: left out of the quick tier (tests/conftest.py).
pytestmark = pytest.mark.stdio

posix_only = pytest.mark.skipif(os.name == "nt", reason="the launcher stub is a shell script")
BOOK = "# Guide\n\n## Whales\nWhales swim in the cold northern sea.\n"


def windows(home: str = "C:\\Users\\alice") -> Machine:
    return Machine(home=Path(home), platform="win32", env={})


def test_book_agent_is_a_catalogue_server_with_a_self_test():
    assert SERVERS["book-agent"] is SERVER
    assert SERVER.self_test == "readingroom.book.selftest:run_self_test"


def test_entries_carry_the_data_folder_before_mcp_and_ndl_is_unchanged():
    ctx = windows()
    entry = build_entry(SERVER, "C:\\RR", "C:\\Users\\alice\\ReadingRoom", ctx)
    assert entry.command == "C:\\RR\\book-agent.exe"
    assert entry.args == ("--data-dir", "C:\\Users\\alice\\ReadingRoom\\book-agent", "mcp")
    ndl = build_entry(NDL, "C:\\RR", "C:\\Users\\alice\\ReadingRoom", ctx)
    assert ndl.args == () and ndl.command == "C:\\RR\\ndl-mcp.exe"
    assert ndl.env == {"MCP_RECEIPT_LOG": "C:\\Users\\alice\\ReadingRoom\\receipts.jsonl"}


def test_a_per_book_instance_entry():
    ctx = windows()
    spec = Instance(server="book-agent", instance="my.book", data_dir=Path("D:\\Books"),
                    launch=("my.book", "--embeddings-url", "http://localhost:11434/v1",
                            "--embeddings-model", "m", "--embeddings-key-env", "OLLAMA_KEY"),
                    deadline_s=200, secret_names=("OLLAMA_KEY",))
    entry = instance_entry(spec, "C:\\RR", Path("C:\\Users\\alice\\ReadingRoom"), ctx)
    assert entry.name == "book-agent-my-book"
    assert entry.args[:4] == ("--data-dir", "D:\\Books", "mcp", "my.book")
    assert entry.secret_names == ("OLLAMA_KEY",) and entry.deadline_s == 200
    assert entry.env["READINGROOM_TOOL_DEADLINE"] == "200"
    assert is_ours(entry.name, entry.command, {entry.name})
    assert not is_ours(entry.name, "npx", {entry.name})
    assert not is_ours("book-agent-x", "C:\\RR\\ndl-mcp.exe", {"book-agent-x"})


@pytest.fixture
def world(tmp_path):
    """A temporary home, a data folder with the book ``guide``, and a launcher folder."""
    home = tmp_path / "home"
    home.mkdir()
    data = tmp_path / "books"
    src = tmp_path / "guide.md"
    src.write_text(BOOK, encoding="utf-8")
    BookService(data).init(src, book_id="guide")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in SERVERS:
        module = SERVERS[name].module
        launcher = bin_dir / name
        launcher.write_text(f"#!/bin/sh\nexec '{sys.executable}' -m {module} \"$@\"\n")
        launcher.chmod(0o755)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("READINGROOM_", "BOOK_AGENT_", "CLAUDE_", "CODEX_", "XDG_"))}
    env.update(HOME=str(home), USERPROFILE=str(home))
    return {"home": home, "data": data, "bin": bin_dir, "env": env, "tmp": tmp_path}


def book_agent(world, *args: str) -> subprocess.CompletedProcess[str]:
    # The book-agent program: its console script and frozen executable start there too.
    return program("book-agent", ["--data-dir", str(world["data"]), *args], env=world["env"],
                   text=True, encoding="utf-8", timeout=120)


@posix_only
def test_install_host_codex_per_book_entry_skill_and_it_answers(world):
    config = world["tmp"] / "codex.toml"
    args = ["install-host", "--host", "codex", "guide", "--config", str(config),
            "--install-dir", str(world["bin"]), "--embeddings-url", "http://127.0.0.1:9/v1",
            "--embeddings-model", "m", "--embeddings-key-env", "BOOK_EMBED_KEY"]
    done = book_agent(world, *args)
    assert done.returncode == 0, done.stderr
    entry = tomllib.loads(config.read_text(encoding="utf-8"))["mcp_servers"]["book-agent-guide"]
    assert entry["command"] == str(world["bin"] / "book-agent")
    assert entry["args"][:4] == ["--data-dir", str(world["data"].resolve()), "mcp", "guide"]
    assert entry["env_vars"] == ["BOOK_EMBED_KEY"] and "BOOK_EMBED_KEY" not in entry["env"]
    assert (entry["startup_timeout_sec"], entry["tool_timeout_sec"]) == (30, 120)
    skill = world["home"] / ".agents" / "skills" / "guide" / "SKILL.md"
    assert skill.is_file() and "book_search" in skill.read_text(encoding="utf-8")
    again = book_agent(world, *args)
    assert again.returncode == 0 and "unchanged" in again.stdout
    # The entry as written starts a server that serves exactly that book.
    env = {**world["env"], **entry["env"]}
    with RawStdioClient([entry["command"], *entry["args"]], env=env) as client:
        client.initialize()
        listed = client.call_tool("book_list", {})["structuredContent"]
        other = client.call_tool("book_search", {"book_id": "other", "query": "whales"})
        assert client.close() == 0
    assert [b["book_id"] for b in listed["items"]] == ["guide"]
    assert other["structuredContent"]["error"]["code"] == "BOOK_NOT_ALLOWED"
    removed = book_agent(world, "install-host", "--host", "codex", "guide", "--config",
                         str(config), "--install-dir", str(world["bin"]), "--remove")
    assert removed.returncode == 0
    assert "book-agent-guide" not in config.read_text(encoding="utf-8")


@posix_only
def test_install_host_claude_desktop_all_books_caps_the_deadline_and_zips_skills(world):
    config = world["tmp"] / "claude_desktop_config.json"
    done = book_agent(world, "install-host", "--host", "claude-desktop", "--config",
                      str(config), "--install-dir", str(world["bin"]), "--timeout", "300")
    assert done.returncode == 0, done.stderr
    entry = json.loads(config.read_text(encoding="utf-8"))["mcpServers"]["book-agent"]
    assert entry["args"] == ["--data-dir", str(world["data"].resolve()), "mcp"]
    assert entry["env"]["READINGROOM_TOOL_DEADLINE"] == "50"
    with zipfile.ZipFile(world["data"] / "skill-exports" / "guide.zip") as z:
        assert "guide/SKILL.md" in z.namelist()


@posix_only
def test_install_host_exports_every_readable_skill_when_one_book_is_damaged(world):
    src = world["tmp"] / "second.md"
    src.write_text(BOOK, encoding="utf-8")
    service = BookService(world["data"])
    service.init(src, book_id="second")
    shutil.rmtree(service.registry.get("guide").path / "skill")
    config = world["tmp"] / "claude_desktop_config.json"
    done = book_agent(world, "install-host", "--host", "claude-desktop", "--config",
                      str(config), "--install-dir", str(world["bin"]))
    assert done.returncode == 1
    assert "guide was not exported: BOOK_DAMAGED" in done.stderr and "skill/" in done.stderr
    assert (world["data"] / "skill-exports" / "second.zip").is_file()


def test_install_host_print_changes_nothing_and_a_missing_book_is_refused(world):
    config = world["tmp"] / "cursor.json"
    printed = book_agent(world, "install-host", "--host", "cursor", "guide", "--config",
                         str(config), "--install-dir", str(world["bin"]), "--print")
    assert printed.returncode == 0
    shown = json.loads(printed.stdout)["mcpServers"]["book-agent-guide"]
    assert shown["args"][2:] == ["mcp", "guide"]
    assert not config.exists() and not (world["data"] / "skill-exports").exists()
    missing = book_agent(world, "install-host", "--host", "cursor", "nope", "--config",
                         str(config), "--install-dir", str(world["bin"]))
    assert missing.returncode == 1 and "BOOK_NOT_FOUND" in missing.stderr
    bad = book_agent(world, "install-host", "--host", "cursor", "--timeout", "0")
    assert bad.returncode == 2 and "1-900" in bad.stderr
    assert not config.exists()


@posix_only
def test_readingroom_setup_registers_book_agent_with_its_data_folder(world):
    suite = world["tmp"] / "suite"
    done = readingroom(["setup", "--hosts", "cursor", "--data-dir", str(suite),
                        "--install-dir", str(world["bin"]), "--no-self-test"],
                       env=world["env"], text=True, encoding="utf-8", timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    servers = json.loads((world["home"] / ".cursor" / "mcp.json").read_text())["mcpServers"]
    assert servers["book-agent"]["args"] == ["--data-dir", str(suite / "book-agent"), "mcp"]
    assert "ndl-mcp" not in servers, "ndl-mcp waits for its notification gate"


def test_self_test_passes_against_python_m():
    from readingroom.book.selftest import run_self_test

    report = run_self_test()
    assert report.ok, report.render()
    names = [c.name for c in report.checks]
    assert names[:3] == ["init of a generated PDF", "initialize", "10 tools, read-only"]
    assert "book_render_page attaches a PNG" in names and "stdout purity" in names
    broken = run_self_test([sys.executable, "-c", "import sys; sys.exit(3)"])
    assert not broken.ok and broken.checks[0].name == "init of a generated PDF"
