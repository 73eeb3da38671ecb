"""jstage-mcp's self-test: prove its courtesy and its reading of J-STAGE's statuses in a real
jstage-mcp process.

Launches jstage-mcp as a stdio subprocess (``python -m readingroom.jstage``, or the frozen
executable beside this one) against the loopback :class:`~readingroom.jstage.fake.FakeJstage`,
fires one call of every tool at once, and checks what the *fake* saw: strictly serial requests
(the original released its lock before sending), every arrival at least 1.0 s after the
previous answer, never more than 100 records asked; and what the client saw: ``ERR_003``
answered ``RATE_LIMITED`` (the original read it as an error of its own), credit ("Powered by
J-STAGE") and the published schema on every envelope, a clean JSON-RPC stdout, the receipt
chain. No network, no user data.
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
from . import ENV_JSTAGE_URL
from .fake import FakeJstage

__all__ = ["CALLS", "EXPECTED_TOOLS", "FLOOR_S", "run_self_test"]

EXPECTED_TOOLS = {"jstage_search_articles", "jstage_get_article_by_doi", "jstage_list_issues"}
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("jstage_search_articles", {"article": "漱石", "count": 5}),
    ("jstage_get_article_by_doi", {"doi": "10.99999/rrkiyo.12.1_21"}),
    ("jstage_list_issues", {"cdjournal": "rrkiyo"}),
]
"""One call of every tool, fired at once; each sends one request."""
FLOOR_S = 1.0
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
    """Run every check against jstage-mcp and return the report (never raises for a check).

    Args:
        command: the server's command line; default ``readingroom.jstage.SERVER.command()``.
        progress: called with a short line before each stage.
        calls: how many of :data:`CALLS` to fire at once (1 to 3, default all).

    Raises:
        ValueError: ``calls`` is outside 1..3.
    """
    count = len(CALLS) if calls is None else calls
    if not 1 <= count <= len(CALLS):
        raise ValueError(f"calls must be 1..{len(CALLS)}, got {calls!r}")
    concurrent = CALLS[:count]
    return run_against_fake(
        "jstage-mcp", list(command) if command else _default_command(),
        FakeJstage(latency=FAKE_LATENCY_S),
        environment=lambda fake, _folder: {ENV_JSTAGE_URL: fake.url},
        exercise=lambda stage, fake: _exercise(stage, fake, concurrent),
        finish=_finish, progress=progress)


def _finish(stage: Stage, fake: FakeJstage) -> None:
    check_receipt_chain(stage.report, stage.ledger, len(fake.log))


def _exercise(stage: Stage, fake: FakeJstage,
              concurrent: list[tuple[str, dict[str, Any]]]) -> None:
    """Drive the server through every stage, then judge what the fake saw."""
    report, say = stage.report, stage.say
    envelopes: list[dict[str, Any]] = []
    say("starting jstage-mcp")
    with stage.client() as client:
        tools = initialize(report, client, "jstage-mcp")
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
        capped = client.call_tool("jstage_search_articles", {"article": "漱石", "count": 500})
        envelopes.append(structured(capped))
        sent = [r.params.get("count") for r in fake.log[before:]]
        codes = {d.get("code") for d in structured(capped).get("diagnostics", [])}
        report.add("100-record cap", sent == ["100"] and "COUNT_CAPPED" in codes,
                   f"asked 500, sent count={sent}, diagnostic COUNT_CAPPED "
                   f"{'present' if 'COUNT_CAPPED' in codes else 'missing'}")

        say("an ERR_003 answer")
        refused = client.call_tool("jstage_search_articles", {"article": "__err003__"})
        envelopes.append(structured(refused))
        got = structured(refused)
        code = (got.get("error") or {}).get("code")
        report.add("ERR_003 is RATE_LIMITED", refused.get("isError") is True
                   and code == "RATE_LIMITED" and "result" not in got,
                   f"answered {code}, {'no' if 'result' not in got else 'a'} result")
        check_stdout_purity(report, client, client.close())

    _check_what_the_fake_saw(report, fake)
    check_credit(report, envelopes)
    powered = [e.get("operation") for e in envelopes
               if not any("Powered by J-STAGE" in line for line in e.get("attribution", []))]
    report.add("Powered by J-STAGE on every envelope", bool(envelopes) and not powered,
               f"{len(envelopes)} envelopes, without it: {powered or 'none'}")
    check_envelope_schema(report, envelopes)


def _check_what_the_fake_saw(report: SelfTestReport, fake: FakeJstage) -> None:
    """The courtesy as J-STAGE would see it: records asked, serial, the floor."""
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
