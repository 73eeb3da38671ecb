"""Attack: a host config that is a symlink (a dotfiles set-up) was replaced by a regular file.

``~/.cursor/mcp.json -> dotfiles/cursor/mcp.json`` (or Codex's ``config.toml``): install
replaced the link with a regular file, so the dotfiles target never saw the change and the link
was gone. Now the write goes through the link: the target is backed up (beside it) and
replaced, and the link stays a link.
"""

from __future__ import annotations

import json
import os
import tomllib
from datetime import datetime
from pathlib import Path

import pytest

from readingroom.catalog import SERVERS
from readingroom.core.platform import Machine
from readingroom.hosts import Action, build_entries
from readingroom.hosts.codex import CodexHost
from readingroom.hosts.cursor import CursorHost

NOW = datetime(2026, 9, 1, 9, 0, 0)

CASES = {
    CursorHost: '{\n  "mcpServers": {\n    "linear": {\n      "command": "npx"\n    }\n  }\n}\n',
    CodexHost: 'model = "gpt-5"\n\n[mcp_servers.zotero]\ncommand = "/opt/zotero"\n',
}


def _symlink_or_skip(link: Path, target: str) -> None:
    try:
        os.symlink(target, link)
    except (OSError, NotImplementedError) as exc:  # Windows without the privilege
        pytest.skip(f"symlinks are not permitted here: {exc}")


def _read(host_class, text: str):
    return json.loads(text) if host_class is CursorHost else tomllib.loads(text)


@pytest.mark.parametrize("host_class", list(CASES), ids=lambda c: c.name)
def test_install_and_remove_write_through_the_link(tmp_path: Path, host_class):
    install = tmp_path / "install"
    install.mkdir()
    (install / "ndl-mcp").write_text("#!/bin/sh\n")
    ctx = Machine(home=tmp_path / "home", platform="linux", now=lambda: NOW)
    host = host_class(ctx)
    link = host.candidate_paths()[0]
    link.parent.mkdir(parents=True)
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    target = dotfiles / link.name
    target.write_text(CASES[host_class], encoding="utf-8")
    _symlink_or_skip(link, os.path.relpath(target, link.parent))  # as GNU stow makes them
    entries = build_entries([SERVERS["ndl-mcp"]], install, tmp_path / "data", ctx)

    outcome = host.install(entries)

    assert outcome.ok and outcome.entries[0].action is Action.ADDED
    assert link.is_symlink(), "the link was replaced by a regular file"
    assert os.path.samefile(link, target)
    written = _read(host_class, target.read_text(encoding="utf-8"))
    assert "ndl-mcp" in written[host.servers_key]
    backup = outcome.files[0].backup
    assert backup is not None and backup.parent == dotfiles
    assert backup.read_text(encoding="utf-8") == CASES[host_class]
    assert any(str(target) in note for note in outcome.files[0].notes)
    assert sorted(p.name for p in link.parent.iterdir() if not p.name.startswith(".")) == [
        link.name]

    assert host.install(entries).entries[0].action is Action.UNCHANGED
    assert host.remove(["ndl-mcp"]).entries[0].action is Action.REMOVED
    assert link.is_symlink()
    assert _read(host_class, target.read_text(encoding="utf-8")) == _read(
        host_class, CASES[host_class])
