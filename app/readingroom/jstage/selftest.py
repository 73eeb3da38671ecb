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
    check_count_cap,
    check_credit,
    check_envelope_schema,
    check_read_only_tools,
    check_receipt_chain,
    check_serial_and_paced,
    check_stdout_purity,
    chosen_calls,
    fire_at_once,
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
    concurrent = chosen_calls(CALLS, calls)
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
        envelopes += fire_at_once(report, client, concurrent)

        say("asking for 500 records")
        envelopes.append(check_count_cap(report, client, fake,
                                         ("jstage_search_articles", {"article": "漱石"}),
                                         "count"))

        say("an ERR_003 answer")
        refused = client.call_tool("jstage_search_articles", {"article": "__err003__"})
        envelopes.append(structured(refused))
        got = structured(refused)
        code = (got.get("error") or {}).get("code")
        report.add("ERR_003 is RATE_LIMITED", refused.get("isError") is True
                   and code == "RATE_LIMITED" and "result" not in got,
                   f"answered {code}, {'no' if 'result' not in got else 'a'} result")
        check_stdout_purity(report, client, client.close())

    check_serial_and_paced(report, fake, parameter="count", floor_s=FLOOR_S)
    check_credit(report, envelopes)
    powered = [e.get("operation") for e in envelopes
               if not any("Powered by J-STAGE" in line for line in e.get("attribution", []))]
    report.add("Powered by J-STAGE on every envelope", bool(envelopes) and not powered,
               f"{len(envelopes)} envelopes, without it: {powered or 'none'}")
    check_envelope_schema(report, envelopes)
