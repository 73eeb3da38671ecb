"""One receipt deposit for every server: redaction, hashing, the pinned clock, failures."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from readingroom.core import receipt, redaction, verification
from readingroom.core.clock import FakeClock
from readingroom.core.envelope import Envelope, ResultInfo
from readingroom.core.receipt import deposit

pytestmark = pytest.mark.anyio
PINNED = datetime(2026, 12, 1, 9, 30, tzinfo=UTC)


def _env() -> Envelope:
    return Envelope(server="toy-mcp", operation="toy_search",
                    result=ResultInfo(total=2, returned=2))


async def test_a_deposit_is_one_chained_line_with_secrets_redacted(tmp_path: Path):
    path = tmp_path / "receipts.jsonl"
    env = _env()
    got = await deposit(
        env, query="title=x", params={"q": "x", "api_key": "s3cret"}, providers=["p1"],
        endpoint="https://upstream.invalid/api", outcome="ok", result_ids=["r1", "r2"],
        extra={"normalized_terms": ["x"]}, secret_names=["mailto"],
        clock=FakeClock(start_now=PINNED), environ={"MCP_RECEIPT_LOG": str(path)},
    )
    assert env.receipt == got and got.deposited and got.issued_at == "2026-12-01T09:30:00.000Z"
    (line,) = [json.loads(t) for t in path.read_text("utf-8").splitlines()]
    assert line["params"] == {"q": "x", "api_key": redaction.REDACTED}
    assert "s3cret" not in path.read_text("utf-8")
    assert line["server"] == "toy-mcp" and line["result_ids"] == ["r1", "r2"]
    assert line["normalized_terms"] == ["x"] and line["total"] == 2
    assert got.query_hash == receipt.query_hash("title=x", line["params"])
    assert got.ledger_hash == line["hash"] and verification.verify(path).ok


async def test_without_a_ledger_the_envelope_says_so(tmp_path: Path):
    env = _env()
    got = await deposit(env, query="q", params={}, providers=[], endpoint=None, outcome="empty",
                        environ={})
    assert not got.deposited
    assert [d.code for d in env.diagnostics] == ["RECEIPT_NOT_DEPOSITED"]


async def test_an_unwritable_ledger_is_a_warning_not_a_failure(tmp_path: Path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    env = _env()
    got = await deposit(env, query="q", params={}, providers=[], endpoint=None, outcome="ok",
                        environ={"MCP_RECEIPT_LOG": str(blocker / "receipts.jsonl")})
    assert not got.deposited and env.error is None
    assert [d.code for d in env.diagnostics] == ["RECEIPT_WRITE_FAILED"]


def _held(path: Path):
    """The ledger's cross-process lock, taken the way another process would take it."""
    from filelock import FileLock

    return FileLock(str(path) + ".lock")


async def test_a_busy_ledger_costs_the_search_a_bounded_wait(tmp_path: Path):
    import time

    path = tmp_path / "receipts.jsonl"
    env = _env()
    with _held(path):  # another process holds the lock and does not let go
        began = time.monotonic()
        got = await deposit(env, query="q", params={}, providers=[], endpoint=None,
                            outcome="ok", environ={"MCP_RECEIPT_LOG": str(path)},
                            lock_timeout=0.3)
        took = time.monotonic() - began
    assert took < 3.0 and not got.deposited
    assert [d.code for d in env.diagnostics] == ["RECEIPT_WRITE_FAILED"]
    assert "locked" in env.diagnostics[0].message


async def test_a_cancelled_deposit_writes_nothing_afterwards(tmp_path: Path):
    import anyio

    path = tmp_path / "receipts.jsonl"
    lock = _held(path)
    lock.acquire()
    try:
        with anyio.move_on_after(0.2):  # the call's deadline, while the lock is held
            await deposit(_env(), query="q", params={}, providers=[], endpoint=None,
                          outcome="ok", environ={"MCP_RECEIPT_LOG": str(path)},
                          lock_timeout=5.0)
    finally:
        lock.release()
    # The abandoned worker thread gets the lock now (filelock polls every 50 ms) and must
    # not write the receipt; nothing can be awaited for "decided not to write", so give it
    # ten polls.
    await anyio.sleep(0.5)
    assert not path.exists() or path.read_bytes() == b""


async def test_an_envelope_that_cannot_be_sent_gets_an_internal_error_receipt(tmp_path: Path):
    path = tmp_path / "receipts.jsonl"
    env = _env()
    env.items = [{"id": "r1", "value": object()}]  # nothing can serialise this (a defect)
    await deposit(env, query="q", params={}, providers=[], endpoint=None, outcome="ok",
                  result_ids=["r1"], environ={"MCP_RECEIPT_LOG": str(path)})
    (line,) = [json.loads(t) for t in path.read_text("utf-8").splitlines()]
    assert (line["outcome"], line["total"], line["returned"], line["result_ids"]) == (
        "INTERNAL_ERROR", None, 0, [])
