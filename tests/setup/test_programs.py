"""A server's program with instances: its instance command to the suite, the rest to it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import readingroom.programs as programs
import readingroom.setup.instance as instance
from readingroom.book import SERVER as BOOK
from readingroom.catalog import ENTRIES, SERVERS
from readingroom.core.declaration import InstanceRequest, Instances, ServerInfo


def _toy(described: object, seen: dict[str, object]) -> ServerInfo:
    def entry(argv: list[str] | None = None) -> int:
        seen["entry"] = argv
        return 7

    def describe(argv: list[str], hosts: tuple[str, ...]) -> object:
        seen["describe"] = (list(argv), hosts)
        return described

    # resolve() passes callables through: the toy needs no importable module.
    return ServerInfo(name="toy-mcp", entry_point=entry,  # type: ignore[arg-type]
                      instances=Instances(command="install-host",
                                          describe=describe))  # type: ignore[arg-type]


def test_other_command_lines_run_the_servers_own_entry_point():
    seen: dict[str, object] = {}
    assert programs.run(_toy(None, seen), ["mcp", "BOOK"]) == 7
    assert seen == {"entry": ["mcp", "BOOK"]}  # describe was never asked


def test_describe_none_int_and_a_request(monkeypatch: pytest.MonkeyPatch):
    seen: dict[str, object] = {}
    assert programs.run(_toy(None, seen), ["search", "install-host"]) == 7
    assert seen["entry"] == ["search", "install-host"]
    assert "codex" in seen["describe"][1]  # type: ignore[index]
    seen.clear()
    assert programs.run(_toy(2, seen), ["install-host", "--bad"]) == 2
    assert "entry" not in seen
    registered: list[InstanceRequest] = []
    monkeypatch.setattr(instance, "register_request",
                        lambda request: registered.append(request) or 5)
    request = InstanceRequest(server="toy-mcp", host="codex")
    assert programs.run(_toy(request, seen), ["install-host", "--host", "codex"]) == 5
    assert registered == [request]


def test_book_agents_console_script_is_its_program(monkeypatch: pytest.MonkeyPatch):
    # These tests' catalogue is pinned to ndl-mcp (tests/hosts/conftest.py): put book-agent back.
    monkeypatch.setitem(SERVERS, BOOK.name, BOOK)
    book = SERVERS["book-agent"]
    assert book.instances is not None and book.instances.command == "install-host"
    assert ENTRIES["book-agent"].entry_point == "readingroom.programs:book_agent"
    assert ENTRIES["ndl-mcp"].entry_point == "readingroom.ndl.__main__:main"
    assert callable(programs.book_agent)
    with pytest.raises(AttributeError):
        programs.ndl_mcp  # noqa: B018  (no instances declared: no program here)


def test_book_agent_install_host_print_goes_through_the_suite(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setitem(SERVERS, BOOK.name, BOOK)
    status = programs.run(BOOK, [
        "--data-dir", str(tmp_path / "books"), "install-host", "--host", "cursor", "--print",
        "--install-dir", str(tmp_path / "bin"), "--suite-data-dir", str(tmp_path / "suite"),
        "--timeout", "40"])
    out = capsys.readouterr()
    assert status == 0, out.err
    snippet, end = json.JSONDecoder().raw_decode(out.out)
    entry = snippet["mcpServers"]["book-agent"]
    assert "No book is registered yet" in out.out[end:]  # the skills step ran after it
    assert entry["args"][-1] == "mcp"
    assert entry["env"]["READINGROOM_TOOL_DEADLINE"] == "40"
    assert not (tmp_path / "suite").exists() or not any((tmp_path / "suite").iterdir())


def test_the_server_entry_point_alone_refuses_install_host(capsys):
    from readingroom.book.commands.cli import main

    assert main(["install-host", "--host", "cursor"]) == 2
    assert "book-agent program" in capsys.readouterr().err
