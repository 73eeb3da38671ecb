"""Codex's config.toml: a style-preserving merge of our tables, and nothing else touched."""

from __future__ import annotations

import tomllib
from datetime import datetime
from pathlib import Path

import pytest
import tomlkit

from readingroom.catalog import SERVERS
from readingroom.core.declaration import ServerInfo
from readingroom.core.platform import Machine
from readingroom.hosts import Action, ConfigParseError, build_entries
from readingroom.hosts.codex import CodexHost

NOW = datetime(2026, 9, 1, 12, 30, 5)

COMMENTED = """\
# Codex settings, kept by hand.
model = "gpt-5"          # the default model
approval_policy = "on-request"

[mcp_servers.zotero]
# my reference manager
command = "/opt/zotero-mcp/bin/zotero-mcp"
args = ["--library", "main"]   # which library
env = { ZOTERO_LOCAL = "1" }

[profiles.fast]
model = "gpt-5-mini"
"""


@pytest.fixture
def ctx(tmp_path: Path) -> Machine:
    return Machine(home=tmp_path / "home", platform="linux", now=lambda: NOW)


def entries(ctx: Machine, install_dir: Path | str, data_dir: Path | str, servers=None):
    return build_entries(servers or SERVERS.values(), install_dir, data_dir, ctx)


def config_file(ctx: Machine, text: str | None = None) -> Path:
    path = CodexHost(ctx).candidate_paths()[0]
    if text is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return path


def backups(path: Path) -> list[Path]:
    return sorted(path.parent.glob(path.name + ".bak-*"))


def without_our_table(text: str, name: str = "ndl-mcp") -> str:
    doc = tomlkit.parse(text)
    del doc["mcp_servers"][name]
    return tomlkit.dumps(doc)


def test_default_path_is_codex_home_or_dot_codex(tmp_path: Path) -> None:
    plain = Machine(home=tmp_path, platform="win32")
    assert CodexHost(plain).candidate_paths() == [tmp_path / ".codex" / "config.toml"]
    custom = Machine(home=tmp_path, env={"CODEX_HOME": str(tmp_path / "cx")})
    assert CodexHost(custom).candidate_paths() == [tmp_path / "cx" / "config.toml"]


def test_commented_file_keeps_everything_outside_our_table(ctx, install_dir, tmp_path):
    path = config_file(ctx, COMMENTED)
    outcome = CodexHost(ctx).install(entries(ctx, install_dir, tmp_path / "data"))

    assert [e.action for e in outcome.entries] == [Action.ADDED]
    written = path.read_text(encoding="utf-8")
    assert without_our_table(written) == COMMENTED  # byte-identical outside our table
    for comment in ("# Codex settings, kept by hand.", "# the default model",
                    "# my reference manager", "# which library"):
        assert comment in written
    table = tomllib.loads(written)["mcp_servers"]["ndl-mcp"]
    assert table == {
        "command": str(install_dir / "ndl-mcp"),
        "args": [],
        "startup_timeout_sec": 30,
        "tool_timeout_sec": 120,
        "env": {"MCP_RECEIPT_LOG": str(tmp_path / "data" / "receipts.jsonl")},
    }
    assert tomllib.loads(written)["mcp_servers"]["zotero"]["env"] == {"ZOTERO_LOCAL": "1"}


def test_backup_holds_the_previous_file(ctx, install_dir, tmp_path):
    path = config_file(ctx, COMMENTED)
    outcome = CodexHost(ctx).install(entries(ctx, install_dir, tmp_path / "data"))
    backup = outcome.files[0].backup
    assert backup == path.with_name("config.toml.bak-20260901-123005")
    assert backup.read_text(encoding="utf-8") == COMMENTED


def test_install_twice_is_unchanged_and_writes_no_new_backup(ctx, install_dir, tmp_path):
    path = config_file(ctx, COMMENTED)
    host = CodexHost(ctx)
    host.install(entries(ctx, install_dir, tmp_path / "data"))
    after_first = path.read_bytes()
    second = host.install(entries(ctx, install_dir, tmp_path / "data"))

    assert [e.action for e in second.entries] == [Action.UNCHANGED]
    assert not second.files[0].written and second.files[0].backup is None
    assert path.read_bytes() == after_first
    assert len(backups(path)) == 1
    assert path.read_text(encoding="utf-8").count("[mcp_servers.ndl-mcp]") == 1


def test_install_then_remove_gives_the_file_back_byte_for_byte(ctx, install_dir, tmp_path):
    path = config_file(ctx, COMMENTED)
    host = CodexHost(ctx)
    host.install(entries(ctx, install_dir, tmp_path / "data"))
    outcome = host.remove(["ndl-mcp"])
    assert [e.action for e in outcome.entries] == [Action.REMOVED]
    assert path.read_text(encoding="utf-8") == COMMENTED


def test_new_file_is_created_with_our_table_only(ctx, install_dir, tmp_path):
    path = config_file(ctx)
    CodexHost(ctx).install(entries(ctx, install_dir, tmp_path / "data"))
    assert list(tomllib.loads(path.read_text(encoding="utf-8"))) == ["mcp_servers"]
    assert backups(path) == []
    CodexHost(ctx).remove(["ndl-mcp"])
    assert tomllib.loads(path.read_text(encoding="utf-8")) == {}


def test_windows_paths_are_written_with_forward_slashes(tmp_path):
    ctx = Machine(home=tmp_path, platform="win32", now=lambda: NOW)
    path = config_file(ctx)
    host = CodexHost(ctx)
    host.install(entries(ctx, "C:\\Users\\alice\\ReadingRoom App", "C:\\Users\\alice\\ReadingRoom"))

    text = path.read_text(encoding="utf-8")
    assert "\\" not in text
    table = tomllib.loads(text)["mcp_servers"]["ndl-mcp"]
    assert table["command"] == "C:/Users/alice/ReadingRoom App/ndl-mcp.exe"
    assert table["env"]["MCP_RECEIPT_LOG"] == "C:/Users/alice/ReadingRoom/receipts.jsonl"
    assert "C:/Users/alice/ReadingRoom App/ndl-mcp.exe" in host.render(
        entries(ctx, "C:\\Users\\alice\\ReadingRoom App", "C:\\x"))


def test_unparsable_file_is_refused_untouched_without_backup(ctx, install_dir, tmp_path):
    broken = 'model = "gpt-5"\n[mcp_servers.x]\ncommand = "C:\\Users\\x"\n'
    path = config_file(ctx, broken)
    with pytest.raises(ConfigParseError, match="not valid TOML"):
        CodexHost(ctx).install(entries(ctx, install_dir, tmp_path / "data"))
    assert path.read_text(encoding="utf-8") == broken
    assert backups(path) == []


def test_same_name_pointing_elsewhere_is_left_alone_unless_forced(ctx, install_dir, tmp_path):
    foreign = '[mcp_servers.ndl-mcp]\ncommand = "npx"\nargs = ["-y", "someone-elses-ndl"]\n'
    path = config_file(ctx, foreign)
    host = CodexHost(ctx)

    outcome = host.install(entries(ctx, install_dir, tmp_path / "data"))
    assert [e.action for e in outcome.entries] == [Action.FOREIGN]
    assert not outcome.ok
    assert path.read_text(encoding="utf-8") == foreign

    assert host.remove(["ndl-mcp"]).entries[0].action is Action.FOREIGN
    assert path.read_text(encoding="utf-8") == foreign

    forced = host.install(entries(ctx, install_dir, tmp_path / "data"), force=True)
    assert forced.entries[0].action is Action.UPDATED
    table = tomllib.loads(path.read_text(encoding="utf-8"))["mcp_servers"]["ndl-mcp"]
    assert table["command"] == str(install_dir / "ndl-mcp") and table["args"] == []


def test_remove_takes_only_ours(ctx, install_dir, tmp_path):
    path = config_file(ctx, COMMENTED)
    host = CodexHost(ctx)
    host.install(entries(ctx, install_dir, tmp_path / "data"))
    outcome = host.remove(["ndl-mcp"])
    assert outcome.ok
    assert "zotero" in tomllib.loads(path.read_text(encoding="utf-8"))["mcp_servers"]
    assert host.remove(["ndl-mcp"]).entries[0].action is Action.ABSENT


def test_update_keeps_the_users_additions_inside_our_table(ctx, install_dir, tmp_path):
    ours = str(install_dir / "ndl-mcp")
    stale = (
        "[mcp_servers.ndl-mcp]\n"
        "# pinned by me\n"
        f'command = "{ours}"\n'
        "tool_timeout_sec = 60\n"
        "enabled_tools = [\"ndl_search_books\"]\n"
        "\n"
        "[mcp_servers.ndl-mcp.env]\n"
        'NDL_SRU_URL = "http://localhost:9/sru"\n'
    )
    path = config_file(ctx, stale)
    outcome = CodexHost(ctx).install(entries(ctx, install_dir, tmp_path / "data"))
    assert outcome.entries[0].action is Action.UPDATED
    text = path.read_text(encoding="utf-8")
    assert "# pinned by me" in text
    table = tomllib.loads(text)["mcp_servers"]["ndl-mcp"]
    assert table["tool_timeout_sec"] == 120
    assert table["enabled_tools"] == ["ndl_search_books"]
    assert table["env"]["NDL_SRU_URL"] == "http://localhost:9/sru"
    assert table["env"]["MCP_RECEIPT_LOG"] == str(tmp_path / "data" / "receipts.jsonl")


def test_secret_names_go_to_env_vars_never_values(ctx, install_dir, tmp_path):
    (install_dir / "lit-mcp").write_text("#!/bin/sh\n")
    lit = ServerInfo(name="lit-mcp", entry_point="x:main", title="t", description="d",
                     secrets=("OPENALEX_API_KEY",), deadline_s=45)
    path = config_file(ctx)
    CodexHost(ctx).install(entries(ctx, install_dir, tmp_path / "data", [lit]))
    table = tomllib.loads(path.read_text(encoding="utf-8"))["mcp_servers"]["lit-mcp"]
    assert table["env_vars"] == ["OPENALEX_API_KEY"]
    assert "OPENALEX_API_KEY" not in table["env"]
    assert table["tool_timeout_sec"] == 75


def test_verify(ctx, install_dir, tmp_path):
    path = config_file(ctx, COMMENTED)
    host = CodexHost(ctx)
    wanted = entries(ctx, install_dir, tmp_path / "data")
    assert host.verify(wanted).entries[0].action is Action.MISSING

    host.install(wanted)
    good = host.verify(wanted)
    assert good.ok and good.entries[0].action is Action.OK

    (install_dir / "ndl-mcp").unlink()
    bad = host.verify(wanted)
    assert not bad.ok
    assert bad.entries[0].action is Action.BROKEN
    assert "executable not found" in bad.entries[0].detail
    assert path.exists()


def test_verify_refuses_an_unparsable_file(ctx, install_dir, tmp_path):
    config_file(ctx, "[mcp_servers\n")
    with pytest.raises(ConfigParseError):
        CodexHost(ctx).verify(entries(ctx, install_dir, tmp_path / "data"))


# What Codex 0.171.0 writes back after any `codex mcp add` / `codex mcp remove` on the file our
# install made from COMMENTED (captured from the real CLI, CODEX_HOME in a temp folder): comments
# inside mcp_servers gone, `args = []` dropped, 30 -> 30.0, env moved to a sub-table.
CODEX_REWRITTEN = """\
# Codex settings, kept by hand.
model = "gpt-5"          # the default model
approval_policy = "on-request"

[mcp_servers.zotero]
command = "/opt/zotero-mcp/bin/zotero-mcp"
args = ["--library", "main"]

[mcp_servers.zotero.env]
ZOTERO_LOCAL = "1"

[mcp_servers.ndl-mcp]
command = "{command}"
startup_timeout_sec = 30.0
tool_timeout_sec = 120.0

[mcp_servers.ndl-mcp.env]
MCP_RECEIPT_LOG = "{ledger}"

[profiles.fast]
model = "gpt-5-mini"
"""


def rewritten_by_codex(install_dir: Path, data_dir: Path, old: str = "", new: str = "") -> str:
    text = CODEX_REWRITTEN.format(command=install_dir / "ndl-mcp",
                                  ledger=data_dir / "receipts.jsonl")
    if old:
        assert old in text
        text = text.replace(old, new)
    return text


def test_a_file_codex_rewrote_with_our_values_is_unchanged(ctx, install_dir, tmp_path):
    text = rewritten_by_codex(install_dir, tmp_path / "data")
    path = config_file(ctx, text)
    outcome = CodexHost(ctx).install(entries(ctx, install_dir, tmp_path / "data"))
    assert [e.action for e in outcome.entries] == [Action.UNCHANGED]
    assert not outcome.files[0].written and outcome.files[0].backup is None
    assert path.read_text(encoding="utf-8") == text
    assert backups(path) == []
    assert CodexHost(ctx).verify(entries(ctx, install_dir, tmp_path / "data")).ok


def test_install_codex_rewrite_install_makes_one_backup(ctx, install_dir, tmp_path):
    path = config_file(ctx, COMMENTED)
    host = CodexHost(ctx)
    host.install(entries(ctx, install_dir, tmp_path / "data"))
    assert len(backups(path)) == 1
    path.write_text(rewritten_by_codex(install_dir, tmp_path / "data"), encoding="utf-8")
    again = host.install(entries(ctx, install_dir, tmp_path / "data"))
    assert again.entries[0].action is Action.UNCHANGED
    assert len(backups(path)) == 1


def test_codex_key_order_does_not_count(ctx, install_dir, tmp_path):
    reordered = (
        "[mcp_servers.ndl-mcp]\n"
        "tool_timeout_sec = 120\n"
        f'env = {{ MCP_RECEIPT_LOG = "{tmp_path / "data" / "receipts.jsonl"}" }}\n'
        "startup_timeout_sec = 30.0\n"
        "args = []\n"
        f'command = "{install_dir / "ndl-mcp"}"\n'
    )
    path = config_file(ctx, reordered)
    outcome = CodexHost(ctx).install(entries(ctx, install_dir, tmp_path / "data"))
    assert outcome.entries[0].action is Action.UNCHANGED
    assert path.read_text(encoding="utf-8") == reordered


def test_a_real_change_in_a_codex_rewritten_file_touches_only_that_key(ctx, install_dir,
                                                                       tmp_path):
    text = rewritten_by_codex(install_dir, tmp_path / "data",
                              "tool_timeout_sec = 120.0", "tool_timeout_sec = 60.0")
    path = config_file(ctx, text)
    outcome = CodexHost(ctx).install(entries(ctx, install_dir, tmp_path / "data"))
    assert outcome.entries[0].action is Action.UPDATED
    written = path.read_text(encoding="utf-8")
    assert written == text.replace("tool_timeout_sec = 60.0", "tool_timeout_sec = 120")
    assert "args" not in tomllib.loads(written)["mcp_servers"]["ndl-mcp"]  # not re-added
    assert [b.read_text(encoding="utf-8") for b in backups(path)] == [text]


def test_a_value_of_another_type_is_a_change(ctx, install_dir, tmp_path):
    text = rewritten_by_codex(install_dir, tmp_path / "data",
                              "startup_timeout_sec = 30.0", 'startup_timeout_sec = "30"')
    config_file(ctx, text)
    outcome = CodexHost(ctx).install(entries(ctx, install_dir, tmp_path / "data"))
    assert outcome.entries[0].action is Action.UPDATED
