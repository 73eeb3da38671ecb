"""The receipt ledger: chain building, hashing, redaction, deposit and verification."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from filelock import FileLock

from readingroom.core.errors import Code
from readingroom.core.ledger import (
    GENESIS_HASH,
    MAX_DEPTH,
    MAX_LINE_BYTES,
    Ledger,
    LedgerError,
    deposit,
    iter_receipts,
    line_hash,
)
from readingroom.core.receipt import query_hash
from readingroom.core.redaction import redact
from readingroom.core.verification import ProblemKind, is_head_hash, verify


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


# --- the bounded reader ----------------------------------------------------------------------


def a_line_with(five: Path, old: bytes, new: bytes) -> bytes:
    """The first line of ``five`` with ``old`` replaced (its hash left as it was)."""
    first = five.read_bytes().splitlines()[0]
    assert old in first
    return first.replace(old, new)


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        (b"[" * 100_000 + b"]" * 100_000, "nested deeper than 32 levels"),
        (b'{"a":' * 40 + b"1" + b"}" * 40, "nested deeper than 32 levels"),
        (b'{"seq":1,"prev_hash":"x","hash":"y","total":NaN}', "holds NaN"),
        (b'{"seq":1,"prev_hash":"x","hash":"y","total":-Infinity}', "holds -Infinity"),
        (b'{"seq":1,"prev_hash":"x","hash":"y","total":1e999}', "holds the number 1e999"),
        (b'{"seq":1,"prev_hash":"x","hash":"y","q":"\\ud800"}', "lone surrogate"),
        (b'{"seq":' + b"9" * 5000 + b',"prev_hash":"x","hash":"y"}', "not JSON"),
        (b"\xff\xfe", "not UTF-8"),
        (b"[1,2]", "not a JSON object"),
        (b'{"seq":true,"prev_hash":"x","hash":"y"}', "missing seq, prev_hash or hash"),
        (b'{"x":"' + b"a" * MAX_LINE_BYTES + b'"}', f"longer than the {MAX_LINE_BYTES} bytes"),
    ],
    ids=["deep-array", "deep-object", "nan", "infinity", "1e999", "surrogate", "huge-int",
         "not-utf8", "not-object", "bool-seq", "too-long"],
)
def test_a_bad_middle_line_is_a_finding_naming_the_line(
    five: Path, bad: bytes, reason: str
) -> None:
    lines = five.read_bytes().splitlines()
    lines.insert(2, bad)
    write_lines(five, lines)
    report = verify(five)
    assert not report.ok
    assert [(p.line, p.kind) for p in report.errors] == [(3, ProblemKind.unparseable)]
    assert reason in report.errors[0].message
    assert report.count == 5  # the receipts around it still verify


def test_a_string_full_of_brackets_is_not_nesting(ledger_path: Path) -> None:
    line = Ledger(ledger_path).append(receipt(1, query="[[[[" * 100 + "{" * 100))
    assert verify(ledger_path).ok and line["seq"] == 1


def test_a_bad_complete_last_line_stops_receipts_and_names_the_line(five: Path) -> None:
    with open(five, "ab") as fh:
        fh.write(b"[" * 100_000 + b"]" * 100_000 + b"\n")
    before = five.read_bytes()
    with pytest.raises(LedgerError, match="line 6 is not a receipt"):
        Ledger(five).append(receipt(6))
    outcome = deposit(receipt(6), env={"MCP_RECEIPT_LOG": str(five)})
    assert outcome.code is Code.RECEIPT_WRITE_FAILED and not outcome.deposited
    assert "line 6 is not a receipt (nested deeper than 32 levels)" in outcome.message
    assert five.read_bytes() == before


def test_an_oversized_torn_tail_is_damage_not_a_crash(five: Path) -> None:
    # Our own lines are at most MAX_LINE_BYTES, so a torn prefix of one cannot be longer.
    with open(five, "ab") as fh:
        fh.write(b"x" * (MAX_LINE_BYTES + 10))
    with pytest.raises(LedgerError, match="line 6 is not a receipt"):
        Ledger(five).append(receipt(6))
    report = verify(five)
    assert [(p.line, p.kind) for p in report.errors] == [(6, ProblemKind.torn)]


def test_a_receipt_past_the_limits_is_not_written(ledger_path: Path) -> None:
    env = {"MCP_RECEIPT_LOG": str(ledger_path)}
    huge = deposit(receipt(1, query="x" * MAX_LINE_BYTES), env=env)
    deep: object = []
    for _ in range(MAX_DEPTH + 1):
        deep = [deep]
    nested = deposit(receipt(2, extra=deep), env=env)
    assert huge.code is nested.code is Code.RECEIPT_WRITE_FAILED
    assert not ledger_path.exists() or ledger_path.read_bytes() == b""
    assert deposit(receipt(3), env=env).deposited


def test_a_bad_head_file_is_a_warning_not_a_crash(five: Path) -> None:
    Path(str(five) + ".head").write_bytes(b"[" * 100_000)
    report = verify(five)
    assert report.ok
    assert [(p.kind, p.level) for p in report.problems] == [(ProblemKind.truncated, "warning")]
    assert Ledger(five).append(receipt(6))["seq"] == 6


def test_a_defect_in_append_is_still_a_write_failure(
    ledger_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(self: Ledger, entry: object, **_: object) -> None:
        raise RecursionError("a defect")

    monkeypatch.setattr(Ledger, "append", broken)
    outcome = deposit(receipt(), env={"MCP_RECEIPT_LOG": str(ledger_path)})
    assert outcome.code is Code.RECEIPT_WRITE_FAILED and "defect" in outcome.message


def test_iter_receipts_skips_bad_lines_within_bounded_memory(five: Path) -> None:
    with open(five, "ab") as fh:
        fh.write(b'{"a":"' + b"b" * (3 * MAX_LINE_BYTES) + b'"}\n')
    assert [n for n, _ in iter_receipts(five)] == [1, 2, 3, 4, 5]


# --- a cited head ------------------------------------------------------------------------------


def test_a_cited_head_holds_while_the_ledger_grows(five: Path) -> None:
    cited = read_lines(five)[2]["hash"]
    Ledger(five).append(receipt(6))
    report = verify(five, head=cited)
    assert report.ok and report.anchor is not None
    assert (report.anchor.found, report.anchor.holds, report.anchor.seq) == (True, True, 3)
    assert report.head_seq == 6 and report.head_hash == read_lines(five)[-1]["hash"]


def test_a_cited_head_catches_a_rewritten_history(five: Path) -> None:
    cited = read_lines(five)[-1]["hash"]
    rewritten = Path(str(five) + ".rewritten")
    forger = Ledger(rewritten)
    for n in range(1, 6):
        forger.append(receipt(n, result_ids=["forged"] if n == 2 else [f"R{n}-a", f"R{n}-b"]))
    rewritten.replace(five)
    Path(str(rewritten) + ".head").replace(Path(str(five) + ".head"))
    assert verify(five).ok, "the documented limit: a recomputed chain verifies"
    report = verify(five, head=cited)
    assert not report.ok and report.anchor is not None and not report.anchor.found
    assert [p.kind for p in report.errors] == [ProblemKind.anchor_missing]


def test_a_cited_head_does_not_hold_when_a_line_before_it_was_edited(five: Path) -> None:
    cited = read_lines(five)[3]["hash"]
    lines = five.read_bytes().splitlines()
    lines[0] = lines[0].replace("源氏物語 1".encode(), "源氏物語 X".encode())
    write_lines(five, lines)
    report = verify(five, head=cited)
    assert report.anchor is not None and report.anchor.found and not report.anchor.holds
    assert (4, ProblemKind.anchor_missing) in [(p.line, p.kind) for p in report.errors]


def test_damage_after_a_cited_head_leaves_it_holding(five: Path) -> None:
    cited = read_lines(five)[1]["hash"]
    lines = five.read_bytes().splitlines()
    lines[4] = lines[4].replace("源氏物語 5".encode(), "源氏物語 X".encode())
    write_lines(five, lines)
    report = verify(five, head=cited)
    assert not report.ok and report.anchor is not None and report.anchor.holds


def test_is_head_hash() -> None:
    assert is_head_hash("A" * 64) and is_head_hash(GENESIS_HASH)
    assert not is_head_hash("a" * 63) and not is_head_hash("z" * 64)
    assert not is_head_hash("a" * 64 + "\n")


# --- a symlinked ledger path ---------------------------------------------------------------


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symbolic links here")
def test_a_symlinked_ledger_path_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.txt"
    target.write_bytes(b"someone else's file\n")
    link = tmp_path / "receipts.jsonl"
    try:
        link.symlink_to(target)
    except OSError as exc:  # Windows without the privilege
        pytest.skip(f"cannot create a symbolic link: {exc}")
    outcome = deposit(receipt(), env={"MCP_RECEIPT_LOG": str(link)})
    assert outcome.code is Code.RECEIPT_WRITE_FAILED
    assert "is a symbolic link" in outcome.message and "MCP_RECEIPT_LOG" in outcome.message
    assert target.read_bytes() == b"someone else's file\n"
    assert not Path(str(link) + ".head").exists()


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symbolic links here")
def test_verify_reads_through_a_link_with_the_targets_head(five: Path, tmp_path: Path) -> None:
    link = tmp_path / "link.jsonl"
    try:
        link.symlink_to(five)
    except OSError as exc:
        pytest.skip(f"cannot create a symbolic link: {exc}")
    lines = five.read_bytes().splitlines()
    write_lines(five, lines[:3])  # cut: only the target's head knows
    report = verify(link)
    assert [(p.line, p.kind) for p in report.errors] == [(4, ProblemKind.truncated)]


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symbolic links here")
def test_a_linked_folder_is_followed(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    folder = tmp_path / "linked"
    try:
        folder.symlink_to(real, target_is_directory=True)
    except OSError as exc:
        pytest.skip(f"cannot create a symbolic link: {exc}")
    assert deposit(receipt(), env={"MCP_RECEIPT_LOG": str(folder / "r.jsonl")}).deposited
    assert verify(real / "r.jsonl").ok
