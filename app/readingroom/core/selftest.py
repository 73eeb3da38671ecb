"""What every server's self-test is made of: the report, and the checks any server shares.

A server's self-test (``ServerInfo.self_test``) starts the server as a real stdio subprocess
(:class:`~readingroom.core.rawstdio.RawStdioClient`) against a loopback fake of its upstream,
and records each verified property as a :class:`Check` in a :class:`SelfTestReport`. The checks
here hold for every server of the suite: a clean JSON-RPC stdout, read-only tools, credit and
the published schema on every envelope, and an intact receipt chain. What a server promised its
upstream (pacing, caps, guards) it checks itself, from what its fake saw.

:func:`run_against_fake` is the one skeleton every self-test runs on: a temporary folder, the
fake started, the server's environment pointed at it (and at a fresh receipt ledger), the
server's stderr kept in a log, the server's own stages (:class:`Stage`), its closing checks,
and the stderr tail when something failed. A stage that raises is reported, never raised.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

from .loopback import RecordingServer
from .rawstdio import RawStdioClient
from .settings import ENV_RECEIPT_LOG, ENV_TOOL_DEADLINE

__all__ = [
    "Check",
    "SelfTestReport",
    "Stage",
    "check_count_cap",
    "check_credit",
    "check_envelope_schema",
    "check_read_only_tools",
    "check_receipt_chain",
    "check_serial_and_paced",
    "check_stdout_purity",
    "chosen_calls",
    "fire_at_once",
    "initialize",
    "print_report",
    "run_against_fake",
    "server_env",
    "stderr_tail",
    "structured",
]

MAX_RECORDS = 100
"""The records one request may ask of a paced upstream (NDL, CiNii, J-STAGE)."""
ToolCall = tuple[str, dict[str, Any]]
"""A tool's name and its arguments."""

_READ_ONLY = {
    "readOnlyHint": True,
    "idempotentHint": True,
    "openWorldHint": True,
    "destructiveHint": False,
}


@dataclass
class Check:
    """One verified property: its name, whether it held, and what was seen."""

    name: str
    ok: bool
    detail: str


@dataclass
class SelfTestReport:
    """All checks of one server's self-test, with its command and the time taken.

    Attributes:
        server: the server's name (``ndl-mcp``).
        command: the command line the server was started with.
        checks: the checks, in the order they were made.
        seconds: wall time of the whole self-test.
        measures: numbers behind the checks, for benchmarks (e.g. the smallest gap the fake
            saw), by name with their unit as suffix (``_s``).
    """

    server: str
    command: list[str]
    checks: list[Check] = field(default_factory=list)
    seconds: float = 0.0
    measures: dict[str, float] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """True when there is at least one check and every check passed."""
        return bool(self.checks) and all(c.ok for c in self.checks)

    def add(self, name: str, ok: bool, detail: str) -> bool:
        """Record a check and return its outcome."""
        self.checks.append(Check(name, bool(ok), detail))
        return bool(ok)

    def render(self) -> str:
        """A short human-readable report: one line per check and a verdict."""
        lines = [f"readingroom self-test: {self.server} = {' '.join(self.command)}"]
        for c in self.checks:
            lines.append(f"  {'PASS' if c.ok else 'FAIL'}  {c.name}: {c.detail}")
        verdict = "all checks passed" if self.ok else "FAILED"
        lines.append(f"{verdict} in {self.seconds:.1f} s")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-ready data (what ``readingroom self-test --json`` prints)."""
        return {
            "server": self.server,
            "ok": self.ok,
            "seconds": round(self.seconds, 2),
            "command": list(self.command),
            "checks": [asdict(c) for c in self.checks],
            "measures": {k: round(v, 4) for k, v in self.measures.items()},
        }


def server_env(overrides: Mapping[str, str], *, drop: Iterable[str] = ()) -> dict[str, str]:
    """This process's environment with ``overrides`` set and ``drop`` removed, for the server."""
    env = {k: v for k, v in os.environ.items() if k not in set(drop)}
    env.update(overrides)
    return env


def structured(result: Mapping[str, Any]) -> dict[str, Any]:
    """The envelope (``structuredContent``) of a ``tools/call`` result; {} when absent."""
    return dict(result.get("structuredContent") or {})


def check_read_only_tools(
    report: SelfTestReport, tools: Sequence[Mapping[str, Any]], expected: set[str], *,
    open_world: bool = True,
) -> bool:
    """Check ``tools/list`` named exactly ``expected``, each annotated read-only and idempotent.

    ``open_world``: the ``openWorldHint`` every tool must state (False for a server that
    reaches nothing outside the user's machine, such as book-agent).
    """
    names = {t.get("name") for t in tools}
    wanted = {**_READ_ONLY, "openWorldHint": open_world}
    hinted = all(
        all(t.get("annotations", {}).get(hint) is value for hint, value in wanted.items())
        for t in tools
    )
    return report.add(
        f"{len(expected)} tools, read-only",
        names == expected and hinted,
        f"{len(names)} tools: {', '.join(sorted(str(n) for n in names))}"
        + ("" if hinted else "; some lack the read-only annotations"),
    )


def check_stdout_purity(report: SelfTestReport, client: RawStdioClient, exit_code: int) -> bool:
    """Check every stdout line was JSON-RPC with LF framing and the server exited with 0."""
    problems = client.stdout_problems()
    if problems:
        detail = "; ".join(problems[:3])
    else:
        detail = (f"{len(client.raw_lines)} stdout lines, all JSON-RPC with LF only; "
                  f"exit code {exit_code}")
    return report.add("stdout purity", not problems and exit_code == 0, detail)


def check_credit(report: SelfTestReport, envelopes: Sequence[Mapping[str, Any]]) -> bool:
    """Check every envelope, failures included, carries its attribution."""
    uncredited = [e.get("operation") for e in envelopes if not e.get("attribution")]
    return report.add(
        "credit on every envelope",
        bool(envelopes) and not uncredited,
        f"{len(envelopes)} envelopes, uncredited: {uncredited or 'none'}",
    )


def chosen_calls(table: Sequence[ToolCall], calls: int | None) -> list[ToolCall]:
    """The first ``calls`` of ``table`` (all of them for None): fewer is a quicker run.

    Raises:
        ValueError: ``calls`` is outside 1..len(table).
    """
    count = len(table) if calls is None else calls
    if not 1 <= count <= len(table):
        raise ValueError(f"calls must be 1..{len(table)}, got {calls!r}")
    return list(table[:count])


def fire_at_once(report: SelfTestReport, client: RawStdioClient, calls: Sequence[ToolCall],
                 *, what: str = "calls") -> list[dict[str, Any]]:
    """Send every call before awaiting any; check each answered without an error.

    Returns the envelopes of the answers, in the order of ``calls``.
    """
    ids = [client.send_request("tools/call", {"name": n, "arguments": a}) for n, a in calls]
    results = [client.wait(i, timeout=60) for i in ids]
    failed = [n for (n, _), r in zip(calls, results, strict=True)
              if "error" in r or r["result"].get("isError")]
    report.add(f"concurrent {what} answered", not failed,
               f"{len(results)} calls, failures: {failed or 'none'}")
    return [structured(r.get("result", {})) for r in results]


def check_count_cap(report: SelfTestReport, client: RawStdioClient, fake: RecordingServer,
                    call: ToolCall, parameter: str) -> dict[str, Any]:
    """Ask ``call`` for 500 records: one request may carry ``parameter`` = 100, said in a
    ``COUNT_CAPPED`` diagnostic. Returns the answer's envelope."""
    name, arguments = call
    before = len(fake.log)
    envelope = structured(client.call_tool(name, {**arguments, "count": 500}))
    sent = [r.params.get(parameter) for r in fake.log[before:]]
    codes = {d.get("code") for d in envelope.get("diagnostics", [])}
    report.add(f"{MAX_RECORDS}-record cap",
               sent == [str(MAX_RECORDS)] and "COUNT_CAPPED" in codes,
               f"asked 500, sent {parameter}={sent}, diagnostic COUNT_CAPPED "
               f"{'present' if 'COUNT_CAPPED' in codes else 'missing'}")
    return envelope


def check_serial_and_paced(report: SelfTestReport, fake: RecordingServer, *, parameter: str,
                           floor_s: float) -> None:
    """The courtesy as the upstream saw it: at most 100 records asked (``parameter``), one
    request at a time, each arriving ``floor_s`` or more after the previous answer."""
    log = fake.log
    asked = [int(r.params.get(parameter, "0") or 0) for r in log]
    report.add(f"never more than {MAX_RECORDS} records asked",
               all(n <= MAX_RECORDS for n in asked),
               f"{len(log)} requests, largest {parameter} {max(asked, default=0)}")
    report.add("serial requests", fake.overlaps() == 0 and fake.max_in_flight <= 1,
               f"{len(log)} requests, at most {fake.max_in_flight} in flight, "
               f"{fake.overlaps()} overlaps")
    floor_gaps, arrival_gaps = fake.floor_gaps(), fake.gaps()
    smallest = min(floor_gaps, default=0.0)
    between = min(arrival_gaps, default=0.0)
    report.measures.update({"floor_gap_min_s": smallest, "arrival_gap_min_s": between})
    report.add(f"{floor_s:g}-second floor", bool(floor_gaps) and smallest >= floor_s,
               f"smallest gap from an answer to the next arrival {smallest:.3f} s; "
               f"between arrivals {between:.3f} s "
               f"(mean {sum(arrival_gaps) / max(len(arrival_gaps), 1):.3f} s)")


def check_envelope_schema(
    report: SelfTestReport,
    envelopes: Sequence[Mapping[str, Any]],
    schema: Mapping[str, Any] | None = None,
) -> bool:
    """Check every envelope against the published JSON Schema (``docs/response-schema.json``).

    Args:
        report: where the check is recorded.
        envelopes: the envelopes the server returned.
        schema: the schema; defaults to :func:`readingroom.core.envelope.response_schema`.
    """
    import jsonschema

    if schema is None:
        from .envelope import response_schema

        schema = response_schema()
    validator = jsonschema.Draft202012Validator(dict(schema))
    invalid = []
    for e in envelopes:
        errors = sorted(validator.iter_errors(dict(e)), key=lambda err: list(err.path))
        if errors:
            invalid.append(f"{e.get('operation')}: {errors[0].message}")
    return report.add(
        "envelopes match docs/response-schema.json",
        bool(envelopes) and not invalid,
        f"{len(envelopes)} checked" if not invalid else "; ".join(invalid[:2]),
    )


def check_receipt_chain(report: SelfTestReport, path: Path, expected: int) -> bool:
    """Check the ledger at ``path`` holds ``expected`` receipts and its hash chain is intact."""
    from .verification import verify

    if not path.exists():
        return report.add("receipt chain", False, "no receipt ledger was written")
    result = verify(path)
    return report.add(
        "receipt chain",
        result.ok and result.count == expected,
        f"{result.count} receipts for {expected} requests, chain "
        f"{'intact' if result.ok else 'BROKEN'}",
    )


def stderr_tail(report: SelfTestReport, path: Path, chars: int = 1500) -> None:
    """When the report failed, add the tail of the server's stderr log as a last entry."""
    if report.ok or not path.exists():
        return
    tail = path.read_text("utf-8", "replace")[-chars:].strip()
    if tail:
        report.add("server stderr (tail)", False, tail.replace("\n", "\n    "))


F = TypeVar("F")


@dataclass
class Stage:
    """What a self-test's stages work with: the report, the command, the environment."""

    report: SelfTestReport
    argv: list[str]
    env: dict[str, str]
    """The server's environment: the fake's variables, the ledger, no tool-deadline override."""
    folder: Path
    """A temporary folder, removed after the run (state files of the server go here)."""
    ledger: Path
    """The receipt ledger the server writes (``MCP_RECEIPT_LOG``)."""
    errlog: BinaryIO
    """Where the server's stderr goes."""
    say: Callable[[str], None]
    """Progress: a short line before each stage."""

    def client(self) -> RawStdioClient:
        """The server as a stdio subprocess (use it as a context manager)."""
        return RawStdioClient(self.argv, env=self.env, stderr=self.errlog)


def run_against_fake(
    server: str,
    command: Sequence[str],
    fake: AbstractContextManager[F],
    *,
    environment: Callable[[F, Path], Mapping[str, str]],
    exercise: Callable[[Stage, F], None],
    finish: Callable[[Stage, F], None],
    drop: Iterable[str] = (),
    progress: Callable[[str], None] | None = None,
) -> SelfTestReport:
    """Run one server's self-test on the shared skeleton; never raises for a failed check.

    Args:
        server: the server's name (the report's).
        command: the server's command line.
        fake: the loopback fake of its upstream(s), started for the run.
        environment: the variables pointing the server at the started fake (given the
            temporary folder too); the ledger and the dropped variables are added here.
        exercise: the server's stages (a raised exception is reported as "server ran").
        finish: the closing checks over what the fake and the ledger hold, after the server
            exited.
        drop: more variables removed from the inherited environment (optional settings).
        progress: called with a short line before each stage.
    """
    argv = list(command)
    report = SelfTestReport(server=server, command=argv)
    began = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="readingroom-selftest-") as tmp, fake as started:
        folder = Path(tmp)
        ledger = folder / "receipts.jsonl"
        errlog_path = folder / "stderr.log"
        env = server_env({**environment(started, folder), ENV_RECEIPT_LOG: str(ledger)},
                         drop=[ENV_TOOL_DEADLINE, *drop])
        with open(errlog_path, "wb") as errlog:
            stage = Stage(report, argv, env, folder, ledger, errlog,
                          progress or (lambda _m: None))
            try:
                exercise(stage, started)
            except Exception as exc:  # the report must say what broke, not a traceback
                report.add("server ran", False, f"{type(exc).__name__}: {exc}")
        finish(stage, started)
        stderr_tail(report, errlog_path)
    report.seconds = time.monotonic() - began
    return report


def initialize(report: SelfTestReport, client: RawStdioClient, server: str) -> list[Any]:
    """Initialize the session (checking ``serverInfo.name``) and return its ``tools/list``."""
    init = client.initialize(timeout=60)
    info = init.get("result", {}).get("serverInfo", {})
    report.add("initialize", info.get("name") == server,
               f"serverInfo {info.get('name')} {info.get('version')}")
    tools: list[Any] = client.request("tools/list", {}).get("result", {}).get("tools", [])
    return tools


def print_report(report: SelfTestReport, *, as_json: bool = False) -> int:
    """Print ``report`` (text or JSON) to stdout; 0 when it passed, else 1."""
    if as_json:
        print(json.dumps(report.to_dict(), ensure_ascii=False, indent=2))
    else:
        print(report.render())
    return 0 if report.ok else 1
