"""Attack: the host config path is a folder (``install-host --verify`` / ``--remove``).

Issue 18 §11. With a folder where a host's config file belongs, ``--verify`` said "missing -
no config file" and ``--remove`` said "absent - no config file" and exited 0, as if there were
nothing to do; with ``--config FOLDER`` the message was "not a regular file; not changed".
Now every mode says the path is a folder and what to do, and exits non-zero; nothing is
written.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from readingroom.cli import build_parser
from readingroom.core.platform import Machine
from readingroom.hosts import get_host


@pytest.fixture
def ctx(tmp_path: Path) -> Machine:
    return Machine(home=tmp_path / "home", platform="linux",
                   now=lambda: datetime(2026, 9, 1, 9), which=lambda _n: None)


def _run(argv: list[str], ctx: Machine) -> int:
    args = build_parser().parse_args(["install-host", *argv])
    return args.func(args, ctx=ctx)


@pytest.mark.parametrize("host", ["codex", "claude-desktop", "cursor", "vscode", "gemini"])
@pytest.mark.parametrize("mode", ["--verify", "--remove"])
@pytest.mark.parametrize("where", ["default path", "--config"])
def test_a_folder_as_config_is_named_and_fails(host, mode, where, ctx, tmp_path, capsys):
    if where == "default path":
        folder = get_host(host, ctx).candidate_paths()[0]
        extra: list[str] = []
    else:
        folder = tmp_path / "a-folder"
        extra = ["--config", str(folder)]
    folder.mkdir(parents=True)
    status = _run(["--host", host, mode, "--data-dir", str(tmp_path / "data"), *extra], ctx)
    captured = capsys.readouterr()
    said = captured.out + captured.err
    assert status != 0, said
    assert f"{folder} is a folder" in said, said
    assert "no config file" not in said
    assert folder.is_dir() and not any(folder.iterdir()), "nothing was written"
