"""The machine: paths joined for the platform it describes, and the suite's data folder."""

from __future__ import annotations

from pathlib import Path, PureWindowsPath

import platformdirs
import pytest

from readingroom.core.platform import (
    DATA_DIR_NAME_WINDOWS,
    Machine,
    default_data_dir,
    server_data_dir,
)


def test_windows_paths_are_written_for_windows_from_anywhere(tmp_path: Path):
    windows = Machine(home=tmp_path, platform="win32")
    joined = windows.join("C:\\Program Files\\RR", windows.executable_name("ndl-mcp"))
    assert PureWindowsPath(joined) == PureWindowsPath("C:/Program Files/RR/ndl-mcp.exe")
    assert windows.absolute("C:\\Users\\a") == "C:\\Users\\a"


def test_join_refuses_a_relative_folder_and_absolute_resolves_one(tmp_path: Path, monkeypatch):
    linux = Machine(home=tmp_path, platform="linux")
    with pytest.raises(ValueError, match="not an absolute path"):
        linux.join("relative/folder", "x")
    monkeypatch.chdir(tmp_path)
    assert linux.absolute("sub") == str((tmp_path / "sub").resolve())
    assert linux.join(tmp_path, "x") == str(tmp_path / "x")
    assert linux.executable_name("ndl-mcp") == "ndl-mcp"


def test_config_home_and_roaming_fall_back_to_the_home_folder(tmp_path: Path):
    assert Machine(home=tmp_path).config_home() == tmp_path / ".config"
    relative = Machine(home=tmp_path, env={"XDG_CONFIG_HOME": "not/absolute"})
    assert relative.config_home() == tmp_path / ".config"
    xdg = Machine(home=tmp_path, env={"XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    assert xdg.config_home() == tmp_path / "xdg"
    assert Machine(home=tmp_path).roaming() == tmp_path / "AppData" / "Roaming"
    assert Machine(home=tmp_path, appdata=tmp_path / "R").roaming() == tmp_path / "R"


def test_current_reads_the_running_system(monkeypatch, tmp_path: Path):
    monkeypatch.setenv("APPDATA", str(tmp_path / "roaming"))
    monkeypatch.delenv("LOCALAPPDATA", raising=False)
    current = Machine.current()
    assert current.home == Path.home()
    assert current.appdata == tmp_path / "roaming" and current.localappdata is None
    assert current.env["APPDATA"] == str(tmp_path / "roaming")


def test_default_data_dir_is_outside_appdata_on_windows(tmp_path: Path):
    windows = Machine(home=tmp_path / "alice", appdata=tmp_path / "alice" / "AppData",
                      platform="win32")
    assert default_data_dir(windows) == tmp_path / "alice" / DATA_DIR_NAME_WINDOWS
    linux = Machine(home=tmp_path, platform="linux")
    assert default_data_dir(linux) == platformdirs.user_data_path("readingroom",
                                                                  appauthor=False)


def test_a_servers_data_dir_is_its_variable_else_the_suites_folder_plus_its_name(tmp_path: Path):
    windows = Machine(home=tmp_path / "alice", platform="win32")
    assert server_data_dir("book-agent", "BOOK_AGENT_DATA_DIR", windows) == (
        tmp_path / "alice" / DATA_DIR_NAME_WINDOWS / "book-agent")
    chosen = Machine(home=tmp_path, platform="linux",
                     env={"BOOK_AGENT_DATA_DIR": f" {tmp_path / 'mine'} "})
    assert server_data_dir("book-agent", "BOOK_AGENT_DATA_DIR", chosen) == tmp_path / "mine"
    blank = Machine(home=tmp_path, platform="linux", env={"BOOK_AGENT_DATA_DIR": "  "})
    assert server_data_dir("book-agent", "BOOK_AGENT_DATA_DIR", blank) == (
        default_data_dir(blank) / "book-agent")
