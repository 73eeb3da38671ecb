"""Attack: ``readingroom setup`` with a data folder it cannot create (a read-only HOME).

Issue 18 §11. The installer shows what ``setup`` prints; a data folder that cannot be made
gave a Python traceback on both paths that write there: recording the NDL notification date,
and registering servers (whose entries point at the ledger in that folder). Now it is one line
naming the folder, what stopped it and ``--data-dir``, and exit 1, before anything is written.
The tests run as any user: a file where a folder must be (ENOTDIR) stops even root, and a
refusal to write (EACCES, a read-only HOME) is simulated at ``mkdir``.
"""

from __future__ import annotations

import errno
from datetime import date, datetime
from pathlib import Path

import pytest

from readingroom.cli import build_parser
from readingroom.core.platform import Machine
from readingroom.setup import command

TODAY = date(2026, 9, 1)


class NoSelfTest:
    def __call__(self, info, argv):  # pragma: no cover - must not be reached
        raise AssertionError("no self-test may run when the data folder is unusable")


@pytest.fixture
def install_dir(tmp_path: Path) -> Path:
    """An install folder holding an executable of every server (none of them is run)."""
    from readingroom.catalog import SERVERS

    folder = tmp_path / "install"
    folder.mkdir()
    for name in [*SERVERS, "book-agent", "readingroom"]:
        exe = folder / name
        exe.write_text("#!/bin/sh\n")
        exe.chmod(0o755)
    return folder


@pytest.fixture
def ctx(tmp_path: Path) -> Machine:
    return Machine(home=tmp_path / "home", platform="linux",
                   now=lambda: datetime(2026, 9, 1, 10), which=lambda _n: None)


def _run(argv: list[str], ctx: Machine) -> int:
    args = build_parser().parse_args(["setup", *argv])
    return args.func(args, ctx=ctx, today=TODAY, self_test=NoSelfTest())


PATHS = {
    "recording the notification": ["--notification-filed", "2026-08-19", "--hosts", "none"],
    "registering with a host": ["--notification-filed", "2026-08-19", "--hosts", "codex",
                                "--no-self-test"],
}


@pytest.mark.parametrize("path", sorted(PATHS))
def test_a_file_in_the_way_is_one_line_and_exit_1(path, ctx, tmp_path, install_dir, capsys):
    blocker = tmp_path / "home-is-a-file"
    blocker.write_text("not a folder")
    data = blocker / "readingroom"
    status = _run([*PATHS[path], "--install-dir", str(install_dir), "--data-dir", str(data)],
                  ctx)
    captured = capsys.readouterr()
    assert status == 1, captured
    lines = [line for line in captured.err.splitlines() if line.strip()]
    assert len(lines) == 1, captured.err
    assert str(data) in lines[0] and "--data-dir" in lines[0]
    assert "Traceback" not in captured.err + captured.out
    assert not (ctx.home / ".codex").exists(), "no host was changed"


@pytest.mark.parametrize("path", sorted(PATHS))
def test_a_read_only_home_under_the_default_folder(path, ctx, tmp_path, install_dir, capsys,
                                                   monkeypatch):
    default = tmp_path / "ro-home" / ".local" / "share" / "readingroom"
    monkeypatch.setattr(command, "default_data_dir", lambda _ctx=None: default)
    real_mkdir = Path.mkdir

    def read_only(self: Path, *args, **kwargs) -> None:
        if str(self).startswith(str(tmp_path / "ro-home")):
            raise PermissionError(errno.EACCES, "Permission denied", str(self))
        real_mkdir(self, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", read_only)
    status = _run([*PATHS[path], "--install-dir", str(install_dir)], ctx)
    captured = capsys.readouterr()
    assert status == 1, captured
    lines = [line for line in captured.err.splitlines() if line.strip()]
    assert len(lines) == 1, captured.err
    assert str(default) in lines[0] and "--data-dir" in lines[0]
    assert "permission denied" in lines[0].lower()
