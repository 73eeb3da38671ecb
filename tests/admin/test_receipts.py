"""``readingroom receipts verify|report``: exit codes, messages and disclosure content."""

from __future__ import annotations

import argparse
import csv
import io
import json
from pathlib import Path

import pytest

from readingroom.admin import receipts
from readingroom.core.ledger import Ledger
from readingroom.core.verification import PROOF_LIMITS

QHASH_A = "a" * 8 + "1" * 56
QHASH_B = "b" * 8 + "2" * 56
QHASH_C = "c" * 8 + "3" * 56


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="readingroom")
    receipts.register(top.add_subparsers(dest="command", required=True))
    return top


def run(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    return args.func(args)


@pytest.fixture(autouse=True)
def no_env_ledger(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MCP_RECEIPT_LOG", raising=False)


@pytest.fixture
def ledger(tmp_path: Path) -> Path:
    path = tmp_path / "receipts.jsonl"
    book = Ledger(path)
    book.append(
        {
            "server": "ndl-mcp",
            "operation": "search",
            "issued_at": "2024-04-30T23:59:59.000Z",
            "query": 'title="源氏物語"',
            "normalized_terms": [
                {"field": "title", "term": "源氏物語", "index": "title", "match": "partial"},
                {"field": "creator", "term": "紫式部", "index": "creator", "match": "partial"},
            ],
            "params": {"query": 'title="源氏物語"'},
            "query_hash": QHASH_A,
            "result_ids": ["R1", "R2"],
            "total": 1234,
            "returned": 20,
            "outcome": "ok",
            "endpoint": "https://ndlsearch.ndl.go.jp/api/sru",
            "providers": ["iss-ndl-opac", "porta"],
        }
    )
    book.append(
        {
            "server": "literature-search-mcp",
            "operation": "search_works",
            "issued_at": "2024-05-01T00:00:00.000Z",
            "query": "tale of genji",
            "normalized_terms": [
                {"field": "query", "term": "tale of genji", "index": "all", "match": "partial"}
            ],
            "params": {"search": "tale of genji"},
            "query_hash": QHASH_B,
            "result_ids": [],
            "total": 0,
            "returned": 0,
            "outcome": "empty",
            "endpoint": "https://api.openalex.org/works?search=x",
        }
    )
    book.append(
        {
            "server": "ndl-mcp",
            "operation": "search",
            "issued_at": "2024-05-02T08:30:00.000Z",
            "query": "a|b",
            "normalized_terms": [
                {"field": "title", "term": "a|b", "index": "title", "match": "exact"}
            ],
            "params": {},
            "query_hash": QHASH_C,
            "result_ids": [],
            "total": None,
            "returned": 0,
            "outcome": "RATE_LIMITED",
            "endpoint": "https://ndlsearch.ndl.go.jp/api/sru",
        }
    )
    return path


def edit_line(path: Path, number: int) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[number - 1] = lines[number - 1].replace('"returned":20', '"returned":21')
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


# --- verify --------------------------------------------------------------------------------


def head_of(path: Path) -> str:
    return json.loads(path.read_text(encoding="utf-8").splitlines()[-1])["hash"]


def test_verify_intact_gives_the_head_to_cite_and_the_limits(
    ledger: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    head = head_of(ledger)
    assert run(["receipts", "verify", str(ledger)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"OK: 3 receipts, chain intact (head {head[:12]})",
        f"head to cite: receipt 3, SHA-256 {head}",
        f"what this proves: {PROOF_LIMITS}",
    ]


def test_the_limits_say_what_a_keyless_chain_cannot_detect() -> None:
    assert "without a key" in PROOF_LIMITS
    assert "does not detect a deliberate rewrite" in PROOF_LIMITS
    assert "verify --head HASH" in PROOF_LIMITS


def test_verify_head_holds_for_a_cited_prefix_of_a_grown_ledger(
    ledger: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = ledger.read_text(encoding="utf-8").splitlines()
    cited = json.loads(lines[1])["hash"]  # receipt 2, cited before receipt 3 was added
    assert run(["receipts", "verify", str(ledger), "--head", cited.upper()]) == 0
    out = capsys.readouterr().out
    assert "cited head holds: receipt 2 (line 2) is in this ledger" in out


def test_verify_head_fails_when_the_cited_prefix_was_edited(
    ledger: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cited = head_of(ledger)
    edit_line(ledger, 1)
    assert run(["receipts", "verify", str(ledger), "--head", cited]) == 1
    out = capsys.readouterr().out
    assert "line 3: anchor_missing — the cited head is receipt 3, but the history up to it" in out
    assert f"cited head does NOT hold: {cited}" in out


def test_verify_head_not_in_the_ledger(ledger: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["receipts", "verify", str(ledger), "--head", "0" * 63 + "1"]) == 1
    out = capsys.readouterr().out
    assert "anchor_missing — no receipt has the cited head hash 000000000000" in out
    assert "head to cite" not in out


@pytest.mark.parametrize("value", ["abc", "g" * 64, "a" * 63, "a" * 65, ""])
def test_verify_head_must_be_a_full_hash(ledger: Path, value: str,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        parser().parse_args(["receipts", "verify", str(ledger), "--head", value])
    assert exc.value.code == 2
    assert "not a head hash" in capsys.readouterr().err


def test_verify_reads_env_by_default(
    ledger: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCP_RECEIPT_LOG", str(ledger))
    assert run(["receipts", "verify"]) == 0
    assert capsys.readouterr().out.startswith("OK: 3 receipts")


def test_verify_edited(ledger: Path, capsys: pytest.CaptureFixture[str]) -> None:
    edit_line(ledger, 1)
    assert run(["receipts", "verify", str(ledger)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("NOT INTACT:")
    assert "line 1: edited — hash does not match its content" in out


def test_verify_without_file_or_env(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["receipts", "verify"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "MCP_RECEIPT_LOG" in captured.err


def test_verify_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["receipts", "verify", str(tmp_path / "nope.jsonl")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_receipts_needs_a_subcommand() -> None:
    with pytest.raises(SystemExit) as exc:
        parser().parse_args(["receipts"])
    assert exc.value.code == 2


# --- report: markdown ----------------------------------------------------------------------


def test_report_markdown(ledger: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["receipts", "report", str(ledger)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# Search disclosure\n")
    summary = out.splitlines()[2]
    assert "3 searches were recorded between 2024-04-30 23:59:59 and 2024-05-02 08:30:00 UTC" in (
        summary
    )
    assert "literature-search-mcp (1), ndl-mcp (2)" in summary
    assert "checked and found intact" in summary and "NOT" not in summary
    cite = out.splitlines()[4]
    assert cite == (f"**Ledger head to cite:** receipt 3, SHA-256 `{head_of(ledger)}`, in "
                    f"`receipts.jsonl`. {PROOF_LIMITS}")
    rows = [x for x in out.splitlines() if x.startswith("| ") and x[2:3].isdigit()]
    assert len(rows) == 3
    first = rows[0]
    assert "2024-04-30 23:59:59" in first
    assert "title: “源氏物語” → title, partial" in first
    assert "creator: “紫式部” → creator, partial" in first
    assert "iss-ndl-opac, porta" in first  # providers win over the endpoint host
    assert "1,234 / 20" in first
    assert f"`{QHASH_A[:12]}`" in first and QHASH_A not in first
    second = rows[1]
    assert "api.openalex.org" in second and "0 / 0" in second and "empty" in second
    third = rows[2]
    assert "unknown / 0" in third and "RATE_LIMITED" in third
    assert "a\\|b" in third  # a pipe in a term does not break the table
    assert len(third.split(" | ")) == len(first.split(" | "))


def test_report_markdown_since_is_inclusive(
    ledger: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["receipts", "report", str(ledger), "--since", "2024-05-01"]) == 0
    out = capsys.readouterr().out
    assert "2 searches were recorded between 2024-05-01 00:00:00" in out
    assert "源氏物語" not in out
    assert "tale of genji" in out


def test_report_since_nothing(ledger: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["receipts", "report", str(ledger), "--since", "2030-01-01T00:00:00Z"]) == 0
    out = capsys.readouterr().out
    assert "0 searches were recorded since 2030-01-01 00:00:00 UTC" in out
    assert "| Receipt" not in out


def test_report_rejects_a_bad_since(ledger: Path) -> None:
    with pytest.raises(SystemExit) as exc:
        parser().parse_args(["receipts", "report", str(ledger), "--since", "yesterday"])
    assert exc.value.code == 2


def test_report_says_when_not_intact(ledger: Path, capsys: pytest.CaptureFixture[str]) -> None:
    edit_line(ledger, 1)
    assert run(["receipts", "report", str(ledger)]) == 1
    captured = capsys.readouterr()
    assert "NOT intact" in captured.out
    assert "first at line 1 (edited)" in captured.out
    assert "No head is given to cite: the ledger is not intact." in captured.out
    assert head_of(ledger) not in captured.out
    assert "NOT intact" in captured.err


def test_report_of_an_empty_ledger_has_no_head(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    assert run(["receipts", "report", str(empty)]) == 0
    assert "The ledger is empty: there is no head to cite." in capsys.readouterr().out


# --- report: csv ---------------------------------------------------------------------------


def test_report_csv(ledger: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["receipts", "report", str(ledger), "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert list(rows[0].keys()) == list(receipts.CSV_COLUMNS)
    assert [r["seq"] for r in rows] == ["1", "2", "3"]
    first = rows[0]
    assert first["server"] == "ndl-mcp"
    assert (
        first["terms"]
        == "title: “源氏物語” → title, partial ; creator: “紫式部” → creator, partial"
    )
    assert first["where"] == "iss-ndl-opac, porta"
    assert first["total"] == "1234" and first["returned"] == "20"
    assert first["query_hash"] == QHASH_A
    assert first["query_hash_short"] == QHASH_A[:12]
    assert first["query"] == 'title="源氏物語"'
    assert rows[1]["where"] == "api.openalex.org"
    assert rows[2]["total"] == ""  # unknown, not zero
    assert rows[2]["outcome"] == "RATE_LIMITED"


def test_report_csv_since_to_file(
    ledger: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "disclosure.csv"
    argv = ["receipts", "report", str(ledger), "--format", "csv", "--since", "2024-05-02"]
    assert run([*argv, "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert f"head to cite: receipt 3, SHA-256 {head_of(ledger)}" in captured.err
    rows = list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8-sig"))))
    assert [r["query_hash"] for r in rows] == [QHASH_C]


def test_report_out_into_a_missing_parent_of_a_file_is_a_one_line_error(
    ledger: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    assert run(["receipts", "report", str(ledger), "--out", str(blocker / "report.md")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: cannot write the report to {blocker / 'report.md'}:")
    assert len(err.splitlines()) == 1
    assert blocker.read_text() == "x"
