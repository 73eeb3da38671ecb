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
    concurrent = chosen_calls(CONCURRENT_CALLS, calls)
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
        envelopes += fire_at_once(report, client, concurrent, what="searches")

        say("asking for 500 records")
        envelopes.append(check_count_cap(report, client, fake,
                                         ("ndl_search_books", {"title": "坊っちゃん"}),
                                         "maximumRecords"))

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

    check_serial_and_paced(report, fake, parameter="maximumRecords", floor_s=FLOOR_S)
    check_credit(report, envelopes)
    check_envelope_schema(report, envelopes)
