"""ndl-mcp's self-test passes on the real server and catches a broken one.

Only the first test runs the full self-test (through ``readingroom self-test``, six concurrent
searches on the real 1-second floor); the broken servers are caught by shortened runs.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from readingroom.ndl.selftest import run_self_test

CLI = [sys.executable, "-m", "readingroom"]

# A server with the undertakings stripped: no lock, no floor. The self-test must notice.
UNPACED = (
    "import dataclasses, readingroom.ndl.upstreams.ndl_search as c\n"
    "c.UNDERTAKINGS = dataclasses.replace(c.UNDERTAKINGS, serial=False, min_interval=0.0)\n"
    "from readingroom.ndl.__main__ import main\n"
    "main()\n"
)
# A server that prints to stdout before the guard is in place. Flushed, as a native library's
# write to fd 1 would be: unflushed, the line would wait in a buffer whose fate depends on
# PYTHONUNBUFFERED in the caller's environment.
NOISY = (
    "print('hello from a careless import', flush=True)\n"
    "from readingroom.ndl.__main__ import main\n"
    "main()\n"
)


def test_self_test_passes_and_reports_every_undertaking():
    # Named: each other server's self-test runs once, in its own tests.
    done = subprocess.run([*CLI, "self-test", "ndl-mcp", "--json"], capture_output=True,
                          timeout=120, text=True, encoding="utf-8")
    report = json.loads(done.stdout)
    assert [r["server"] for r in report["servers"]] == ["ndl-mcp"]
    assert done.returncode == 0 and report["ok"] is True, done.stdout + done.stderr
    ndl = next(r for r in report["servers"] if r["server"] == "ndl-mcp")
    names = {c["name"] for c in ndl["checks"]}
    assert {"serial requests", "1-second floor", "100-record cap", "dpid guard",
            "credit on every envelope", "stdout purity", "receipt chain"} <= names
    # Seven requests, each arriving at least the floor after the previous answer.
    assert ndl["measures"]["floor_gap_min_s"] >= 1.0
    assert ndl["measures"]["arrival_gap_min_s"] >= 1.0
    assert ndl["seconds"] < 20


def test_self_test_fails_a_server_without_pacing():
    report = run_self_test([sys.executable, "-c", UNPACED], calls=3)
    failed = {c.name for c in report.checks if not c.ok}
    assert report.ok is False
    assert {"serial requests", "1-second floor"} <= failed
    assert report.measures["floor_gap_min_s"] < 1.0


def test_self_test_fails_a_server_that_prints_to_stdout(monkeypatch):
    # Whatever the caller's environment says, the stray line must be caught.
    monkeypatch.delenv("PYTHONUNBUFFERED", raising=False)
    report = run_self_test([sys.executable, "-c", NOISY], calls=1)
    failed = {c.name for c in report.checks if not c.ok}
    assert report.ok is False and "stdout purity" in failed
    purity = next(c for c in report.checks if c.name == "stdout purity")
    assert "not JSON" in purity.detail and "hello from a careless import" in purity.detail


@pytest.mark.parametrize("calls", [0, 7])
def test_calls_outside_the_list_are_refused(calls):
    with pytest.raises(ValueError):
        run_self_test(calls=calls)
