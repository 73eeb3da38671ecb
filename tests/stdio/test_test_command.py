"""``python run.py test``: in parallel unless told otherwise, and ``--quick`` picks its tier."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from readingroom.catalog import SERVERS

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
import run  # noqa: E402  (run.py sits at the repository root, outside any package)


@pytest.mark.parametrize(("given", "expected"), [
    ([], ["-n", "WORKERS", "--dist", "loadscope", "--no-loadscope-reorder"]),
    (["-k", "ledger"], ["-n", "WORKERS", "--dist", "loadscope", "--no-loadscope-reorder", "-k",
                        "ledger"]),
    (["-n", "0"], ["-n", "0"]),
    (["-n3"], ["-n3"]),
    (["--numprocesses=3"], ["--numprocesses=3"]),
    (["--dist=load", "-n", "2"], ["--dist=load", "-n", "2"]),
    (["-p", "no:xdist"], ["-p", "no:xdist"]),
    (["--pdb"], ["--pdb"]),
])
def test_the_suite_runs_in_parallel_unless_the_arguments_say_otherwise(given, expected,
                                                                       monkeypatch):
    monkeypatch.delenv("READINGROOM_TEST_WORKERS", raising=False)
    workers = str((os.cpu_count() or 1) + 2)  # one per CPU and two more
    assert run.pytest_args(given) == [workers if a == "WORKERS" else a for a in expected]


def test_the_quick_tier_runs_one_worker_fewer(monkeypatch):
    monkeypatch.delenv("READINGROOM_TEST_WORKERS", raising=False)
    assert run.pytest_args(["--quick", "-q"]) == [
        "-n", str((os.cpu_count() or 1) + 1), "--dist", "loadscope", "--no-loadscope-reorder",
        "--quick", "-q"]
    assert run.pytest_args(["-q"])[:2] == ["-n", str((os.cpu_count() or 1) + 2)]


def test_the_number_of_workers_can_be_set(monkeypatch):
    monkeypatch.setenv("READINGROOM_TEST_WORKERS", "4")
    assert run.pytest_args([])[:2] == ["-n", "4"]


def _collected(*args: str) -> list[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
         "-p", "no:xdist", *args],
        cwd=ROOT, env=env, capture_output=True, text=True, encoding="utf-8", timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return [line for line in done.stdout.splitlines() if "::" in line]


def test_quick_keeps_units_and_one_smoke_per_server_and_leaves_out_processes():
    paths = ["tests/contract", "tests/stdio/test_ndl_stdio.py", "tests/core/test_clock.py",
             "tests/regressions/test_attack_fifo_ledger.py"]
    full = _collected(*paths)
    quick = _collected("--quick", *paths)
    assert set(quick) < set(full)
    assert not [t for t in quick if t.startswith(("tests/stdio/", "tests/regressions/"))]
    assert {t for t in full if t.startswith("tests/core/")} <= set(quick)
    contract = [t for t in quick if t.startswith("tests/contract/")]
    for name in SERVERS:  # a catalogue server is in the smoke by being in the catalogue
        mine = [t for t in contract if t.endswith(f"[{name}]")]
        assert any("sample_call" in t for t in mine), f"{name} has no smoke in --quick"
        assert any("stdin_close_exits_zero" in t for t in mine), name
    assert not [t for t in contract if "cancel" in t or "tools_list_is_compact" in t]


def test_the_folders_quick_skips_whole_hold_no_smoke_test():
    """``--quick`` does not import tests/{stdio,hosts_real} (tests/conftest.py): no smoke there."""
    from tests.conftest import SMOKELESS_FOLDERS

    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
         "-p", "no:xdist", "-m", "smoke", *(f"tests/{f}" for f in SMOKELESS_FOLDERS)],
        cwd=ROOT, env=env, capture_output=True, text=True, encoding="utf-8", timeout=300)
    assert done.returncode == 5, done.stdout[-2000:]  # 5: every test deselected, none smoke
    assert not [line for line in done.stdout.splitlines() if "::" in line]
