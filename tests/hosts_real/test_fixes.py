"""What the real hosts showed that we fixed (issue 8 §3), shown with the real hosts.

- Codex re-serialises ``config.toml`` on any ``codex mcp add/remove``; our next install with
  nothing changed must write nothing and leave no new backup.
- An entry of ours whose executable moved away is repaired, and the host then starts it.
- Gemini starts no server in an untrusted folder; ``install-host --verify`` says so, and says
  trusted once Gemini's own trust file trusts the folder.
"""

from __future__ import annotations

import json
import shutil
import tomllib
from pathlib import Path

from readingroom.catalog import SERVERS

from .test_gemini import _gemini_mcp_list, _trust
from .world import World, server_executable


def _backups(folder: Path, name: str) -> list[Path]:
    return sorted(folder.glob(name + ".bak-*"))


def test_codex_rewriting_our_file_is_not_a_change(world: World):
    assert world.install_host("codex").returncode == 0
    config = world.codex_home / "config.toml"
    # A real Codex edit of the file: add and remove an unrelated server.
    codex = world.hosts.program("codex")
    added = world.run([codex, "mcp", "add", "scratch", "--", "/bin/true"])
    assert added.returncode == 0, added.stdout + added.stderr
    removed = world.run([codex, "mcp", "remove", "scratch"])
    assert removed.returncode == 0, removed.stdout + removed.stderr
    rewritten = config.read_bytes()
    backups = _backups(config.parent, config.name)
    again = world.install_host("codex")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "unchanged" in again.stdout and "updated" not in again.stdout, again.stdout
    assert config.read_bytes() == rewritten  # no write
    assert _backups(config.parent, config.name) == backups  # no new backup


def test_a_stale_entry_is_repaired_and_codex_sees_the_new_command(world: World, tmp_path):
    moved = tmp_path / "old-install"
    moved.mkdir()
    name = next(iter(SERVERS))
    old = moved / server_executable(SERVERS[name]).name
    shutil.copy2(server_executable(SERVERS[name]), old)
    config = world.codex_home / "config.toml"
    config.write_text(f'[mcp_servers.{name}]\ncommand = "{old.as_posix()}"\nargs = []\n',
                      encoding="utf-8")
    old.unlink()  # the user deleted the old install folder
    done = world.install_host("codex")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "repaired" in done.stdout, done.stdout
    got = json.loads(world.run([world.hosts.program("codex"), "mcp", "get", name,
                                "--json"]).stdout)
    assert got["transport"]["command"] == server_executable(SERVERS[name]).as_posix()
    assert tomllib.loads(config.read_text("utf-8"))["mcp_servers"][name]["command"] != \
        old.as_posix()
    assert _backups(config.parent, config.name), "the repair keeps a backup"


def test_verify_reports_the_trust_gemini_acts_on(world: World):
    assert world.install_host("gemini").returncode == 0
    untrusted = world.install_host("gemini", "--verify")
    status, said = _gemini_mcp_list(world)
    assert "untrusted" in untrusted.stdout.lower(), untrusted.stdout
    assert set(status.values()) == {"Disabled"}, said
    _trust(world)
    trusted = world.install_host("gemini", "--verify")
    status, said = _gemini_mcp_list(world)
    assert "untrusted" not in trusted.stdout.lower() and "trusted" in trusted.stdout.lower(), \
        trusted.stdout
    assert set(status.values()) == {"Connected"}, said
