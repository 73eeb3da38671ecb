"""cinii-mcp's self-test: prove its courtesy and its secrecy in a real cinii-mcp process.

Launches cinii-mcp as a stdio subprocess (``python -m readingroom.cinii``, or the frozen
executable beside this one) against the loopback :class:`~readingroom.cinii.fake.FakeCinii`,
with an application id made up for the test, fires one call of every tool at once, and checks
what the *fake* saw: strictly serial requests, every arrival at least 1.0 s after the previous
answer, never more than 100 records asked, the application id sent with every request; and
what the client saw: credit and the published schema on every envelope, a clean JSON-RPC stdout,
the receipt chain, and the application id in no answer, no receipt and no log line. No
network, no user data, no real application id.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..core.selftest import (
    SelfTestReport,
    Stage,
    check_credit,
    check_envelope_schema,
    check_read_only_tools,
    check_receipt_chain,
    check_stdout_purity,
    initialize,
    run_against_fake,
    structured,
)
from . import ENV_APPID, ENV_CINII_URL
from .fake import FakeCinii

__all__ = ["CALLS", "EXPECTED_TOOLS", "FLOOR_S", "SELF_TEST_APPID", "run_self_test"]

EXPECTED_TOOLS = {
    "cinii_search_articles",
    "cinii_search_books",
    "cinii_search_dissertations",
    "cinii_search_projects",
    "cinii_search_all",
    "cinii_get_record",
}
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("cinii_search_articles", {"q": "漱石", "count": 5}),
    ("cinii_search_books", {"title": "読書室"}),
    ("cinii_search_dissertations", {"q": "読書室"}),
    ("cinii_search_projects", {"q": "読書室"}),
    ("cinii_search_all", {"q": "漱石"}),
    ("cinii_get_record", {"crid": "9990000000000000001"}),
]
"""One call of every tool, fired at once; each sends one request."""
FLOOR_S = 1.0
MAX_RECORDS = 100
FAKE_LATENCY_S = 0.05
SELF_TEST_APPID = "readingroom-self-test-appid-7f3c"
"""A made-up application id: the fake accepts anything, and it must surface nowhere."""


def _default_command() -> list[str]:
    from . import SERVER

    return SERVER.command()


def run_self_test(
    command: Sequence[str] | None = None,
    *,
    progress: Callable[[str], None] | None = None,
    calls: int | None = None,
) -> SelfTestReport:
    """Run every check against cinii-mcp and return the report (never raises for a check).

    Args:
        command: the server's command line; default ``readingroom.cinii.SERVER.command()``.
        progress: called with a short line before each stage.
        calls: how many of :data:`CALLS` to fire at once (1 to 6, default all).

    Raises:
        ValueError: ``calls`` is outside 1..6.
    """
    count = len(CALLS) if calls is None else calls
    if not 1 <= count <= len(CALLS):
        raise ValueError(f"calls must be 1..{len(CALLS)}, got {calls!r}")
    concurrent = CALLS[:count]
    outputs: list[bytes] = []

    def exercise(stage: Stage, fake: FakeCinii) -> None:
        outputs.extend(_exercise(stage, fake, concurrent))

    def finish(stage: Stage, fake: FakeCinii) -> None:
        check_receipt_chain(stage.report, stage.ledger, len(fake.log))
        _check_secrecy(stage.report, outputs, stage.ledger, Path(stage.errlog.name))

    return run_against_fake(
        "cinii-mcp", list(command) if command else _default_command(),
        FakeCinii(latency=FAKE_LATENCY_S),
        environment=lambda fake, _folder: {ENV_CINII_URL: fake.url,
                                           ENV_APPID: SELF_TEST_APPID},
        exercise=exercise, finish=finish, progress=progress)


def _exercise(stage: Stage, fake: FakeCinii,
              concurrent: list[tuple[str, dict[str, Any]]]) -> list[bytes]:
    """Drive the server; return every stdout line it wrote."""
    report, say = stage.report, stage.say
    envelopes: list[dict[str, Any]] = []
    say("starting cinii-mcp")
    with stage.client() as client:
        tools = initialize(report, client, "cinii-mcp")
        check_read_only_tools(report, tools, EXPECTED_TOOLS)

        say(f"firing {len(concurrent)} calls at once")
        ids = [client.send_request("tools/call", {"name": n, "arguments": a})
               for n, a in concurrent]
        results = [client.wait(i, timeout=60) for i in ids]
        failed = [n for (n, _), r in zip(concurrent, results, strict=True)
                  if "error" in r or r["result"].get("isError")]
        envelopes += [structured(r.get("result", {})) for r in results]
        report.add("concurrent calls answered", not failed,
                   f"{len(results)} calls, failures: {failed or 'none'}")

        say("asking for 500 records")
        before = len(fake.log)
        capped = client.call_tool("cinii_search_articles", {"q": "漱石", "count": 500})
        envelopes.append(structured(capped))
        sent = [r.params.get("count") for r in fake.log[before:]]
        codes = {d.get("code") for d in structured(capped).get("diagnostics", [])}
        report.add("100-record cap", sent == ["100"] and "COUNT_CAPPED" in codes,
                   f"asked 500, sent count={sent}, diagnostic COUNT_CAPPED "
                   f"{'present' if 'COUNT_CAPPED' in codes else 'missing'}")
        check_stdout_purity(report, client, client.close())
        lines = list(client.raw_lines)

    _check_what_the_fake_saw(report, fake)
    check_credit(report, envelopes)
    check_envelope_schema(report, envelopes)
    return lines


def _check_what_the_fake_saw(report: SelfTestReport, fake: FakeCinii) -> None:
    """The courtesy as CiNii would see it: records asked, serial, the floor, the appid."""
    log = fake.log
    asked = [int(r.params.get("count", "0") or 0) for r in log]
    report.add("never more than 100 records asked", all(n <= MAX_RECORDS for n in asked),
               f"{len(log)} requests, largest count {max(asked, default=0)}")
    report.add("serial requests", fake.overlaps() == 0 and fake.max_in_flight <= 1,
               f"{len(log)} requests, at most {fake.max_in_flight} in flight, "
               f"{fake.overlaps()} overlaps")
    floor_gaps, arrival_gaps = fake.floor_gaps(), fake.gaps()
    smallest = min(floor_gaps, default=0.0)
    between = min(arrival_gaps, default=0.0)
    report.measures.update({"floor_gap_min_s": smallest, "arrival_gap_min_s": between})
    report.add("1-second floor", bool(floor_gaps) and smallest >= FLOOR_S,
               f"smallest gap from an answer to the next arrival {smallest:.3f} s; between "
               f"arrivals {between:.3f} s")
    sent = sum(1 for r in log if r.params.get("appid") == SELF_TEST_APPID)
    report.add("application id sent", bool(log) and sent == len(log),
               f"{sent} of {len(log)} requests carried the application id")


def _check_secrecy(report: SelfTestReport, outputs: Sequence[bytes], ledger: Path,
                   errlog: Path) -> None:
    """The application id in no answer, receipt or log line (the fake echoed it back)."""
    secret = SELF_TEST_APPID.encode()
    places = {
        "stdout": b"\n".join(outputs),
        "receipts": ledger.read_bytes() if ledger.exists() else b"",
        "stderr": errlog.read_bytes() if errlog.exists() else b"",
    }
    leaked = [name for name, data in places.items() if secret in data]
    report.add("application id kept secret", bool(outputs) and not leaked,
               f"searched {', '.join(places)} for it: "
               + (f"FOUND in {', '.join(leaked)}" if leaked else "absent"))
