"""``readingroom setup --books/--zotero`` finds its server by the declaration's Library hook.

Nothing in setup names the server: a toy server that declares a :class:`Library` gets the
options and the runs, a catalogue without one has no such options.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from readingroom.catalog import SERVERS
from readingroom.cli import build_parser
from readingroom.core.declaration import DATA_DIR, Library, ServerInfo
from readingroom.core.platform import Machine
from readingroom.setup import command

TOY = ServerInfo(
    name="toy-shelf", entry_point="toy.__main__:main", data_args=("--home", f"{DATA_DIR}/toy"),
    library=Library(runs="tests.setup.test_library_hook:toy_runs", refused_exit=7),
)


def toy_runs(books: str | None, zotero: str | None) -> list[list[str]]:
    """The toy's hook: one run per source, in its own words."""
    return [*([["shelve", books]] if books else []),
            *([["zotero", zotero or "DEFAULT"]] if zotero is not None else [])]


def _setup(argv: list[str], tmp_path: Path) -> int:
    ctx = Machine(home=tmp_path / "home", platform=sys.platform, which=lambda _n: None)
    args = build_parser().parse_args(["setup", *argv])
    return int(args.func(args, ctx=ctx))


def test_without_a_library_server_setup_has_no_books_options(capsys):
    assert command.library_server() is None  # tests/setup pins the catalogue to ndl-mcp
    with pytest.raises(SystemExit):
        build_parser().parse_args(["setup", "--books", "/x"])
    assert "--books" in capsys.readouterr().err


def test_two_library_servers_are_a_declaration_error(monkeypatch):
    monkeypatch.setitem(SERVERS, TOY.name, TOY)
    monkeypatch.setitem(SERVERS, "toy-two", ServerInfo(name="toy-two", entry_point="t:m",
                                                       library=TOY.library))
    with pytest.raises(ValueError, match="toy-shelf, toy-two"):
        command.library_server()


@pytest.mark.skipif(sys.platform == "win32", reason="the fake executable is a shell script")
@pytest.mark.parametrize(("status", "code"), [(0, 0), (7, 0), (1, 1)])
def test_the_declared_server_runs_its_hooks_arguments(monkeypatch, tmp_path, capsys,
                                                      status, code):
    monkeypatch.setitem(SERVERS, TOY.name, TOY)
    assert command.library_server() is TOY
    install = tmp_path / "install"
    install.mkdir()
    log = tmp_path / "argv.txt"
    exe = install / "toy-shelf"
    exe.write_text(f"#!/bin/sh\necho \"$@\" >> '{log}'\nexit {status}\n")
    exe.chmod(0o755)
    data = tmp_path / "data"
    got = _setup(["--hosts", "none", "--no-self-test", "--books", str(tmp_path / "B"),
                  "--zotero", "--install-dir", str(install), "--data-dir", str(data)], tmp_path)
    assert got == code
    runs = log.read_text().splitlines()
    assert runs[0].split() == ["--home", str(data / "toy"), "shelve", str(tmp_path / "B")]
    if code == 0:  # a refused file (the declared status) is reported and the next run goes on
        assert runs[1].split() == ["--home", str(data / "toy"), "zotero", "DEFAULT"]
    out, err = capsys.readouterr()
    assert ("refused some files" in out) is (status == 7)
    assert ("toy-shelf shelve failed (exit 1)" in err) is (status == 1)


def test_book_agent_declares_the_library_and_its_hook_gives_book_agent_add():
    from readingroom.book import SERVER as info
    from readingroom.core.declaration import resolve
    from readingroom.core.envelope import Envelope

    exit_status = resolve(info.entry_point.partition(":")[0] + ":_exit_status")  # its CLI's

    refused = Envelope(server=info.name, operation="book_add")
    refused.data = {"counts": {"refused": 1}}
    assert info.library is not None
    assert info.library.refused_exit == exit_status(refused) == 3
    runs = info.library.resolve()
    assert runs("/b", None) == [["add", "/b", "--recursive"]]
    assert runs(None, "") == [["add", "--zotero"]]
    assert runs(None, "/z") == [["add", "--zotero", "/z"]]
