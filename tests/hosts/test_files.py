"""Host config files on disk: read with a BOM tolerated, strict JSON, backups, the write."""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path

import pytest

from readingroom.hosts.files import (
    backup_path,
    parse_json_config,
    plain,
    read_config_text,
    write_config,
)
from readingroom.hosts.outcome import ConfigParseError, ConfigWriteError

NOW = datetime(2026, 9, 1, 9, 0, 0)


def test_a_bom_is_reported_and_stripped_and_a_missing_file_reads_as_none(tmp_path: Path):
    path = tmp_path / "c.json"
    assert read_config_text(path).text is None
    path.write_bytes("\ufeff{}".encode())
    source = read_config_text(path)
    assert source.text == "{}" and source.had_bom


def test_text_that_is_not_utf8_or_not_a_file_is_refused(tmp_path: Path):
    path = tmp_path / "c.json"
    path.write_bytes(b'{"a": "\xff"}')
    with pytest.raises(ConfigParseError, match="not UTF-8"):
        read_config_text(path)
    with pytest.raises(ConfigParseError, match="is a folder"):
        read_config_text(tmp_path)


def test_json_is_parsed_strictly(tmp_path: Path):
    assert parse_json_config("  \n", tmp_path / "c.json") == {}
    with pytest.raises(ConfigParseError, match="duplicate key 'a'"):
        parse_json_config('{"a": 1, "a": 2}', tmp_path / "c.json")
    with pytest.raises(ConfigParseError, match="line 1, column 10"):
        parse_json_config('{"a": 1, }', tmp_path / "c.json")


def test_backup_names_do_not_collide(tmp_path: Path):
    path = tmp_path / "c.json"
    first = backup_path(path, NOW)
    assert first.name == "c.json.bak-20260901-090000"
    first.write_text("x")
    assert backup_path(path, NOW).name == "c.json.bak-20260901-090000-2"


def test_write_config_backs_up_keeps_the_mode_and_writes_no_bom(tmp_path: Path):
    path = tmp_path / "sub" / "c.json"
    assert write_config(path, "{}\n", original=None, now=lambda: NOW) is None
    assert path.read_bytes() == b"{}\n"
    os.chmod(path, 0o600)
    backup = write_config(path, '{"é": 1}\n', original=b"{}\n", now=lambda: NOW)
    assert backup is not None and backup.read_bytes() == b"{}\n"
    assert path.read_bytes() == '{"é": 1}\n'.encode()
    if os.name != "nt":
        assert path.stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in path.parent.iterdir()) == ["c.json", backup.name]


def test_a_failed_write_is_a_config_write_error(tmp_path: Path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(ConfigWriteError, match="could not write"):
        write_config(blocker / "c.json", "{}", original=None)


def test_plain_unwraps_tomlkit_items_only():
    import tomlkit

    doc = tomlkit.parse('a = {b = 1}\n')
    assert plain(doc["a"]) == {"b": 1} and type(plain(doc["a"])) is dict
    assert plain([1]) == [1]


def test_same_meaning_ignores_form_but_not_value_or_type():
    import tomlkit

    from readingroom.hosts.entries import same_meaning

    assert same_meaning(30.0, 30) and same_meaning(120000, 120000.0)
    assert not same_meaning(30.5, 30)
    assert not same_meaning(True, 1) and not same_meaning(1, True)
    assert same_meaning(False, False) and not same_meaning(False, 0.0)
    assert not same_meaning("30", 30)
    assert same_meaning({"b": 2, "a": 1.0}, {"a": 1, "b": 2})
    assert not same_meaning({"a": 1}, {"a": 1, "b": 2})
    assert same_meaning(["x", 1.0], ["x", 1]) and not same_meaning(["x"], ["x", "y"])
    assert not same_meaning(["b", "a"], ["a", "b"])  # argument order is meaning
    assert not same_meaning("ab", ["a", "b"])
    doc = tomlkit.parse('[t]\nx = 30.0\n[t.env]\nK = "v"\n')
    assert same_meaning(doc["t"], {"env": {"K": "v"}, "x": 30})
    inline = tomlkit.parse('t = {env = {K = "v"}, x = 30}\n')
    assert same_meaning(inline["t"], doc["t"])


def test_line_endings_follow_the_file():
    from readingroom.hosts.files import keep_line_ending, line_ending

    assert line_ending(None) == line_ending("") == line_ending("a\nb\r\n") == "\n"
    assert line_ending("a\r\nb\r\nc\n") == "\r\n"
    assert keep_line_ending("x\r\ny\nz\n", "a\r\n") == "x\r\ny\r\nz\r\n"
    assert keep_line_ending("x\r\ny\n", "a\n") == "x\r\ny\n"  # an LF file's own lines stay


def test_strict_json_names_the_position_and_never_raises_otherwise(tmp_path: Path):
    path = tmp_path / "c.json"
    with pytest.raises(ConfigParseError, match="line 2, column 7: NaN"):
        parse_json_config('{"s": "NaN",\n "x": NaN}', path)  # the string does not count
    with pytest.raises(ConfigParseError, match="nested more than"):
        parse_json_config("[" * 100_000, path)
    assert parse_json_config('{"a": 1, "a": 2}', path, refuse_duplicates=False) == {"a": 2}
    assert parse_json_config('{"big": 1.7976931348623157e308, "n": -0}', path)["n"] == 0


def test_a_lock_held_elsewhere_is_waited_for_then_refused(tmp_path: Path):
    from filelock import FileLock

    from readingroom.hosts.files import config_lock, lock_path

    path = tmp_path / "sub" / "c.json"
    assert lock_path(path) == tmp_path / "sub" / ".c.json.lock"
    with config_lock([path, path]):  # the same file twice is one lock
        assert lock_path(path).exists()
    held = FileLock(lock_path(path))
    with held, pytest.raises(ConfigWriteError, match="holds its lock"), \
            config_lock([path], timeout=0.05):
        pass


def test_a_file_changed_since_it_was_read_is_not_replaced(tmp_path: Path):
    from readingroom.hosts.outcome import ConfigChangedError

    path = tmp_path / "c.json"
    path.write_bytes(b'{"theirs": 1}')
    with pytest.raises(ConfigChangedError, match="another program changed it"):
        write_config(path, "{}\n", original=b"{}", now=lambda: NOW)
    with pytest.raises(ConfigChangedError):
        write_config(path, "{}\n", original=None, now=lambda: NOW)  # it appeared meanwhile
    assert path.read_bytes() == b'{"theirs": 1}'
    assert [p.name for p in tmp_path.iterdir()] == ["c.json"]  # no backup left
