#!/usr/bin/env python3
"""The two set-up commands of readingroom, for Windows, macOS and Linux alike.

    python run.py demo    the main job on its embedded default: a book made from this project's
                          docs, initialised, searched, located, rendered (no network, no user data)
    python run.py test    run the whole test suite in parallel processes (extra arguments go
                          to pytest; -n 0 runs it in one process)
    python run.py test --quick
                          the quick tier: unit and in-memory MCP tests, one stdio smoke per
                          server (what to run after each change)

Each creates (or reuses) a virtual environment in ``.venv`` beside this file and installs the
project into it; it reinstalls only when ``pyproject.toml`` changes.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
STAMP = VENV / ".readingroom-installed"


def venv_python() -> Path:
    """The interpreter inside the project's virtual environment."""
    if os.name == "nt":
        return VENV / "Scripts" / "python.exe"
    return VENV / "bin" / "python"


def ensure_env() -> Path:
    """Create the virtual environment and install the project (with test extras) if needed."""
    if sys.version_info < (3, 11):  # noqa: UP036 - run.py may be started by an old Python
        sys.exit(f"readingroom needs Python 3.11 or newer; this is {sys.version.split()[0]}.")
    python = venv_python()
    if not python.exists():
        print(f"creating virtual environment in {VENV} ...", file=sys.stderr)
        venv.EnvBuilder(with_pip=True, upgrade_deps=False).create(VENV)
    wanted = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if not STAMP.exists() or STAMP.read_text().strip() != wanted:
        print("installing readingroom and its dependencies ...", file=sys.stderr)
        cmd = [str(python), "-m", "pip", "install", "--disable-pip-version-check",
               "--quiet", "-e", f"{ROOT}[test]"]
        subprocess.run(cmd, check=True, cwd=ROOT)
        STAMP.write_text(wanted)
    return python


def _has_option(args: list[str], *names: str) -> bool:
    """Whether ``args`` holds one of the options ``names`` (``-n 2``, ``-n2``, ``--dist=...``)."""
    for arg in args:
        for name in names:
            if arg == name or arg.startswith(name + "=") or (
                    not name.startswith("--") and arg.startswith(name) and len(arg) > 2):
                return True
    return False


def default_workers(quick: bool = False) -> str:
    """How many test workers: two more than the CPUs for the whole suite, one more for --quick.

    Many tests of the whole suite spend most of their time waiting while they hold a worker
    (a pacing floor of 1 s between requests, a server or host process starting, a loopback
    fake), so extra workers keep the CPUs busy. The quick tier hardly waits, and more workers
    only add collection and contention there. Measured on 2 cores (2026-12-03, warm): the whole
    suite 144.9 s with 3 workers against 134.6 s and 132.5 s with 4; the quick tier 27.8 s and
    29.5 s with 3 against 29.6 s and 30.0 s with 4.
    """
    return str((os.cpu_count() or 1) + (1 if quick else 2))


def pytest_args(args: list[str]) -> list[str]:
    """The pytest command line: ``args`` run in parallel unless they say otherwise.

    pytest-xdist (a test extra) runs the suite in :func:`default_workers` workers, or
    ``READINGROOM_TEST_WORKERS``; ``--dist loadscope`` keeps each module on one worker, so a
    fixture its tests share (one server process, books initialised once) is built once, and
    ``--no-loadscope-reorder`` keeps the order ``tests/conftest.py`` gives (the slowest module
    first). ``-n``, ``--dist`` or ``-p no:xdist`` given by the caller win; ``--pdb`` and
    ``--trace`` run in one process.
    """
    if (_has_option(args, "-n", "--numprocesses", "--dist", "--pdb", "--trace")
            or any(arg.endswith("no:xdist") for arg in args)):
        return args
    workers = (os.environ.get("READINGROOM_TEST_WORKERS", "").strip()
               or default_workers(quick="--quick" in args))
    return ["-n", workers, "--dist", "loadscope", "--no-loadscope-reorder", *args]


def main(argv: list[str]) -> int:
    """Dispatch ``demo`` or ``test``."""
    if not argv or argv[0] not in ("demo", "test"):
        print(__doc__, file=sys.stderr)
        return 2
    python = ensure_env()
    env = dict(os.environ)
    env.setdefault("PYTHONUTF8", "1")
    if argv[0] == "demo":
        cmd = [str(python), "-m", "readingroom.book", "demo", *argv[1:]]
    else:
        # Bytecode caches (git-ignored __pycache__) even where PYTHONDONTWRITEBYTECODE is set:
        # without them every worker re-rewrites the asserts of every test module (about 15 s
        # of CPU per worker) and every server subprocess recompiles the app.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        cmd = [str(python), "-m", "pytest", *pytest_args(argv[1:])]
    return subprocess.run(cmd, cwd=ROOT, env=env).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
