"""The pinned host programs: installed once per lock file into a cache outside the work tree.

``package.json`` and ``package-lock.json`` beside this file pin the MCP Inspector, Codex, Claude
Code, Gemini CLI and a Node 22 runtime (the ``node-<platform>`` packages of the npm registry:
Inspector 2.x and Claude Code declare node >= 22, and the machine's node may be older). They
are installed with ``npm ci --ignore-scripts`` into
``$READINGROOM_HOSTS_CACHE`` (default ``~/.cache/readingroom-hosts``) ``/<hash of the two
files>``: into a temporary sibling first, renamed into place when complete, so a session that
was interrupted never sees half an install. The install holds a lock file beside it
(``<hash>.lock``), so parallel test workers (pytest-xdist) or sessions that start together
install once: the others wait, then find the cache warm. The one install script a
host needs, Claude Code's (it puts the native binary in place of a stub), is then run with the
pinned node; no other package's install script runs.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock, Timeout

__all__ = [
    "HERE",
    "MIN_NODE",
    "HostPrograms",
    "HostsUnavailable",
    "cache_root",
    "install",
    "lock_hash",
]

HERE = Path(__file__).resolve().parent
MANIFESTS = ("package.json", "package-lock.json")
MIN_NODE = (22, 19, 0)
"""The newest engine any pinned host declares (Inspector 2.12.0: node >= 22.19)."""

INSTALL_TIMEOUT_S = 900.0
WINDOWS = os.name == "nt"


class HostsUnavailable(RuntimeError):
    """The host programs cannot be run here (no node/npm, or the install failed)."""


@dataclass(frozen=True)
class HostPrograms:
    """An installed set of the pinned host programs."""

    root: Path
    """The install prefix (holds ``node_modules``)."""
    node: Path
    """The Node runtime (>= :data:`MIN_NODE`) the hosts run on."""
    install_seconds: float
    """How long this session spent installing (0 when the cache was warm)."""

    @property
    def bin_dir(self) -> Path:
        """``node_modules/.bin``: ``inspector``, ``codex``, ``claude``, ``gemini``, ``node``."""
        return self.root / "node_modules" / ".bin"

    def path_env(self, inherited: str | None = None) -> str:
        """``PATH`` with the pinned node and the host programs first."""
        first = [str(self.node.parent), str(self.bin_dir)]
        rest = inherited if inherited is not None else os.environ.get("PATH", "")
        return os.pathsep.join([*first, rest] if rest else first)

    def program(self, name: str) -> str:
        """The absolute path of one host program (``codex``, ``claude``...)."""
        found = shutil.which(name, path=os.pathsep.join([str(self.bin_dir)]))
        if found is None:
            raise HostsUnavailable(f"{name} is not in {self.bin_dir}")
        return found


def lock_hash() -> str:
    """The cache key: a hash of ``package.json`` and ``package-lock.json``."""
    digest = hashlib.sha256()
    for name in MANIFESTS:
        digest.update(name.encode() + b"\0" + (HERE / name).read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def cache_root() -> Path:
    """Where installs live: ``$READINGROOM_HOSTS_CACHE`` or ``~/.cache/readingroom-hosts``."""
    configured = os.environ.get("READINGROOM_HOSTS_CACHE", "").strip()
    if configured:
        return Path(configured).expanduser().resolve()
    return Path.home() / ".cache" / "readingroom-hosts"


def _version(node: Path | str) -> tuple[int, ...] | None:
    try:
        done = subprocess.run([str(node), "--version"], capture_output=True, text=True,
                              timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.match(r"v(\d+)\.(\d+)\.(\d+)", done.stdout.strip())
    return tuple(int(p) for p in match.groups()) if match else None


def _pinned_node(root: Path) -> Path | None:
    """The node of the installed ``node-<platform>`` package, if this platform has one."""
    names = ("node.exe", "bin/node.exe") if WINDOWS else ("bin/node",)
    for package in sorted((root / "node_modules").glob("node-*-*")):
        for name in names:
            if (package / name).is_file():
                return package / name
    return None


def _run_npm(npm: str, args: list[str], cwd: Path) -> None:
    env = dict(os.environ, npm_config_update_notifier="false", npm_config_fund="false",
               npm_config_audit="false", npm_config_engine_strict="false")
    try:
        done = subprocess.run([npm, *args], cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=INSTALL_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise HostsUnavailable(f"npm {' '.join(args)} took over {INSTALL_TIMEOUT_S:g} s") from None
    if done.returncode != 0:
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-15:])
        raise HostsUnavailable(f"npm {' '.join(args)} failed (exit {done.returncode}):\n{tail}")


def _claude_postinstall(root: Path, node: Path) -> None:
    """Claude Code's own install step: the native binary replaces the ``bin/claude.exe`` stub."""
    script = root / "node_modules" / "@anthropic-ai" / "claude-code" / "install.cjs"
    done = subprocess.run([str(node), str(script)], cwd=script.parent, capture_output=True,
                          text=True, timeout=300)
    if done.returncode != 0:
        raise HostsUnavailable(f"Claude Code's install.cjs failed: {done.stderr.strip()}")


def _install_into(root: Path, npm: str) -> None:
    """``npm ci`` into a temporary sibling of ``root``, renamed into place when complete."""
    staging = root.with_name(f"{root.name}.tmp-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    try:
        for name in MANIFESTS:
            shutil.copyfile(HERE / name, staging / name)
        _run_npm(npm, ["ci", "--prefix", str(staging), "--ignore-scripts", "--no-audit",
                       "--no-fund"], staging)
        node = _pinned_node(staging) or Path(shutil.which("node") or "node")
        _claude_postinstall(staging, node)
        (staging / ".complete").write_text(f"{sys.version}\n", encoding="utf-8")
        try:
            staging.rename(root)
        except OSError:
            if not (root / ".complete").is_file():  # a session without the lock won the race
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def install() -> HostPrograms:
    """The pinned host programs, installed now unless the cache already holds them.

    Raises:
        HostsUnavailable: node or npm is missing, the install failed, or no node >= 22.19 can
            be found (this platform has no ``node-<platform>`` package and the machine's node
            is older).
    """
    npm = shutil.which("npm")
    if shutil.which("node") is None or npm is None:
        raise HostsUnavailable("node and npm are needed to install the real host programs "
                               "(tests/hosts_real/package.json); not found on PATH")
    root = cache_root() / lock_hash()
    started = time.monotonic()
    spent = 0.0
    if not (root / ".complete").is_file():
        root.parent.mkdir(parents=True, exist_ok=True)
        # One installer at a time: a worker that waited here finds the cache warm after it.
        try:
            with FileLock(str(root.with_name(f"{root.name}.lock")),
                          timeout=INSTALL_TIMEOUT_S * 2):
                if not (root / ".complete").is_file():
                    _install_into(root, npm)
                    spent = time.monotonic() - started
        except Timeout:
            raise HostsUnavailable(f"another install into {root} held its lock for over "
                                   f"{INSTALL_TIMEOUT_S * 2:g} s") from None
    node = _pinned_node(root) or Path(shutil.which("node") or "node")
    version = _version(node)
    if version is None or version < MIN_NODE:
        shown = ".".join(map(str, version)) if version else "unknown"
        wanted = ".".join(map(str, MIN_NODE))
        raise HostsUnavailable(f"the hosts need node >= {wanted}; {node} is {shown} and the "
                               "registry has no node package for this platform")
    return HostPrograms(root=root, node=node, install_seconds=spent)
