"""Many processes appending to one receipt ledger at once never fork its chain."""

from __future__ import annotations

import itertools
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from readingroom.core.ledger import GENESIS_HASH
from readingroom.core.verification import ProblemKind, verify

WORKERS = 8
EACH = 50
HELPER = Path(__file__).with_name("ledger_appender.py")


@pytest.fixture(scope="module")
def shared_ledger(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A ledger written by WORKERS processes released together, EACH receipts apiece."""
    path = tmp_path_factory.mktemp("ledger") / "receipts.jsonl"
    procs = [
        subprocess.Popen(
            [sys.executable, str(HELPER), str(path), str(worker), str(EACH)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for worker in range(WORKERS)
    ]
    try:
        for proc in procs:
            assert proc.stdout is not None
            assert proc.stdout.readline().strip() == "ready"
        started = time.monotonic()
        for phase in ("go", "rest"):  # all at once; then, after one append each, the rest
            for proc in procs:
                assert proc.stdin is not None
                proc.stdin.write("go\n")
                proc.stdin.flush()
            if phase == "go":
                for proc in procs:
                    assert proc.stdout is not None
                    assert proc.stdout.readline().strip() == "first"
        results = [proc.communicate(timeout=60) for proc in procs]
        elapsed = time.monotonic() - started
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    for proc, (_, err) in zip(procs, results, strict=True):
        assert proc.returncode == 0, err
    print(f"\n{WORKERS} processes x {EACH} appends: {elapsed:.2f} s", file=sys.stderr)
    return path


def test_concurrent_appends_keep_one_chain(shared_ledger: Path) -> None:
    raw = shared_ledger.read_bytes()
    assert raw.endswith(b"\n")
    lines = [json.loads(x) for x in raw.splitlines()]
    assert len(lines) == WORKERS * EACH
    assert [x["seq"] for x in lines] == list(range(1, WORKERS * EACH + 1))
    prevs = [x["prev_hash"] for x in lines]
    assert prevs == [GENESIS_HASH] + [x["hash"] for x in lines[:-1]]
    assert len(set(prevs)) == len(prevs)  # no two lines chain onto the same parent
    written = {(x["server"], x["result_ids"][0]) for x in lines}
    expected = {(f"worker-{w}", f"{w}-{i}") for w in range(WORKERS) for i in range(EACH)}
    assert written == expected
    assert all(x["params"]["appid"] == "[REDACTED]" for x in lines)
    # The workers really interleaved: every worker's first receipt precedes every second one.
    assert {x["server"] for x in lines[:WORKERS]} == {f"worker-{w}" for w in range(WORKERS)}
    runs = sum(1 for a, b in itertools.pairwise(lines) if a["server"] != b["server"])
    assert runs >= WORKERS - 1

    report = verify(shared_ledger)
    assert report.ok, report.problems
    assert report.count == WORKERS * EACH
    assert report.head_hash == lines[-1]["hash"]
    head = json.loads(Path(str(shared_ledger) + ".head").read_text())
    assert head == {"count": WORKERS * EACH, "hash": lines[-1]["hash"]}


def copy_ledger(src: Path, dst_dir: Path) -> Path:
    dst = dst_dir / src.name
    shutil.copyfile(src, dst)
    shutil.copyfile(str(src) + ".head", str(dst) + ".head")
    return dst


def test_edit_in_shared_ledger_is_named(shared_ledger: Path, tmp_path: Path) -> None:
    path = copy_ledger(shared_ledger, tmp_path)
    lines = path.read_bytes().splitlines()
    target = 123
    line = json.loads(lines[target - 1])
    line["result_ids"] = ["forged"]
    lines[target - 1] = json.dumps(line, ensure_ascii=False, separators=(",", ":")).encode()
    path.write_bytes(b"\n".join(lines) + b"\n")
    report = verify(path)
    assert not report.ok
    assert report.first_bad_line == target
    assert [(p.line, p.kind) for p in report.errors] == [(target, ProblemKind.edited)]


def test_tail_cut_mid_line_in_shared_ledger_fails(shared_ledger: Path, tmp_path: Path) -> None:
    path = copy_ledger(shared_ledger, tmp_path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 25])
    report = verify(path)
    assert not report.ok
    assert report.first_bad_line == WORKERS * EACH
    assert ProblemKind.torn in {p.kind for p in report.errors}
