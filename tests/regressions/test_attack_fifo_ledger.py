"""Attack: ``MCP_RECEIPT_LOG`` (or its ``.head``) names a FIFO, not a file.

Issue 18 §5. Opening a FIFO for writing blocks until something reads it: the first search's
deposit blocked for ever in its worker thread *holding the cross-process lock*, so its answer
was lost at the tool deadline, every later search of every server waited the 10 s lock timeout,
and ``readingroom receipts verify``/``report`` never returned (reading a FIFO blocks too). Now a
ledger path (and its ``.head`` and ``.lock``) that exists and is not a regular file is refused
like a symbolic link, checked before the lock is taken, and every open is non-blocking and
re-checked on the open file; the search keeps its answer with ``RECEIPT_WRITE_FAILED``, and the
admin commands say what the path is and exit 2.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from readingroom.core import ledger, verification
from readingroom.core.errors import Code
from readingroom.core.rawstdio import RawStdioClient
from readingroom.ndl.fake import FakeSru

# Starts real server or command processes: left out of the quick tier (tests/conftest.py).
pytestmark = [
    pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform"),
    pytest.mark.stdio,
]

QUICK_S = 3.0
"""What "at once" allows on a loaded machine; the fix answers in milliseconds."""


def _receipt() -> dict:
    return {"server": "t", "operation": "op", "query": "q", "params": {}, "result_ids": [],
            "total": 0, "returned": 0, "outcome": "empty"}


def _release(fifo: Path) -> None:
    """Unblock anything stuck opening the FIFO (the unfixed code), by opening its other end."""
    for flags in (os.O_RDONLY | os.O_NONBLOCK, os.O_WRONLY | os.O_NONBLOCK):
        with contextlib.suppress(OSError):
            os.close(os.open(fifo, flags))


@pytest.fixture
def fifo(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "receipts.jsonl"
    os.mkfifo(path)
    yield path
    _release(path)


def _bounded(call, seconds: float):
    """Run ``call`` in a thread; (finished, result) after at most ``seconds``."""
    box: dict = {}
    thread = threading.Thread(target=lambda: box.update(value=call()), daemon=True)
    thread.start()
    thread.join(seconds)
    return not thread.is_alive(), box.get("value")


def test_a_fifo_ledger_is_refused_at_once_and_holds_no_lock(fifo: Path, tmp_path: Path) -> None:
    began = time.monotonic()
    done, outcome = _bounded(lambda: ledger.deposit(_receipt(), env={"MCP_RECEIPT_LOG":
                                                                     str(fifo)}), QUICK_S)
    assert done, "the deposit blocked on the FIFO"
    assert time.monotonic() - began < QUICK_S
    assert outcome.deposited is False and outcome.code is Code.RECEIPT_WRITE_FAILED
    assert "not a regular file" in outcome.message and "FIFO" in outcome.message
    # No lock is left held: the next deposit (to a real file) does not wait.
    good = tmp_path / "good.jsonl"
    done, outcome = _bounded(lambda: ledger.deposit(_receipt(), env={"MCP_RECEIPT_LOG":
                                                                     str(good)}), QUICK_S)
    assert done and outcome.deposited


def test_a_fifo_head_file_is_refused_too(tmp_path: Path) -> None:
    path = tmp_path / "receipts.jsonl"
    assert ledger.deposit(_receipt(), env={"MCP_RECEIPT_LOG": str(path)}).deposited
    head = Path(str(path) + ".head")
    head.unlink()
    os.mkfifo(head)
    try:
        done, outcome = _bounded(lambda: ledger.deposit(_receipt(), env={"MCP_RECEIPT_LOG":
                                                                         str(path)}), QUICK_S)
        assert done, "the deposit blocked reading the FIFO head"
        assert outcome.deposited is False and "not a regular file" in outcome.message
        done, report = _bounded(lambda: verification.verify(path), QUICK_S)
        assert done, "verify blocked reading the FIFO head"
        assert report.count == 1 and any("head" in p.message for p in report.problems)
    finally:
        _release(head)


@pytest.mark.parametrize("command", ["verify", "report"])
def test_receipts_verify_and_report_say_what_the_path_is(fifo: Path, command: str) -> None:
    try:
        done = subprocess.run([sys.executable, "-m", "readingroom", "receipts", command,
                               str(fifo)], capture_output=True, text=True, timeout=20)
    except subprocess.TimeoutExpired:
        pytest.fail(f"receipts {command} hung on a FIFO")
    assert done.returncode == 2, done
    assert "not a regular file" in done.stderr and "FIFO" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_ndl_mcp_keeps_every_answer_with_a_fifo_ledger(fifo: Path) -> None:
    env = {**os.environ, "MCP_RECEIPT_LOG": str(fifo), "READINGROOM_TOOL_DEADLINE": "20"}
    with FakeSru() as fake:
        env["NDL_SRU_URL"] = fake.url
        with RawStdioClient([sys.executable, "-m", "readingroom.ndl"], env=env) as server:
            server.initialize()
            took = []
            for title in ("こころ", "坊っちゃん"):
                began = time.monotonic()
                answer = server.call_tool("ndl_search_books", {"title": title}, timeout=40)
                took.append(time.monotonic() - began)
                envelope = answer["structuredContent"]
                assert answer["isError"] is False, envelope.get("error")
                assert envelope["items"], "the search lost its answer"
                codes = [d["code"] for d in envelope["diagnostics"]]
                assert "RECEIPT_WRITE_FAILED" in codes
                assert envelope["receipt"]["deposited"] is False
            assert server.close() == 0
    # The second call waits out the 1 s floor of the NDL undertakings, not a lock.
    assert took[0] < QUICK_S + 2 and took[1] < QUICK_S + 2, took
