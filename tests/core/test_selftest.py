"""The self-test report and the checks every server's self-test shares."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from readingroom.core import selftest as selftest_module
from readingroom.core.ledger import Ledger
from readingroom.core.loopback import RecordingServer, RequestRecord
from readingroom.core.rawstdio import stdout_problems
from readingroom.core.selftest import (
    Check,
    SelfTestReport,
    check_credit,
    check_envelope_schema,
    check_read_only_tools,
    check_receipt_chain,
    check_serial_and_paced,
    check_stdout_purity,
    chosen_calls,
    print_report,
    server_env,
    stderr_tail,
    structured,
)

SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["operation", "attribution"],
    "properties": {"operation": {"type": "string"}, "attribution": {"type": "array"}},
}
READ_ONLY = {"readOnlyHint": True, "idempotentHint": True, "openWorldHint": True,
             "destructiveHint": False}


def report() -> SelfTestReport:
    return SelfTestReport(server="demo-mcp", command=["demo-mcp", "--flag"])


class StubClient:
    """What check_stdout_purity reads of a RawStdioClient."""

    def __init__(self, lines: list[bytes]) -> None:
        self.raw_lines = lines

    def stdout_problems(self) -> list[str]:
        return stdout_problems(self.raw_lines)


def test_a_report_passes_only_with_checks_that_all_passed() -> None:
    r = report()
    assert r.ok is False  # nothing checked proves nothing
    assert r.add("one", True, "fine") is True
    assert r.ok is True
    assert r.add("two", 0, "broken") is False  # type: ignore[arg-type]
    assert r.ok is False
    assert r.checks == [Check("one", True, "fine"), Check("two", False, "broken")]


def test_render_and_to_dict() -> None:
    r = report()
    r.add("floor", True, "1.05 s")
    r.seconds = 2.345
    r.measures["floor_gap_min_s"] = 1.0512345
    assert r.render() == ("readingroom self-test: demo-mcp = demo-mcp --flag\n"
                          "  PASS  floor: 1.05 s\n"
                          "all checks passed in 2.3 s")
    assert r.to_dict() == {
        "server": "demo-mcp", "ok": True, "seconds": 2.35, "command": ["demo-mcp", "--flag"],
        "checks": [{"name": "floor", "ok": True, "detail": "1.05 s"}],
        "measures": {"floor_gap_min_s": 1.0512},
    }
    json.dumps(r.to_dict())
    r.add("late", False, "no")
    assert r.render().endswith("FAILED in 2.3 s")


def test_print_report_prints_and_returns_the_exit_status(capsys: pytest.CaptureFixture) -> None:
    r = report()
    r.add("x", True, "ok")
    assert print_report(r, as_json=True) == 0
    assert json.loads(capsys.readouterr().out)["ok"] is True
    r.add("y", False, "no")
    assert print_report(r) == 1
    assert "FAIL  y: no" in capsys.readouterr().out


def test_stdout_purity_names_every_broken_line() -> None:
    good = StubClient([b'{"jsonrpc": "2.0", "id": 1, "result": {}}\n'])
    r = report()
    assert check_stdout_purity(r, good, 0) is True  # type: ignore[arg-type]
    assert "1 stdout lines" in r.checks[-1].detail
    assert check_stdout_purity(r, good, 3) is False  # type: ignore[arg-type]
    bad = StubClient([b"hello\n", b'{"jsonrpc": "2.0"}\r\n', b'{"a": 1}\n', b'{"jsonrpc": "2.0"}'])
    assert check_stdout_purity(r, bad, 0) is False  # type: ignore[arg-type]
    detail = r.checks[-1].detail
    assert "line 1 is not JSON" in detail and "line 2 contains a CR" in detail
    assert "line 3 is not a JSON-RPC" in detail


def test_envelope_schema_names_the_first_invalid_envelope() -> None:
    r = report()
    ok = {"operation": "search", "attribution": ["credit"]}
    assert check_envelope_schema(r, [ok], SCHEMA) is True
    assert check_envelope_schema(r, [ok, {"operation": "get"}], SCHEMA) is False
    assert "get: 'attribution' is a required property" in r.checks[-1].detail
    assert check_envelope_schema(r, [], SCHEMA) is False


def test_envelope_schema_defaults_to_the_published_one() -> None:
    r = report()
    assert check_envelope_schema(r, [{"operation": "x"}]) is False
    assert r.checks[-1].name == "envelopes match docs/response-schema.json"


def test_credit_on_every_envelope() -> None:
    r = report()
    assert check_credit(r, [{"operation": "a", "attribution": ["c"]}]) is True
    assert check_credit(r, [{"operation": "a", "attribution": ["c"]},
                            {"operation": "b", "attribution": []}]) is False
    assert "['b']" in r.checks[-1].detail
    assert check_credit(r, []) is False


def test_read_only_tools() -> None:
    r = report()
    tools = [{"name": "demo_search", "annotations": READ_ONLY},
             {"name": "demo_get", "annotations": READ_ONLY}]
    assert check_read_only_tools(r, tools, {"demo_search", "demo_get"}) is True
    assert r.checks[-1].name == "2 tools, read-only"
    assert check_read_only_tools(r, tools, {"demo_search"}) is False
    writes = [{"name": "demo_search", "annotations": {**READ_ONLY, "readOnlyHint": False}}]
    assert check_read_only_tools(r, writes, {"demo_search"}) is False
    assert "lack the read-only annotations" in r.checks[-1].detail


def test_receipt_chain(tmp_path: Path) -> None:
    r = report()
    path = tmp_path / "receipts.jsonl"
    assert check_receipt_chain(r, path, 0) is False
    assert r.checks[-1].detail == "no receipt ledger was written"
    ledger = Ledger(path)
    for n in range(2):
        ledger.append({"operation": "search", "query": f"q{n}"})
    assert check_receipt_chain(r, path, 2) is True
    assert check_receipt_chain(r, path, 3) is False
    lines = path.read_text("utf-8").splitlines()
    path.write_text(lines[0].replace("q0", "qX") + "\n" + lines[1] + "\n", encoding="utf-8")
    assert check_receipt_chain(r, path, 2) is False
    assert "BROKEN" in r.checks[-1].detail


def test_stderr_tail_only_for_a_failed_report(tmp_path: Path) -> None:
    log = tmp_path / "stderr.log"
    log.write_text("line one\nTraceback: boom\n", encoding="utf-8")
    r = report()
    r.add("fine", True, "")
    stderr_tail(r, log)
    assert len(r.checks) == 1
    r.add("broken", False, "")
    stderr_tail(r, log)
    assert r.checks[-1] == Check("server stderr (tail)", False,
                                 "line one\n    Traceback: boom")


def test_server_env_and_structured(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KEEP_ME", "1")
    monkeypatch.setenv("DROP_ME", "1")
    env = server_env({"NEW": "x"}, drop=["DROP_ME"])
    assert env["KEEP_ME"] == "1" and env["NEW"] == "x" and "DROP_ME" not in env
    assert structured({"structuredContent": {"a": 1}}) == {"a": 1}
    assert structured({"content": []}) == {}


def _upstream(*requests: tuple[float, float, str]) -> RecordingServer:
    """A fake whose log holds requests (arrived, answered, count); each finished as answered."""
    fake = RecordingServer()
    for arrived, answered, count in requests:
        fake.journal.add(RequestRecord("GET", "", "", {"count": count}, "", arrived, answered,
                                       answered, 200))
    fake.max_in_flight = 1
    return fake


def _failed(report: SelfTestReport) -> set[str]:
    return {c.name for c in report.checks if not c.ok}


def test_serial_and_paced_passes_what_kept_the_courtesy() -> None:
    got = report()
    check_serial_and_paced(got, _upstream((0.0, 0.2, "20"), (1.2, 1.3, "100"), (2.4, 2.5, "5")),
                           parameter="count", floor_s=1.0)
    assert [c.name for c in got.checks] == [
        "never more than 100 records asked", "serial requests", "1-second floor"]
    assert got.ok and got.measures["floor_gap_min_s"] == pytest.approx(1.0)


def test_serial_and_paced_names_each_broken_promise() -> None:
    early = report()
    check_serial_and_paced(early, _upstream((0.0, 0.2, "20"), (0.9, 1.0, "20")),
                           parameter="count", floor_s=1.0)
    assert _failed(early) == {"1-second floor"}
    greedy = report()
    check_serial_and_paced(greedy, _upstream((0.0, 0.2, "101"), (1.5, 1.6, "1")),
                           parameter="count", floor_s=1.0)
    assert _failed(greedy) == {"never more than 100 records asked"}
    overlapping = report()
    check_serial_and_paced(overlapping, _upstream((0.0, 2.0, "1"), (1.0, 3.0, "1")),
                           parameter="count", floor_s=1.0)
    assert "serial requests" in _failed(overlapping)
    silent = report()
    check_serial_and_paced(silent, _upstream(), parameter="count", floor_s=1.0)
    assert "1-second floor" in _failed(silent), "no request at all proves no floor"


def test_chosen_calls_takes_the_first_ones_and_refuses_a_count_outside_the_table() -> None:
    table = [("a", {}), ("b", {"x": 1}), ("c", {})]
    assert chosen_calls(table, None) == table
    assert chosen_calls(table, 2) == table[:2]
    for bad in (0, 4, -1):
        with pytest.raises(ValueError, match=r"calls must be 1\.\.3"):
            chosen_calls(table, bad)


def test_all_is_honest() -> None:
    for name in selftest_module.__all__:
        assert hasattr(selftest_module, name)
    public = {n for n, v in vars(selftest_module).items()
              if not n.startswith("_") and callable(v)
              and getattr(v, "__module__", "") == selftest_module.__name__}
    assert public == set(selftest_module.__all__)
