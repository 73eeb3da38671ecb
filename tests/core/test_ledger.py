"""The receipt ledger: chain building, hashing, redaction, deposit and verification."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from filelock import FileLock

from readingroom.core.errors import Code
from readingroom.core.ledger import (
    GENESIS_HASH,
    Ledger,
    LedgerError,
    ProblemKind,
    deposit,
    line_hash,
    query_hash,
    redact,
    verify,
)


def receipt(n: int = 1, **extra: object) -> dict[str, object]:
    """A receipt entry as a server would pass it."""
    entry: dict[str, object] = {
        "server": "ndl-mcp",
        "operation": "search",
        "issued_at": f"2024-05-0{1 + n % 9}T10:00:00.000Z",
        "query": f'title="源氏物語 {n}"',
        "normalized_terms": [
            {"field": "title", "term": f"源氏物語 {n}", "index": "title", "match": "partial"}
        ],
        "params": {"operation": "searchRetrieve", "query": f"q{n}"},
        "query_hash": hashlib.sha256(str(n).encode()).hexdigest(),
        "result_ids": [f"R{n}-a", f"R{n}-b"],
        "total": 2,
        "returned": 2,
        "outcome": "ok",
        "endpoint": "https://ndlsearch.ndl.go.jp/api/sru",
    }
    entry.update(extra)
    return entry


def read_lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]


def write_lines(path: Path, lines: list[bytes]) -> None:
    path.write_bytes(b"".join(x + b"\n" for x in lines))


@pytest.fixture
def ledger_path(tmp_path: Path) -> Path:
    return tmp_path / "receipts.jsonl"


@pytest.fixture
def five(ledger_path: Path) -> Path:
    """A ledger of five receipts."""
    ledger = Ledger(ledger_path)
    for n in range(1, 6):
        ledger.append(receipt(n))
    return ledger_path


# --- hashing and redaction -----------------------------------------------------------------


def test_query_hash_is_sha256_over_canonical_json() -> None:
    canonical = '{"params":{"a":"1","b":"源"},"query":"title=\\"x\\""}'
    expected = hashlib.sha256(canonical.encode("utf-8")).hexdigest()
    assert query_hash('title="x"', {"b": "源", "a": "1"}) == expected


def test_query_hash_ignores_param_order_but_not_values() -> None:
    one = query_hash("q", {"a": "1", "b": "2"})
    assert one == query_hash("q", {"b": "2", "a": "1"})
    assert one != query_hash("q", {"a": "1", "b": "3"})
    assert one != query_hash("q2", {"a": "1", "b": "2"})


def test_redact_default_names_case_insensitive() -> None:
    params = {"AppID": "s1", "api_key": "s2", "Token": "s3", "query": "源氏", "keyword": "k"}
    out = redact(params)
    assert out == {
        "AppID": "[REDACTED]",
        "api_key": "[REDACTED]",
        "Token": "[REDACTED]",
        "query": "源氏",
        "keyword": "k",
    }
    assert params["AppID"] == "s1"  # the input is not modified


def test_redact_custom_names() -> None:
    assert redact({"mailto": "a@b", "key": "k"}, ["MailTo"]) == {"mailto": "[REDACTED]", "key": "k"}


# --- chain building ------------------------------------------------------------------------


def test_append_builds_a_chain(ledger_path: Path) -> None:
    ledger = Ledger(ledger_path)
    written = [ledger.append(receipt(n)) for n in range(1, 4)]
    lines = read_lines(ledger_path)
    assert lines == written
    assert [x["seq"] for x in lines] == [1, 2, 3]
    assert lines[0]["prev_hash"] == GENESIS_HASH
    assert lines[1]["prev_hash"] == lines[0]["hash"]
    assert lines[2]["prev_hash"] == lines[1]["hash"]
    for line in lines:
        assert line["v"] == 1
        body = {k: v for k, v in line.items() if k != "hash"}
        digest = hashlib.sha256(
            json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
        ).hexdigest()
        assert line["hash"] == digest == line_hash(line)
    assert "源氏物語" in ledger_path.read_text(encoding="utf-8")  # UTF-8, not \u escapes
    head = json.loads(Path(str(ledger_path) + ".head").read_text())
    assert head == {"count": 3, "hash": lines[2]["hash"]}


def test_append_redacts_and_keeps_only_identifiers(ledger_path: Path) -> None:
    line = Ledger(ledger_path).append(
        receipt(1, params={"appid": "SECRET", "q": "x"}, items=[{"title": "a record"}])
    )
    text = ledger_path.read_text(encoding="utf-8")
    assert "SECRET" not in text
    assert line["params"] == {"appid": "[REDACTED]", "q": "x"}
    assert "items" not in line and "a record" not in text


def test_append_ignores_caller_ledger_fields(ledger_path: Path) -> None:
    ledger = Ledger(ledger_path)
    ledger.append(receipt(1))
    line = ledger.append(receipt(2, seq=99, prev_hash="f" * 64, hash="bogus"))
    assert line["seq"] == 2
    assert line["hash"] == line_hash(line)
    assert verify(ledger_path).ok


def test_append_fills_issued_at_when_missing(ledger_path: Path) -> None:
    entry = receipt(1)
    del entry["issued_at"]
    line = Ledger(ledger_path).append(entry)
    assert str(line["issued_at"]).endswith("Z")


# --- deposit -------------------------------------------------------------------------------


def test_deposit_unset_writes_nothing(tmp_path: Path) -> None:
    for env in ({}, {"MCP_RECEIPT_LOG": ""}, {"MCP_RECEIPT_LOG": "   "}):
        outcome = deposit(receipt(), env=env)
        assert outcome.deposited is False
        assert outcome.code is Code.RECEIPT_NOT_DEPOSITED
        assert outcome.ledger_hash is None
        assert "MCP_RECEIPT_LOG" in outcome.message
    assert list(tmp_path.iterdir()) == []


def test_deposit_reads_os_environ_by_default(
    ledger_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCP_RECEIPT_LOG", str(ledger_path))
    outcome = deposit(receipt())
    assert outcome.deposited is True and outcome.code is None
    assert outcome.ledger_hash == read_lines(ledger_path)[0]["hash"]


def test_deposit_unwritable_path_reports_write_failed(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    outcome = deposit(receipt(), env={"MCP_RECEIPT_LOG": str(blocker / "receipts.jsonl")})
    assert outcome.deposited is False
    assert outcome.code is Code.RECEIPT_WRITE_FAILED
    assert outcome.ledger_hash is None
    assert outcome.message
    assert blocker.read_text() == "x"


def test_deposit_lock_timeout_reports_write_failed(ledger_path: Path) -> None:
    env = {"MCP_RECEIPT_LOG": str(ledger_path)}
    with FileLock(str(ledger_path) + ".lock"):
        outcome = deposit(receipt(), env=env, lock_timeout=0.2)
    assert outcome.code is Code.RECEIPT_WRITE_FAILED
    assert "locked" in outcome.message
    assert not ledger_path.exists()
    assert deposit(receipt(), env=env).deposited  # and the lock is usable afterwards


def test_deposit_unserialisable_entry_reports_write_failed(ledger_path: Path) -> None:
    outcome = deposit(receipt(total=float("nan")), env={"MCP_RECEIPT_LOG": str(ledger_path)})
    assert outcome.code is Code.RECEIPT_WRITE_FAILED
    assert not ledger_path.exists() or ledger_path.read_bytes() == b""


# --- verify --------------------------------------------------------------------------------


def test_verify_intact(five: Path) -> None:
    report = verify(five)
    assert report.ok and report.count == 5 and report.problems == []
    assert report.first_bad_line is None
    assert report.head_hash == read_lines(five)[-1]["hash"]


def test_verify_empty_ledger(ledger_path: Path) -> None:
    ledger_path.write_bytes(b"")
    report = verify(ledger_path)
    assert report.ok and report.count == 0


def test_verify_missing_file_raises(ledger_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        verify(ledger_path)


def test_verify_edited_line(five: Path) -> None:
    lines = five.read_bytes().splitlines()
    lines[2] = lines[2].replace("源氏物語 3".encode(), "源氏物語 X".encode())
    write_lines(five, lines)
    report = verify(five)
    assert not report.ok
    assert report.first_bad_line == 3
    assert [(p.line, p.kind) for p in report.errors] == [(3, ProblemKind.edited)]
    assert str(report.errors[0]) == "line 3: edited — hash does not match its content"


def test_verify_edited_line_with_recomputed_hash(five: Path) -> None:
    lines = read_lines(five)
    lines[2]["result_ids"] = ["forged"]
    lines[2]["hash"] = line_hash(lines[2])
    write_lines(five, [json.dumps(x, ensure_ascii=False).encode() for x in lines])
    report = verify(five)
    assert not report.ok
    assert report.first_bad_line == 4
    assert report.errors[0].kind is ProblemKind.broken_chain


def test_verify_reordered_lines(five: Path) -> None:
    lines = five.read_bytes().splitlines()
    lines[1], lines[2] = lines[2], lines[1]
    write_lines(five, lines)
    report = verify(five)
    assert not report.ok
    assert report.first_bad_line == 2
    assert {p.kind for p in report.errors} == {ProblemKind.broken_chain}


def test_verify_removed_middle_line(five: Path) -> None:
    lines = five.read_bytes().splitlines()
    del lines[2]
    write_lines(five, lines)
    report = verify(five)
    assert not report.ok
    assert report.first_bad_line == 3
    assert [(p.line, p.kind) for p in report.errors] == [(3, ProblemKind.broken_chain)]


def test_verify_tail_cut_mid_line(five: Path) -> None:
    data = five.read_bytes()
    five.write_bytes(data[: len(data) - 40])
    report = verify(five)
    assert not report.ok
    assert report.first_bad_line == 5
    kinds = {p.kind for p in report.errors}
    assert ProblemKind.torn in kinds
    assert ProblemKind.truncated in kinds  # the head file still names receipt 5


def test_verify_tail_cut_mid_line_without_head(five: Path) -> None:
    data = five.read_bytes()
    five.write_bytes(data[: len(data) - 40])
    Path(str(five) + ".head").unlink()
    report = verify(five)
    assert not report.ok
    assert [(p.line, p.kind) for p in report.errors] == [(5, ProblemKind.torn)]


def test_verify_whole_lines_cut_with_head(five: Path) -> None:
    lines = five.read_bytes().splitlines()
    write_lines(five, lines[:3])
    report = verify(five)
    assert not report.ok
    assert [(p.line, p.kind) for p in report.errors] == [(4, ProblemKind.truncated)]
    assert "5 receipts" in report.errors[0].message


def test_verify_whole_lines_cut_without_head_is_invisible(five: Path) -> None:
    # The documented limit: without the head file a clean cut at a line boundary looks intact.
    lines = five.read_bytes().splitlines()
    write_lines(five, lines[:3])
    Path(str(five) + ".head").unlink()
    assert verify(five).ok


def test_verify_cut_and_rewritten_end_with_head(five: Path) -> None:
    lines = five.read_bytes().splitlines()
    write_lines(five, lines[:4])
    head = Path(str(five) + ".head")
    saved = head.read_text()
    head.unlink()
    Ledger(five).append(receipt(9))  # a different fifth receipt
    head.write_text(saved)
    report = verify(five)
    assert not report.ok
    assert [(p.line, p.kind) for p in report.errors] == [(5, ProblemKind.truncated)]


def test_verify_head_behind_by_one_is_fine(five: Path) -> None:
    lines = read_lines(five)
    head = Path(str(five) + ".head")
    head.write_text(json.dumps({"count": 4, "hash": lines[3]["hash"]}))
    assert verify(five).ok


def test_verify_unparseable_middle_line(five: Path) -> None:
    lines = five.read_bytes().splitlines()
    lines.insert(2, b"not json at all")
    write_lines(five, lines)
    report = verify(five)
    assert not report.ok
    assert [(p.line, p.kind) for p in report.errors] == [(3, ProblemKind.unparseable)]


# --- torn tails ----------------------------------------------------------------------------


def test_append_after_torn_tail_acknowledges_it(five: Path) -> None:
    torn = b'{"v":1,"seq":6,"prev_hash":"ab'
    with open(five, "ab") as fh:
        fh.write(torn)
    assert not verify(five).ok

    ledger = Ledger(five)
    new = ledger.append(receipt(6))
    assert new["seq"] == 6
    assert new["prev_hash"] == read_lines_tolerant(five)[4]["hash"]
    assert new["after_torn"] == {"line": 6, "sha256": hashlib.sha256(torn).hexdigest()}
    raw = five.read_bytes().split(b"\n")
    assert raw[5] == torn  # the torn bytes are terminated, not rewritten

    report = verify(five)
    assert report.ok
    assert report.count == 6
    assert [(p.line, p.kind, p.level) for p in report.problems] == [
        (6, ProblemKind.torn, "warning")
    ]

    after = ledger.append(receipt(7))
    assert after["seq"] == 7 and after["prev_hash"] == new["hash"] and "after_torn" not in after
    assert verify(five).ok


def test_torn_acknowledgement_must_match(five: Path) -> None:
    with open(five, "ab") as fh:
        fh.write(b'{"v":1,"se')
    Ledger(five).append(receipt(6))
    lines = five.read_bytes().split(b"\n")
    lines[5] = b'{"v":1,"sX'  # change the torn bytes after they were acknowledged
    five.write_bytes(b"\n".join(lines))
    report = verify(five)
    assert not report.ok
    assert report.first_bad_line == 6


def test_complete_last_line_without_newline_is_chained(five: Path) -> None:
    data = five.read_bytes()
    five.write_bytes(data[:-1])
    line = Ledger(five).append(receipt(6))
    assert "after_torn" not in line
    assert line["prev_hash"] == read_lines(five)[4]["hash"]
    report = verify(five)
    assert report.ok and report.count == 6 and report.problems == []


def test_append_refuses_when_committed_lines_were_cut(five: Path) -> None:
    lines = five.read_bytes().splitlines()
    write_lines(five, lines[:3])
    with pytest.raises(LedgerError):
        Ledger(five).append(receipt(6))
    outcome = deposit(receipt(6), env={"MCP_RECEIPT_LOG": str(five)})
    assert outcome.code is Code.RECEIPT_WRITE_FAILED
    assert len(five.read_bytes().splitlines()) == 3


def test_append_refuses_to_ack_a_damaged_committed_line(five: Path) -> None:
    # A corrupted last line that the head file had already counted is not a torn write.
    data = five.read_bytes()
    five.write_bytes(data[: len(data) - 30] + b"\n")
    with pytest.raises(LedgerError):
        Ledger(five).append(receipt(6))


def read_lines_tolerant(path: Path) -> list[dict[str, object]]:
    out = []
    for raw in path.read_bytes().split(b"\n"):
        try:
            out.append(json.loads(raw))
        except ValueError:
            continue
    return out
