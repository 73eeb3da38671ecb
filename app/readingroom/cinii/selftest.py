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
    concurrent = chosen_calls(CALLS, calls)
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
        envelopes += fire_at_once(report, client, concurrent)

        say("asking for 500 records")
        envelopes.append(check_count_cap(report, client, fake,
                                         ("cinii_search_articles", {"q": "漱石"}), "count"))
        check_stdout_purity(report, client, client.close())
        lines = list(client.raw_lines)

    check_serial_and_paced(report, fake, parameter="count", floor_s=FLOOR_S)
    _check_application_id_sent(report, fake)
    check_credit(report, envelopes)
    check_envelope_schema(report, envelopes)
    return lines


def _check_application_id_sent(report: SelfTestReport, fake: FakeCinii) -> None:
    """Every request CiNii saw carried the application id."""
    sent = sum(1 for r in fake.log if r.params.get("appid") == SELF_TEST_APPID)
    report.add("application id sent", bool(fake.log) and sent == len(fake.log),
               f"{sent} of {len(fake.log)} requests carried the application id")


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
