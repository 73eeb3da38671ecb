"""``readingroom self-test``: prove the NDL undertakings hold in a real ndl-mcp process.

Launches ``ndl-mcp`` as a stdio subprocess (``python -m readingroom.ndl``, or the frozen
executable beside this one) against a loopback fake SRU server, fires concurrent searches, and
checks what the *fake server* saw: strictly serial requests, at least 1.0 s between request
starts, never more than 100 records asked, no request for a refused dpid. It also checks credit
on every envelope, every envelope against the published schema, stdout purity, and the receipt
chain. No network, no user data. The installer runs the same command against the frozen build.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .fakesru import FakeSru
from .rawclient import RawStdioClient

__all__ = ["Check", "SelfTestReport", "default_ndl_command", "run_self_test"]

EXPECTED_TOOLS = {
    "ndl_search_books",
    "ndl_search_national_bibliography",
    "ndl_search_articles",
    "ndl_search_digital_open",
    "ndl_search_all",
    "ndl_get_record",
}

CONCURRENT_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("ndl_search_books", {"title": "吾輩は猫である"}),
    ("ndl_search_national_bibliography", {"title": "こころ", "from_year": 1914}),
    ("ndl_search_articles", {"creator": "夏目漱石", "count": 5}),
    ("ndl_search_digital_open", {"creator": "夏目漱石"}),
    ("ndl_search_all", {"anywhere": "漱石"}),
    ("ndl_get_record", {"jpno": "71009951"}),
]
FLOOR_S = 1.0
MAX_RECORDS = 100


@dataclass
class Check:
    """One verified property."""

    name: str
    ok: bool
    detail: str


@dataclass
class SelfTestReport:
    """All checks, with the server command and the time taken."""

    command: list[str]
    checks: list[Check] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """True when every check passed."""
        return bool(self.checks) and all(c.ok for c in self.checks)

    def add(self, name: str, ok: bool, detail: str) -> bool:
        """Record a check and return its outcome."""
        self.checks.append(Check(name, bool(ok), detail))
        return bool(ok)

    def render(self) -> str:
        """A short human-readable report."""
        lines = [f"readingroom self-test: ndl-mcp = {' '.join(self.command)}"]
        for c in self.checks:
            lines.append(f"  {'PASS' if c.ok else 'FAIL'}  {c.name}: {c.detail}")
        verdict = "all checks passed" if self.ok else "FAILED"
        lines.append(f"{verdict} in {self.seconds:.1f} s")
        return "\n".join(lines)


def default_ndl_command() -> list[str]:
    """The ndl-mcp beside a frozen ``readingroom``, else ``python -m readingroom.ndl``."""
    if getattr(sys, "frozen", False):
        exe = "ndl-mcp.exe" if os.name == "nt" else "ndl-mcp"
        return [str(Path(sys.executable).with_name(exe))]
    return [sys.executable, "-m", "readingroom.ndl"]


def _structured(result: dict[str, Any]) -> dict[str, Any]:
    return result.get("structuredContent") or {}


def run_self_test(
    command: Sequence[str] | None = None,
    *,
    progress: Callable[[str], None] | None = None,
) -> SelfTestReport:
    """Run every check and return the report (never raises for a failed check)."""
    say = progress or (lambda _m: None)
    argv = list(command) if command else default_ndl_command()
    report = SelfTestReport(command=argv)
    began = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="readingroom-selftest-") as tmp, FakeSru(
        latency=0.05
    ) as fake:
        ledger_path = Path(tmp) / "receipts.jsonl"
        env = dict(os.environ)
        env.update({"NDL_SRU_URL": fake.url, "MCP_RECEIPT_LOG": str(ledger_path)})
        env.pop("READINGROOM_TOOL_DEADLINE", None)
        with open(Path(tmp) / "stderr.log", "wb") as errlog:
            try:
                _exercise(report, argv, env, errlog, fake, say)
            except Exception as exc:  # the report must say what broke, not a traceback
                report.add("server ran", False, f"{type(exc).__name__}: {exc}")
        if not report.ok:
            tail = (Path(tmp) / "stderr.log").read_text("utf-8", "replace")[-1500:]
            if tail.strip():
                report.add("server stderr (tail)", False, tail.strip().replace("\n", "\n    "))
        _check_ledger(report, ledger_path, len(fake.log))
    report.seconds = time.monotonic() - began
    return report


def _exercise(report: SelfTestReport, argv, env, errlog, fake: FakeSru, say) -> None:
    from ..core.envelope import response_schema

    validator = _schema_validator(response_schema())
    envelopes: list[dict[str, Any]] = []
    say("starting ndl-mcp")
    with RawStdioClient(argv, env=env, stderr=errlog) as client:
        init = client.initialize(timeout=60)
        info = init.get("result", {}).get("serverInfo", {})
        report.add("initialize", info.get("name") == "ndl-mcp",
                   f"serverInfo {info.get('name')} {info.get('version')}")

        tools = client.request("tools/list", {}).get("result", {}).get("tools", [])
        names = {t["name"] for t in tools}
        hints_ok = all(
            t.get("annotations", {}).get("readOnlyHint") is True
            and t["annotations"].get("idempotentHint") is True
            and t["annotations"].get("openWorldHint") is True
            and t["annotations"].get("destructiveHint") is False
            for t in tools
        )
        report.add("six tools, read-only", names == EXPECTED_TOOLS and hints_ok,
                   f"{len(names)} tools: {', '.join(sorted(names))}")

        say(f"firing {len(CONCURRENT_CALLS)} concurrent searches")
        ids = [client.send_request("tools/call", {"name": n, "arguments": a})
               for n, a in CONCURRENT_CALLS]
        results = [client.wait(i, timeout=60) for i in ids]
        failed = [n for (n, _), r in zip(CONCURRENT_CALLS, results, strict=True)
                  if "error" in r or r["result"].get("isError")]
        envelopes += [_structured(r.get("result", {})) for r in results]
        report.add("concurrent searches answered", not failed,
                   f"{len(results)} calls, failures: {failed or 'none'}")

        say("asking for 500 records")
        before = len(fake.log)
        capped = client.call_tool("ndl_search_books", {"title": "坊っちゃん", "count": 500})
        envelopes.append(_structured(capped))
        sent = [r.params.get("maximumRecords") for r in fake.log[before:]]
        codes = {d.get("code") for d in _structured(capped).get("diagnostics", [])}
        report.add("100-record cap", sent == ["100"] and "COUNT_CAPPED" in codes,
                   f"asked 500, sent maximumRecords={sent}, diagnostic COUNT_CAPPED "
                   f"{'present' if 'COUNT_CAPPED' in codes else 'missing'}")

        say("asking for a refused provider")
        before = len(fake.log)
        refused = client.call_tool("ndl_search_all", {"title": "源氏物語",
                                                       "providers": ["ndl-dl"]})
        envelopes.append(_structured(refused))
        code = _structured(refused).get("error", {}).get("code")
        report.add("dpid guard", refused.get("isError") is True
                   and code == "DPID_NOT_PERMITTED" and len(fake.log) == before,
                   f"ndl-dl refused with {code}; requests sent: {len(fake.log) - before}")

        exit_code = client.close()
        problems = client.stdout_problems()
        report.add("stdout purity", not problems and exit_code == 0,
                   f"{len(client.raw_lines)} stdout lines, all JSON-RPC with LF only; "
                   f"exit code {exit_code}" if not problems else "; ".join(problems[:3]))

    log = fake.log
    too_many = [r.params.get("maximumRecords") for r in log
                if int(r.params.get("maximumRecords", "0")) > MAX_RECORDS]
    report.add("never more than 100 records asked", not too_many,
               f"{len(log)} requests, largest maximumRecords "
               f"{max((int(r.params.get('maximumRecords', 0)) for r in log), default=0)}")
    report.add("serial requests", fake.overlaps() == 0 and fake.max_in_flight <= 1,
               f"{len(log)} requests, at most {fake.max_in_flight} in flight, "
               f"{fake.overlaps()} overlaps")
    gaps = fake.gaps()
    report.add("1-second floor", bool(gaps) and min(gaps) >= FLOOR_S,
               f"smallest gap between request starts {min(gaps, default=0):.3f} s "
               f"(mean {sum(gaps) / max(len(gaps), 1):.3f} s)")
    uncredited = [e.get("operation") for e in envelopes if not e.get("attribution")]
    report.add("credit on every envelope", bool(envelopes) and not uncredited,
               f"{len(envelopes)} envelopes, uncredited: {uncredited or 'none'}")
    invalid = []
    for e in envelopes:
        errors = sorted(validator.iter_errors(e), key=lambda err: err.path)
        if errors:
            invalid.append(f"{e.get('operation')}: {errors[0].message}")
    report.add("envelopes match docs/response-schema.json", not invalid,
               f"{len(envelopes)} checked" if not invalid else "; ".join(invalid[:2]))


def _schema_validator(schema: dict[str, Any]):
    import jsonschema

    return jsonschema.Draft202012Validator(schema)


def _check_ledger(report: SelfTestReport, path: Path, requests: int) -> None:
    from ..core.ledger import verify

    if not path.exists():
        report.add("receipt chain", False, "no receipt ledger was written")
        return
    result = verify(path)
    report.add("receipt chain", result.ok and result.count == requests,
               f"{result.count} receipts for {requests} requests, chain "
               f"{'intact' if result.ok else 'BROKEN'}")


def main(argv: Sequence[str] | None = None, *, as_json: bool = False) -> int:
    """Run the self-test and print its report; exit status 0 only when every check passed."""
    report = run_self_test(argv, progress=lambda m: print(f"... {m}", file=sys.stderr))
    if as_json:
        print(json.dumps({"ok": report.ok, "seconds": round(report.seconds, 2),
                          "command": report.command,
                          "checks": [asdict(c) for c in report.checks]},
                         ensure_ascii=False, indent=2))
    else:
        print(report.render())
    return 0 if report.ok else 1
