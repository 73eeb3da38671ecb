"""cinii-mcp's self-test passes on the real server and catches broken ones.

The first test is cinii-mcp's one real-clock pacing check: the full self-test, every tool at
once on the real 1-second floor. The broken servers are caught by shortened runs.
"""

from __future__ import annotations

import sys

import pytest

from readingroom.cinii.selftest import run_self_test

pytestmark = pytest.mark.stdio  # starts the server (or the CLI) as a process

# A server with the courtesy stripped: no lock, no floor. The self-test must notice.
UNPACED = (
    "import dataclasses, readingroom.cinii.upstreams.courtesy as c\n"
    "c.COURTESY = dataclasses.replace(c.COURTESY, serial=False, min_interval=0.0)\n"
    "from readingroom.cinii.__main__ import main\n"
    "main()\n"
)
# A server that shows the application id it was given (in every answer's diagnostics).
LEAKY = (
    "import os, readingroom.cinii.service as s\n"
    "original = s._scrub\n"
    "def leak(env, secret):\n"
    "    env.diagnose(s.Level.info, s.Code.UPSTREAM_DIAGNOSTIC, 'appid ' + secret)\n"
    "    return env\n"
    "s._scrub = leak\n"
    "from readingroom.cinii.__main__ import main\n"
    "main()\n"
)


def test_self_test_passes_and_reports_every_promise():
    report = run_self_test()
    assert report.ok, report.render()
    names = {c.name for c in report.checks}
    assert {"serial requests", "1-second floor", "100-record cap", "application id sent",
            "application id kept secret", "credit on every envelope", "stdout purity",
            "receipt chain"} <= names
    assert report.measures["floor_gap_min_s"] >= 1.0
    assert report.seconds < 30


def test_self_test_fails_a_server_without_pacing():
    report = run_self_test([sys.executable, "-c", UNPACED], calls=3)
    failed = {c.name for c in report.checks if not c.ok}
    assert {"serial requests", "1-second floor"} <= failed


def test_self_test_fails_a_server_that_shows_the_appid():
    report = run_self_test([sys.executable, "-c", LEAKY], calls=1)
    failed = {c.name for c in report.checks if not c.ok}
    assert "application id kept secret" in failed
