"""Attack: rewrite the receipt ledger and recompute every hash and the head.

Issue 9 §1. A forged line appended with a recomputed hash passes ``verify``, and so does a
full rewrite with the head recomputed: a hash chain without a key cannot tell. Before, the
report then said "verified intact … unbroken" and nothing more. Now ``verify`` and the report
state that limit, the report gives the head hash to cite, and ``receipts verify --head HASH``
with the cited hash catches the rewrite.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from readingroom.cli import main
from readingroom.core.ledger import Ledger, line_hash
from readingroom.core.verification import PROOF_LIMITS


def receipt(n: int, ids: list[str]) -> dict[str, object]:
    return {"server": "ndl-mcp", "operation": "search", "query": f'title="q{n}"',
            "issued_at": f"2026-11-0{n}T10:00:00.000Z", "result_ids": ids, "total": len(ids),
            "returned": len(ids), "outcome": "ok"}


def cited_head(capsys: pytest.CaptureFixture[str], path: Path) -> str:
    """The head the report tells the scholar to cite (the methods section keeps it)."""
    assert main(["receipts", "report", str(path)]) == 0
    found = re.search(r"\*\*Ledger head to cite:\*\* receipt (\d+), SHA-256 `([0-9a-f]{64})`",
                      capsys.readouterr().out)
    assert found is not None
    return found.group(2)


def test_a_rewritten_history_passes_the_chain_but_not_the_cited_head(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "receipts.jsonl"
    for n in range(1, 4):
        Ledger(path).append(receipt(n, [f"R{n}"]))
    head = cited_head(capsys, path)

    # The attacker rewrites the history (receipt 2 now "found" something else) and recomputes
    # every hash and the head file, as anyone who can write the file can.
    forged = tmp_path / "forged.jsonl"
    for n in range(1, 4):
        Ledger(forged).append(receipt(n, ["FORGED"] if n == 2 else [f"R{n}"]))
    forged.replace(path)
    Path(str(forged) + ".head").replace(Path(str(path) + ".head"))

    # The chain alone cannot see it, and says so instead of overclaiming.
    assert main(["receipts", "verify", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("OK: 3 receipts, chain intact")
    assert f"what this proves: {PROOF_LIMITS}" in out
    assert "does not detect a deliberate rewrite" in out

    # The cited head does.
    assert main(["receipts", "verify", str(path), "--head", head]) == 1
    out = capsys.readouterr().out
    assert out.startswith("NOT INTACT")
    assert "anchor_missing — no receipt has the cited head hash" in out
    assert f"cited head does NOT hold: {head}" in out


def test_a_forged_line_appended_after_the_cited_head_leaves_the_cited_history_proven(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "receipts.jsonl"
    for n in range(1, 3):
        Ledger(path).append(receipt(n, [f"R{n}"]))
    head = cited_head(capsys, path)
    last = json.loads(path.read_text("utf-8").splitlines()[-1])
    line = {"v": 1, "seq": 3, "prev_hash": last["hash"], **receipt(3, ["FORGED"])}
    line["hash"] = line_hash(line)
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(line) + "\n")

    # The forgery verifies (the documented limit); the cited prefix is still proven, and
    # nothing after it is claimed.
    assert main(["receipts", "verify", str(path), "--head", head]) == 0
    out = capsys.readouterr().out
    assert "cited head holds: receipt 2 (line 2)" in out
    assert PROOF_LIMITS in out
