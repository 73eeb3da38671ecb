"""The machine the suite runs on: the user's folders, environment, clock, programs, data folder.

Everything that depends on where it runs (host config locations, the installer's data folder,
paths written for Windows from another system) reads a :class:`Machine` instead of ``os`` and
``sys`` directly, so tests hand in a fake home, platform, ``which`` and ``run``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path, PurePosixPath, PureWindowsPath

__all__ = ["DATA_DIR_NAME_WINDOWS", "Machine", "Runner", "default_data_dir", "server_data_dir"]

DATA_DIR_NAME_WINDOWS = "ReadingRoom"
"""The data folder's name in the user's profile on Windows."""

Runner = Callable[[Sequence[str]], "subprocess.CompletedProcess[str]"]
"""How a :class:`Machine` runs a program: argv in, completed process (text output) out."""


def _run_command(argv: Sequence[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(argv), capture_output=True, text=True, encoding="utf-8", errors="replace",
        timeout=120, check=False,
    )


@dataclass(frozen=True)
class Machine:
    """Where the user's files are, and how to find and run programs; injectable for tests."""

    home: Path
    appdata: Path | None = None
    """``%APPDATA%`` (Windows roaming application data)."""
    localappdata: Path | None = None
    """``%LOCALAPPDATA%`` (Windows local application data; MSIX packages live under it)."""
    env: Mapping[str, str] = field(default_factory=dict)
    platform: str = sys.platform
    """``win32``, ``darwin`` or ``linux`` (as :data:`sys.platform`)."""
    now: Callable[[], datetime] = datetime.now
    which: Callable[[str], str | None] = shutil.which
    run: Runner = _run_command

    @classmethod
    def current(cls) -> Machine:
        """The running user and system."""
        env = dict(os.environ)
        appdata = env.get("APPDATA")
        localappdata = env.get("LOCALAPPDATA")
        return cls(
            home=Path.home(),
            appdata=Path(appdata) if appdata else None,
            localappdata=Path(localappdata) if localappdata else None,
            env=env,
            platform=sys.platform,
        )

    @property
    def is_windows(self) -> bool:
        """True on Windows."""
        return self.platform == "win32"

    @property
    def is_macos(self) -> bool:
        """True on macOS."""
        return self.platform == "darwin"

    def config_home(self) -> Path:
        """``$XDG_CONFIG_HOME`` when set to an absolute path, else ``~/.config``."""
        configured = self.env.get("XDG_CONFIG_HOME", "")
        if configured and Path(configured).is_absolute():
            return Path(configured)
        return self.home / ".config"

    def roaming(self) -> Path:
        """``%APPDATA%`` (falling back to ``~/AppData/Roaming`` when unset)."""
        return self.appdata or self.home / "AppData" / "Roaming"

    def executable_name(self, name: str) -> str:
        """``name`` with ``.exe`` on Windows."""
        return f"{name}.exe" if self.is_windows else name

    def _pure(self, text: str) -> PurePosixPath | PureWindowsPath:
        return PureWindowsPath(text) if self.is_windows else PurePosixPath(text)

    def absolute(self, value: str | os.PathLike[str]) -> str:
        """``value`` unchanged when already absolute, else resolved against the cwd."""
        text = os.fspath(value)
        if Path(text).is_absolute() or self._pure(text).is_absolute():
            return text
        return str(Path(text).resolve())

    def join(self, folder: str | os.PathLike[str], name: str) -> str:
        """``folder/name`` as an absolute path string.

        A folder absolute on the running system is joined natively; otherwise it must be
        absolute for the machine's platform (``C:\\…`` written for Windows from elsewhere).

        Raises:
            ValueError: ``folder`` is not absolute.
        """
        text = os.fspath(folder)
        if Path(text).is_absolute():
            return str(Path(text) / name)
        if not self._pure(text).is_absolute():
            raise ValueError(f"{text!r} is not an absolute path")
        return str(self._pure(text) / name)


def default_data_dir(machine: Machine | None = None) -> Path:
    """The suite's data folder (receipt ledger, gate records such as the NDL notification).

    On Windows ``%USERPROFILE%\\ReadingRoom``, deliberately outside AppData: an MSIX-packaged
    host (Claude Desktop from the Store) silently redirects its children's AppData writes into
    a private per-package folder, so a ledger there would split into one copy per host.
    Elsewhere ``platformdirs.user_data_path("readingroom")``.
    """
    context = machine or Machine.current()
    if context.is_windows:
        return context.home / DATA_DIR_NAME_WINDOWS
    import platformdirs

    return platformdirs.user_data_path("readingroom", appauthor=False)


def server_data_dir(name: str, variable: str, machine: Machine | None = None) -> Path:
    """A server's own data folder: ``$variable`` when set, else the suite's data folder + ``name``.

    The same rule as the host entries' ``{data_dir}/<name>`` (a server's ``data_args``), so a
    server started by hand finds what it finds when a host starts it.
    """
    context = machine or Machine.current()
    configured = context.env.get(variable, "").strip()
    if configured:
        return Path(configured)
    return default_data_dir(context) / name
