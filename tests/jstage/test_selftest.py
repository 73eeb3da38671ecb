"""jstage-mcp's self-test passes on the real server and catches broken ones.

The first test is jstage-mcp's one real-clock pacing check: the full self-test, every tool at
once on the real 1-second floor. The broken servers are caught by shortened runs.
"""

from __future__ import annotations

import sys

import pytest

from readingroom.jstage.selftest import run_self_test

pytestmark = pytest.mark.stdio  # starts the server (or the CLI) as a process

# The original's fault: the floor kept, the lock released before sending.
UNLOCKED = (
    "import dataclasses, readingroom.jstage.upstreams.courtesy as c\n"
    "c.COURTESY = dataclasses.replace(c.COURTESY, serial=False)\n"
    "from readingroom.jstage.__main__ import main\n"
    "main()\n"
)
# The original's other fault: ERR_003 read as an error of its own.
ERR003_AS_ERROR = (
    "import readingroom.jstage.upstreams.feed as f\n"
    "f.STATUSES['ERR_003'] = f.StatusInfo(f.StatusKind.upstream, 'too many requests')\n"
    "from readingroom.jstage.__main__ import main\n"
    "main()\n"
)


def test_self_test_passes_and_reports_every_promise():
    report = run_self_test()
    assert report.ok, report.render()
    names = {c.name for c in report.checks}
    assert {"serial requests", "1-second floor", "100-record cap", "ERR_003 is RATE_LIMITED",
            "Powered by J-STAGE on every envelope", "stdout purity", "receipt chain"} <= names
    assert report.measures["floor_gap_min_s"] >= 1.0
    assert report.seconds < 30


def test_self_test_fails_a_server_that_releases_its_lock_before_sending():
    # Starts still a second apart, but an answer's end no longer counts: the fake sees the
    # next request arrive less than a second after the previous answer.
    report = run_self_test([sys.executable, "-c", UNLOCKED], calls=2)
    failed = {c.name for c in report.checks if not c.ok}
    assert "1-second floor" in failed


def test_self_test_fails_a_server_that_reads_err003_as_an_error():
    report = run_self_test([sys.executable, "-c", ERR003_AS_ERROR], calls=1)
    failed = {c.name for c in report.checks if not c.ok}
    assert failed == {"ERR_003 is RATE_LIMITED"}
