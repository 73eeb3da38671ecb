"""ndl-mcp's self-test: prove the NDL undertakings hold in a real ndl-mcp process.

Launches ndl-mcp as a stdio subprocess (``python -m readingroom.ndl``, or the frozen executable
beside this one) against the loopback :class:`~readingroom.ndl.fake.FakeSru`, fires
concurrent searches, and checks what the *fake* saw: strictly serial requests, every arrival at
least 1.0 s after the previous answer (the smallest gap between arrivals is reported too),
never more than 100 records asked, no request for a refused dpid. The shared checks of
:mod:`readingroom.core.selftest` add credit and the published schema on every envelope, stdout
purity and the receipt chain. No network, no user data. The installer runs it against the
frozen build.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
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
from . import ENV_NDL_SRU_URL
from .fake import FakeSru

__all__ = ["CONCURRENT_CALLS", "EXPECTED_TOOLS", "FLOOR_S", "run_self_test"]

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
"""The searches fired at once; each sends one request."""
FLOOR_S = 1.0
"""The courtesy floor the fake must see from each answer to the next arrival."""
MAX_RECORDS = 100
FAKE_LATENCY_S = 0.05


def _default_command() -> list[str]:
    from . import SERVER

    return SERVER.command()


def run_self_test(
    command: Sequence[str] | None = None,
    *,
    progress: Callable[[str], None] | None = None,
    calls: int | None = None,
) -> SelfTestReport:
    """Run every check against ndl-mcp and return the report (never raises for a failed check).

    Args:
        command: the server's command line; default ``readingroom.ndl.SERVER.command()`` (the
            frozen ndl-mcp beside this executable, else ``python -m readingroom.ndl``).
        progress: called with a short line before each stage.
        calls: how many of :data:`CONCURRENT_CALLS` to fire at once (1 to 6, default all);
            fewer means fewer 1-second floors to wait through, for quick tests.

    Raises:
        ValueError: ``calls`` is outside 1..6.
    """
    count = len(CONCURRENT_CALLS) if calls is None else calls
    if not 1 <= count <= len(CONCURRENT_CALLS):
        raise ValueError(f"calls must be 1..{len(CONCURRENT_CALLS)}, got {calls!r}")
    concurrent = CONCURRENT_CALLS[:count]
    return run_against_fake(
        "ndl-mcp", list(command) if command else _default_command(),
        FakeSru(latency=FAKE_LATENCY_S),
        environment=lambda fake, _folder: {ENV_NDL_SRU_URL: fake.url},
        exercise=lambda stage, fake: _exercise(stage, fake, concurrent),
        finish=_finish, progress=progress)


def _finish(stage: Stage, fake: FakeSru) -> None:
    check_receipt_chain(stage.report, stage.ledger, len(fake.log))


def _exercise(stage: Stage, fake: FakeSru, concurrent: list[tuple[str, dict[str, Any]]]) -> None:
    """Drive the server through every stage, then judge what the fake saw."""
    report, say = stage.report, stage.say
    envelopes: list[dict[str, Any]] = []
    say("starting ndl-mcp")
    with stage.client() as client:
        tools = initialize(report, client, "ndl-mcp")
        check_read_only_tools(report, tools, EXPECTED_TOOLS)
        say(f"firing {len(concurrent)} concurrent searches")
        ids = [client.send_request("tools/call", {"name": n, "arguments": a})
               for n, a in concurrent]
        results = [client.wait(i, timeout=60) for i in ids]
        failed = [n for (n, _), r in zip(concurrent, results, strict=True)
                  if "error" in r or r["result"].get("isError")]
        envelopes += [structured(r.get("result", {})) for r in results]
        report.add("concurrent searches answered", not failed,
                   f"{len(results)} calls, failures: {failed or 'none'}")

        say("asking for 500 records")
        before = len(fake.log)
        capped = client.call_tool("ndl_search_books", {"title": "坊っちゃん", "count": 500})
        envelopes.append(structured(capped))
        sent = [r.params.get("maximumRecords") for r in fake.log[before:]]
        codes = {d.get("code") for d in structured(capped).get("diagnostics", [])}
        report.add("100-record cap", sent == ["100"] and "COUNT_CAPPED" in codes,
                   f"asked 500, sent maximumRecords={sent}, diagnostic COUNT_CAPPED "
                   f"{'present' if 'COUNT_CAPPED' in codes else 'missing'}")

        say("asking for a refused provider")
        before = len(fake.log)
        refused = client.call_tool("ndl_search_all", {"title": "源氏物語",
                                                       "providers": ["ndl-dl"]})
        envelopes.append(structured(refused))
        code = structured(refused).get("error", {}).get("code")
        report.add("dpid guard", refused.get("isError") is True
                   and code == "PROVIDER_NOT_PERMITTED" and len(fake.log) == before,
                   f"ndl-dl refused with {code}; requests sent: {len(fake.log) - before}")

        check_stdout_purity(report, client, client.close())

    _check_what_the_fake_saw(report, fake)
    check_credit(report, envelopes)
    check_envelope_schema(report, envelopes)


def _check_what_the_fake_saw(report: SelfTestReport, fake: FakeSru) -> None:
    """The undertakings as the upstream sees them: records asked, serial, the floor."""
    log = fake.log
    asked = [int(r.params.get("maximumRecords", "0")) for r in log]
    report.add("never more than 100 records asked", all(n <= MAX_RECORDS for n in asked),
               f"{len(log)} requests, largest maximumRecords {max(asked, default=0)}")
    report.add("serial requests", fake.overlaps() == 0 and fake.max_in_flight <= 1,
               f"{len(log)} requests, at most {fake.max_in_flight} in flight, "
               f"{fake.overlaps()} overlaps")
    floor_gaps, arrival_gaps = fake.floor_gaps(), fake.gaps()
    smallest = min(floor_gaps, default=0.0)
    between = min(arrival_gaps, default=0.0)
    report.measures.update({"floor_gap_min_s": smallest, "arrival_gap_min_s": between})
    report.add("1-second floor", bool(floor_gaps) and smallest >= FLOOR_S,
               f"smallest gap from an answer to the next arrival {smallest:.3f} s; "
               f"between arrivals {between:.3f} s "
               f"(mean {sum(arrival_gaps) / max(len(arrival_gaps), 1):.3f} s)")
