"""A throwaway world for the real hosts: a temp home, a data folder, loopback fakes only.

Every host's config home is inside the test's temp folder (``HOME``, ``USERPROFILE``,
``CODEX_HOME``, the XDG folders, ``APPDATA``/``LOCALAPPDATA``), never the real one. Hosts that
honour proxy variables are pointed at :class:`Outside`, a loopback recorder standing in for the
internet, and each test asserts it saw nothing: a request a host makes on its own (telemetry,
update checks, a model endpoint) fails the test instead of leaving the machine. Codex ignores
proxy variables, so its model, ChatGPT and OpenAI endpoints are set to the recorder through its
own ``-c`` overrides (``CODEX_OFFLINE_OVERRIDES``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from readingroom.catalog import SERVERS
from readingroom.core.declaration import ServerInfo
from readingroom.core.loopback import SHUTDOWN_POLL_S
from tests import forked

from .install import HostPrograms
from .servers import host_case

__all__ = [
    "RUN_TIMEOUT_S",
    "Outside",
    "World",
    "codex_offline_overrides",
    "install_dir",
    "outside",
    "server_executable",
    "tool_arg",
]

RUN_TIMEOUT_S = 120.0
"""Upper bound for one host command (each takes a few seconds here)."""

_SECRET_NAMES = ("OPENAI_API_KEY", "CODEX_API_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN",
                 "CLAUDE_CODE_OAUTH_TOKEN", "GEMINI_API_KEY", "GOOGLE_API_KEY",
                 "GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_CLOUD_PROJECT")
_HOME_NAMES = ("CODEX_HOME", "CLAUDE_CONFIG_DIR", "GEMINI_CLI_TRUSTED_FOLDERS_PATH",
               "GEMINI_CLI_TRUST_WORKSPACE", "GEMINI_CLI_HOME", "MCP_CATALOG_PATH",
               "npm_config_prefix", "NPM_CONFIG_PREFIX")

QUIET_HOSTS = {
    # Claude Code: no telemetry, error reports, update checks or other background requests
    # (without these it resolves its telemetry hosts even for `claude mcp list`).
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "NO_UPDATE_NOTIFIER": "1",
    "npm_config_update_notifier": "false",
    "NO_COLOR": "1",
    "CI": "1",
}


def install_dir() -> Path:
    """The folder holding the installed server executables (this virtual environment's)."""
    return Path(sys.executable).parent


def server_executable(info: ServerInfo) -> Path:
    """The installed executable of a server, as ``install-host`` writes it into host entries."""
    return install_dir() / (f"{info.name}.exe" if os.name == "nt" else info.name)


class Outside:
    """A loopback HTTP server standing in for the internet: it records and answers 503."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        outside = self

        class Handler(BaseHTTPRequestHandler):
            def _record(self) -> None:
                outside.seen.append(f"{self.command} {self.path} (Host: {self.headers['Host']})")
                self.send_response(503)
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_GET = do_POST = do_PUT = do_CONNECT = do_HEAD = _record

            def log_message(self, *args: object) -> None:  # keep stderr quiet
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        args=(SHUTDOWN_POLL_S,), daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def close(self) -> None:
        """Stop serving."""
        self._server.shutdown()
        self._server.server_close()


@contextmanager
def outside() -> Iterator[Outside]:
    """An :class:`Outside` for the duration of the block."""
    recorder = Outside()
    try:
        yield recorder
    finally:
        recorder.close()


def codex_offline_overrides(outside_url: str) -> list[str]:
    """``-c``/``--disable`` arguments that keep ``codex`` off the network.

    Observed with Codex 0.171.0 (strace): ``thread/start`` opens a Responses websocket to the
    default provider, and start-up runs ``git ls-remote https://github.com/openai/plugins.git``
    and resolves ``chatgpt.com`` and ``api.github.com`` (plugins, remote plugins, apps). With
    these, its only connections are to loopback.
    """
    provider = (f'model_providers.loopback={{name="loopback", base_url="{outside_url}/v1", '
                'wire_api="responses"}')
    return [
        "-c", 'model_provider="loopback"', "-c", provider,
        "-c", f'chatgpt_base_url="{outside_url}/backend-api/"',
        "-c", f'openai_base_url="{outside_url}/v1"',
        "-c", "check_for_update_on_startup=false",
        "--disable", "plugins", "--disable", "remote_plugin", "--disable", "apps",
    ]


@dataclass
class World:
    """One test's temp home, data folder and host environment."""

    root: Path
    hosts: HostPrograms
    outside_url: str
    env: dict[str, str] = field(init=False)

    def __post_init__(self) -> None:
        self.home = self.root / "home"
        self.data_dir = self.root / "data"
        self.workdir = self.root / "work"
        self.codex_home = self.home / ".codex"
        for folder in (self.home, self.data_dir, self.workdir, self.codex_home):
            folder.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ)
        settings = {s.name for info in SERVERS.values() for s in info.all_settings}
        for name in (*settings, *_SECRET_NAMES, *_HOME_NAMES):
            env.pop(name, None)
        for name in [n for n in env if n.upper().startswith(("NPM_CONFIG_", "READINGROOM_"))]:
            env.pop(name)
        env.update(QUIET_HOSTS)
        env.update({
            "HOME": str(self.home),
            "USERPROFILE": str(self.home),
            "CODEX_HOME": str(self.codex_home),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_DATA_HOME": str(self.home / ".local" / "share"),
            "XDG_CACHE_HOME": str(self.home / ".cache"),
            "XDG_STATE_HOME": str(self.home / ".local" / "state"),
            "APPDATA": str(self.home / "AppData" / "Roaming"),
            "LOCALAPPDATA": str(self.home / "AppData" / "Local"),
            "PATH": self.hosts.path_env(env.get("PATH", "")),
            "HTTP_PROXY": self.outside_url,
            "HTTPS_PROXY": self.outside_url,
            "ALL_PROXY": self.outside_url,
            "http_proxy": self.outside_url,
            "https_proxy": self.outside_url,
            "NO_PROXY": "127.0.0.1,localhost,::1",
            "no_proxy": "127.0.0.1,localhost,::1",
            "PYTHONUTF8": "1",
            # Node's compile cache beside the pinned install (outside the work tree): the
            # Inspector and Gemini CLI start many times a run, each compiling its bundle anew.
            "NODE_COMPILE_CACHE": str(self.hosts.root / "node-compile-cache"),
        })
        self.env = env

    def run(self, argv: Sequence[str], *, extra_env: Mapping[str, str] | None = None,
            timeout: float = RUN_TIMEOUT_S) -> subprocess.CompletedProcess[str]:
        """Run one command in this world (cwd: the work folder); never raises on exit status."""
        env = {**self.env, **(extra_env or {})}
        return subprocess.run(list(argv), cwd=self.workdir, env=env, capture_output=True,
                              text=True, encoding="utf-8", errors="replace", timeout=timeout)

    def readingroom(self, *args: str) -> subprocess.CompletedProcess[str]:
        """``readingroom ARGS`` from this virtual environment, in this world (a fork of the
        test process where it can be: :mod:`tests.forked`)."""
        return forked.readingroom(list(args), cwd=self.workdir, env=self.env, text=True,
                                  encoding="utf-8", errors="replace", timeout=RUN_TIMEOUT_S)

    def open_gates(self) -> None:
        """Record every gated server's gate in the data folder (``readingroom setup``)."""
        args = []
        for info in SERVERS.values():
            if info.gate is not None:
                value = host_case(info).gate_value
                assert value is not None, f"{info.name} has a gate but its HostCase no value"
                args += [info.gate.option, value()]
        if not args:
            return
        done = self.readingroom("setup", *args, "--hosts", "none", "--no-self-test",
                                "--data-dir", str(self.data_dir))
        assert done.returncode == 0, done.stdout + done.stderr

    def install_host(self, host: str, *more: str) -> subprocess.CompletedProcess[str]:
        """``readingroom install-host --host HOST`` for this world's install and data folder."""
        return self.readingroom("install-host", "--host", host, "--install-dir",
                                str(install_dir()), "--data-dir", str(self.data_dir), *more)


def tool_arg(key: str, value: object) -> str:
    """One Inspector ``--tool-arg``: the value as JSON, so ``"20000001"`` stays a string."""
    return f"{key}={json.dumps(value, ensure_ascii=False)}"
