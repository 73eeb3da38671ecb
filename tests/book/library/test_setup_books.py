"""``readingroom setup --books DIR`` / ``--zotero``: the install ends with the books added."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from readingroom.book.service import BookService
from readingroom.cli import build_parser
from readingroom.core.platform import Machine

from ..conftest import fixture_books


def _setup(argv: list[str], tmp_path: Path) -> int:
    ctx = Machine(home=tmp_path / "home", platform=sys.platform if sys.platform != "win32"
                  else "win32", which=lambda _n: None)
    args = build_parser().parse_args(["setup", *argv])
    return args.func(args, ctx=ctx)


def test_setup_books_runs_the_installed_book_agent_add(tmp_path, capsys):
    books = tmp_path / "My Books"
    books.mkdir()
    shutil.copyfile(fixture_books() / "regime-anticancer-arabic.epub", books / "regime.epub")
    data = tmp_path / "data"
    code = _setup(["--hosts", "none", "--no-self-test", "--books", str(books),
                   "--install-dir", str(Path(sys.executable).parent), "--data-dir", str(data)],
                  tmp_path)
    assert code == 0
    out = capsys.readouterr().out
    assert "Adding books:" in out and "add" in out and "--recursive" in out
    service = BookService(data / "book-agent")  # the folder the host entries name
    assert service.registry.list_ids() == ["regime"]


@pytest.mark.skipif(sys.platform == "win32", reason="the fake book-agent is a shell script")
def test_setup_reports_a_failed_add_and_passes_zotero(tmp_path, capsys):
    install = tmp_path / "install"
    install.mkdir()
    log = tmp_path / "argv.txt"
    exe = install / "book-agent"
    exe.write_text(f"#!/bin/sh\necho \"$@\" >> '{log}'\nexit 1\n")
    exe.chmod(0o755)
    code = _setup(["--hosts", "none", "--no-self-test", "--zotero", str(tmp_path / "Z"),
                   "--install-dir", str(install), "--data-dir", str(tmp_path / "data")],
                  tmp_path)
    assert code == 1
    assert log.read_text().split() == ["--data-dir", str(tmp_path / "data" / "book-agent"),
                                       "add", "--zotero", str(tmp_path / "Z")]
    assert "add failed (exit 1)" in capsys.readouterr().err
