"""``readingroom self-test`` passes on the real server and catches a broken one."""

from __future__ import annotations

import json
import subprocess
import sys

CLI = [sys.executable, "-m", "readingroom"]

# A server with the undertakings stripped: no lock, no floor. The self-test must notice.
UNPACED = (
    "import dataclasses, readingroom.ndl.client as c\n"
    "c.UNDERTAKINGS = dataclasses.replace(c.UNDERTAKINGS, serial=False, min_interval=0.0)\n"
    "from readingroom.ndl.__main__ import main\n"
    "main()\n"
)
# A server that prints to stdout before the guard is in place.
NOISY = "print('hello from a careless import')\nfrom readingroom.ndl.__main__ import main\nmain()\n"


def run_self_test(*extra: str) -> tuple[int, dict]:
    done = subprocess.run([*CLI, "self-test", "--json", *extra], capture_output=True,
                          timeout=120, text=True, encoding="utf-8")
    return done.returncode, json.loads(done.stdout)


def test_self_test_passes_and_reports_every_undertaking():
    rc, report = run_self_test()
    assert rc == 0 and report["ok"] is True
    names = {c["name"] for c in report["checks"]}
    assert {"serial requests", "1-second floor", "100-record cap", "dpid guard",
            "credit on every envelope", "stdout purity", "receipt chain"} <= names
    assert report["seconds"] < 20


def _server_command(code: str) -> list[str]:
    return ["--", sys.executable, "-c", code]


def test_self_test_fails_a_server_without_pacing():
    rc, report = run_self_test(*_server_command(UNPACED))
    failed = {c["name"] for c in report["checks"] if not c["ok"]}
    assert rc == 1 and report["ok"] is False
    assert {"serial requests", "1-second floor"} <= failed


def test_self_test_fails_a_server_that_prints_to_stdout():
    rc, report = run_self_test(*_server_command(NOISY))
    failed = {c["name"] for c in report["checks"] if not c["ok"]}
    assert rc == 1 and "stdout purity" in failed
