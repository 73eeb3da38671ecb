"""Gemini CLI folder trust: verify reports what Gemini would decide for the current folder.

The trust files are hand-written in the shape Gemini CLI 0.61 writes them
(``JSON.stringify(rules, null, 2)`` of ``{"<folder>": "TRUST_FOLDER" | "TRUST_PARENT" |
"DO_NOT_TRUST"}`` in ``~/.gemini/trustedFolders.json``).
"""

from __future__ import annotations

import json
from datetime import date, datetime
from pathlib import Path

import pytest

from readingroom.catalog import SERVERS
from readingroom.cli import build_parser
from readingroom.core.platform import Machine
from readingroom.hosts import Action, build_entries
from readingroom.hosts.gemini import TRUSTED_FOLDERS_NAME, GeminiHost, Trust

NOW = datetime(2026, 9, 3, 9, 0, 0)


def machine(tmp_path: Path, platform: str = "linux", **env: str) -> Machine:
    env.setdefault("GEMINI_CLI_SYSTEM_SETTINGS_PATH", str(tmp_path / "system" / "settings.json"))
    return Machine(home=tmp_path / "home", platform=platform, env=env, now=lambda: NOW)


def write(path: Path, value) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=2) if not isinstance(value, str) else value,
                    encoding="utf-8")


def trust_rules(tmp_path: Path, rules) -> Path:
    path = tmp_path / "home" / ".gemini" / TRUSTED_FOLDERS_NAME
    write(path, rules)
    return path


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "projects" / "thesis"
    folder.mkdir(parents=True)
    return folder


def test_no_trust_file_is_untrusted_and_says_what_to_do(tmp_path, work):
    host = GeminiHost(machine(tmp_path))
    trust = host.folder_trust({}, work)
    assert trust.state is Trust.UNTRUSTED
    assert "/permissions trust" in trust.detail
    assert json.dumps(str(work)) + ': "TRUST_FOLDER"' in trust.detail
    assert str(tmp_path / "home" / ".gemini" / TRUSTED_FOLDERS_NAME) in trust.detail
    assert "gemini mcp list" in trust.detail


@pytest.mark.parametrize("rules, expected", [
    ({"{work}": "TRUST_FOLDER"}, Trust.TRUSTED),
    ({"{projects}": "TRUST_FOLDER"}, Trust.TRUSTED),  # a parent trusted covers its folders
    ({"{work}/child": "TRUST_PARENT"}, Trust.TRUSTED),  # TRUST_PARENT: the rule's parent
    ({"{projects}": "TRUST_FOLDER", "{work}": "DO_NOT_TRUST"}, Trust.UNTRUSTED),
    ({"{projects}": "DO_NOT_TRUST", "{work}": "TRUST_FOLDER"}, Trust.TRUSTED),  # longest wins
    ({"{work}-old": "TRUST_FOLDER"}, Trust.UNTRUSTED),  # a name prefix is not a parent
    ({"{work}/sub": "TRUST_FOLDER"}, Trust.UNTRUSTED),  # a child does not cover its parent
    ({}, Trust.UNTRUSTED),
])
def test_rules_are_read_as_gemini_reads_them(tmp_path, work, rules, expected):
    names = {"work": str(work), "projects": str(work.parent)}
    trust_rules(tmp_path, {k.format(**names): v for k, v in rules.items()})
    assert GeminiHost(machine(tmp_path)).folder_trust({}, work).state is expected


def test_trust_parent_covers_the_parent_and_its_other_children(tmp_path, work):
    trust_rules(tmp_path, {str(work.parent / "other"): "TRUST_PARENT"})
    host = GeminiHost(machine(tmp_path))
    assert host.folder_trust({}, work).state is Trust.TRUSTED
    assert host.folder_trust({}, work.parent).state is Trust.TRUSTED
    assert host.folder_trust({}, tmp_path).state is Trust.UNTRUSTED


def test_a_folder_reached_through_a_symlink_counts_as_its_real_path(tmp_path, work):
    link = tmp_path / "link-to-thesis"
    link.symlink_to(work, target_is_directory=True)
    trust_rules(tmp_path, {str(work): "TRUST_FOLDER"})
    assert GeminiHost(machine(tmp_path)).folder_trust({}, link).state is Trust.TRUSTED


def test_windows_paths_compare_without_case(tmp_path):
    work = tmp_path / "Users" / "Alice" / "Work"
    trust_rules(tmp_path, {str(work).upper(): "TRUST_FOLDER"})
    host = GeminiHost(machine(tmp_path, platform="win32"))
    lower = Path(str(work).lower())
    assert host.folder_trust({}, lower / "thesis").state is Trust.TRUSTED
    assert host.folder_trust({}, lower.with_name("workshop")).state is Trust.UNTRUSTED


def test_folder_trust_switched_off_in_settings(tmp_path, work):
    off = {"security": {"folderTrust": {"enabled": False}}}
    host = GeminiHost(machine(tmp_path))
    trust = host.folder_trust(off, work)
    assert trust.state is Trust.OFF and "every folder" in trust.detail
    # System settings win over the user's.
    write(tmp_path / "system" / "settings.json", {"security": {"folderTrust": {"enabled": True}}})
    assert host.folder_trust(off, work).state is Trust.UNTRUSTED
    write(tmp_path / "system" / "settings.json", off)
    assert host.folder_trust({}, work).state is Trust.OFF


def test_the_environment_decides_first(tmp_path, work):
    trust_rules(tmp_path, {str(work): "TRUST_FOLDER"})
    assert GeminiHost(machine(tmp_path, GEMINI_CLI_TRUST_WORKSPACE="false")).folder_trust(
        {}, work).state is Trust.UNTRUSTED
    assert GeminiHost(machine(tmp_path, GEMINI_RESTRICTED_MODE="true")).folder_trust(
        {}, work).state is Trust.UNTRUSTED
    trust_rules(tmp_path, {})
    trusted = GeminiHost(machine(tmp_path, GEMINI_CLI_TRUST_WORKSPACE="true")).folder_trust(
        {}, work)
    assert trusted.state is Trust.TRUSTED and "GEMINI_CLI_TRUST_WORKSPACE" in trusted.detail


@pytest.mark.parametrize("content, said", [
    ("{not json", "cannot be read"),
    ('["/x"]', "not a JSON object"),
    ('{"/x": "TRUST"}', "invalid trust levels"),
])
def test_a_trust_file_gemini_would_refuse_is_unknown(tmp_path, work, content, said):
    trust_rules(tmp_path, content)
    trust = GeminiHost(machine(tmp_path)).folder_trust({}, work)
    assert trust.state is Trust.UNKNOWN
    assert said in trust.detail and "refuses to start" in trust.detail


def test_unreadable_system_settings_are_unknown(tmp_path, work):
    write(tmp_path / "system" / "settings.json", "{oops")
    trust = GeminiHost(machine(tmp_path)).folder_trust({}, work)
    assert trust.state is Trust.UNKNOWN and "cannot be read" in trust.detail


def test_gemini_cli_home_and_trusted_folders_path_are_honoured(tmp_path, work):
    alt = tmp_path / "alt-home"
    host = GeminiHost(machine(tmp_path, GEMINI_CLI_HOME=str(alt)))
    assert host.candidate_paths() == [alt / ".gemini" / "settings.json"]
    assert host.trusted_folders_path() == alt / ".gemini" / TRUSTED_FOLDERS_NAME
    explicit = tmp_path / "rules.json"
    write(explicit, {str(work): "TRUST_FOLDER"})
    host = GeminiHost(machine(tmp_path, GEMINI_CLI_TRUSTED_FOLDERS_PATH=str(explicit)))
    assert host.trusted_folders_path() == explicit
    assert host.folder_trust({}, work).state is Trust.TRUSTED


def test_verify_reports_the_trust_of_the_current_folder_without_failing(
        tmp_path, work, install_dir, monkeypatch):
    monkeypatch.chdir(work)
    ctx = machine(tmp_path)
    host = GeminiHost(ctx)
    wanted = build_entries(SERVERS.values(), install_dir, tmp_path / "data", ctx)
    host.install(wanted)

    untrusted = host.verify(wanted)
    assert untrusted.ok and untrusted.entries[0].action is Action.OK
    assert f"folder trust for {work}: untrusted - " in untrusted.render()

    trust_rules(tmp_path, {str(work): "TRUST_FOLDER"})
    assert f"folder trust for {work}: trusted" in host.verify(wanted).render()

    settings = host.candidate_paths()[0]
    doc = json.loads(settings.read_text(encoding="utf-8"))
    doc["security"] = {"folderTrust": {"enabled": False}}
    settings.write_text(json.dumps(doc), encoding="utf-8")
    assert f"folder trust for {work}: trust feature off" in host.verify(wanted).render()


def test_install_host_verify_prints_the_trust_and_exits_0(tmp_path, work, install_dir,
                                                         monkeypatch, capsys):
    monkeypatch.chdir(work)
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    gate = SERVERS["ndl-mcp"].gate
    if gate is not None:
        gate.resolve().record(data_dir, "2026-08-19", today=date(2026, 8, 20))
    ctx = machine(tmp_path)
    argv = ["install-host", "--host", "gemini", "--install-dir", str(install_dir),
            "--data-dir", str(data_dir)]
    for extra in ([], ["--verify"]):
        args = build_parser().parse_args(argv + extra)
        assert args.func(args, ctx=ctx) == 0
    out = capsys.readouterr().out
    assert "ndl-mcp: ok" in out
    assert f"folder trust for {work}: untrusted" in out and "/permissions trust" in out
