"""literature-search-mcp's self-test: the server's promises, proven in a real server process.

Launches literature-search-mcp as a stdio subprocess (``python -m readingroom.literature``, or
the frozen executable beside this one) against :class:`~.fake.FakeProviders`, one
loopback fake of all seven providers, and checks:

* the three read-only tools, and ``literature_sources`` naming a configured variable's source
  but never its value;
* two searches fired at once, every provider ``ok``, duplicates merged across providers;
* a search with Crossref failing (an unreadable body, which is not retried, so the check stays
  quick) and Semantic Scholar rate limiting (HTTP 429 on every attempt): those two are
  ``error`` and ``rate_limited``, the other five ``ok``, and the search still answers;
* full text with sections for an open-access article, ``NOT_FOUND`` (``data.status``
  ``not_found``) for one without a body;
* pacing as each provider saw it: arXiv one request at a time, at least 3 s from an answer to
  the next arrival; Semantic Scholar and Crossref's public pool serial with 1 s; PubMed at
  least 0.34 s between request starts; and per host: Europe PMC and bioRxiv share EBI's, at
  least 0.5 s between arrivals there and at most two requests at once, whichever of the two
  sent them;
* one history line per search, without abstracts, authors or the secret;
* the shared checks of :mod:`readingroom.core.selftest` (stdout purity, credit and the
  published schema on every envelope, the receipt chain).

No network, no user data: history and receipts go to a temporary folder.
"""

from __future__ import annotations

import json
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
from . import ENV_STATE_DIR, OPTIONAL_VARIABLES, SERVER, URL_SETTINGS
from .fake import FakeProviders

__all__ = ["EXPECTED_TOOLS", "FLOORS", "HOST_FLOORS", "SECRET", "run_self_test"]

EXPECTED_TOOLS = {"literature_search", "literature_sources", "literature_get_fulltext"}
SECRET = "selftest-openalex-key-7f3a"
"""A dummy OPENALEX_API_KEY given to the server: it must appear nowhere it could leak."""
FLOORS: dict[str, tuple[float, bool]] = {
    "arxiv": (3.0, True),
    "semantic-scholar": (1.0, True),
    "crossref": (1.0, True),
    "pubmed": (0.34, False),
}
"""Provider → (seconds, serial): serial floors count from an answer to the next arrival,
the others between arrivals."""
HOST_FLOORS: dict[str, tuple[float, int]] = {"ebi": (0.5, 2)}
"""Fake host → (seconds between arrivals there, most requests at once), whatever provider."""
_TOLERANCE = 0.02
FAKE_LATENCY_S = 0.02


def run_self_test(
    command: Sequence[str] | None = None,
    *,
    progress: Callable[[str], None] | None = None,
) -> SelfTestReport:
    """Run every check against literature-search-mcp; never raises for a failed check.

    Args:
        command: the server's command line; default ``SERVER.command()``.
        progress: called with a short line before each stage.
    """
    receipts: list[int] = []

    def exercise(stage: Stage, fake: FakeProviders) -> None:
        receipts.append(_exercise(stage, fake))

    def finish(stage: Stage, _fake: FakeProviders) -> None:
        _check_history(stage.report, stage.folder / "state" / "history.jsonl", stage.ledger,
                       stage.folder / "stderr.log")
        check_receipt_chain(stage.report, stage.ledger, sum(receipts))

    return run_against_fake(
        SERVER.name, list(command) if command else SERVER.command(),
        FakeProviders(latency=FAKE_LATENCY_S),
        environment=lambda fake, folder: {**fake.env(), ENV_STATE_DIR: str(folder / "state"),
                                          "OPENALEX_API_KEY": SECRET},
        drop=[n for n in OPTIONAL_VARIABLES if n != "OPENALEX_API_KEY"],
        exercise=exercise, finish=finish, progress=progress)


def _exercise(stage: Stage, fake: FakeProviders) -> int:
    """Drive the server through every stage; returns how many receipts it should have left."""
    report, say = stage.report, stage.say
    envelopes: list[dict[str, Any]] = []
    say("starting literature-search-mcp")
    with stage.client() as client:
        tools = initialize(report, client, SERVER.name)
        check_read_only_tools(report, tools, EXPECTED_TOOLS)

        listed = structured(client.call_tool("literature_sources", {}))
        envelopes.append(listed)
        variables = {v.get("name"): v for v in (listed.get("data") or {}).get(
            "optional_variables", [])}
        key = variables.get("OPENALEX_API_KEY", {})
        report.add("sources: configured, never the value",
                   len((listed.get("data") or {}).get("providers", [])) == 7
                   and key.get("configured") is True and key.get("from") == "environment"
                   and SECRET not in json.dumps(listed),
                   f"OPENALEX_API_KEY configured={key.get('configured')} from={key.get('from')}")

        say("firing two searches at once")
        ids = [client.send_request("tools/call", {"name": "literature_search",
                                                  "arguments": {"query": q}})
               for q in ("readingroom gene editing", "protein folding transformers")]
        results = [structured(client.wait(i, timeout=90).get("result", {})) for i in ids]
        envelopes += results
        all_ok = all(
            {s.get("id"): s.get("status") for s in r.get("sources", [])}
            == {p: "ok" for p, _ in _PROVIDERS} for r in results)
        merged = [i for r in results for i in r.get("items", []) if len(i.get("evidence", [])) > 1]
        report.add("concurrent searches: seven ok, fused",
                   all_ok and bool(merged) and not any(r.get("error") for r in results),
                   f"{len(results)} searches, {sum(len(r.get('items', [])) for r in results)} "
                   f"results, {len(merged)} merged across providers")

        say("one provider failing, one rate limited")
        # "malformed", not "error": a bare 500 is retried three times with backoff (14 s).
        fake.modes.update({"crossref": "malformed", "semantic-scholar": "rate_limited"})
        partial = structured(client.call_tool("literature_search", {"query": "reading rooms"},
                                              timeout=90))
        fake.modes.clear()
        envelopes.append(partial)
        statuses = {s.get("id"): s.get("status") for s in partial.get("sources", [])}
        expected = {p: "ok" for p, _ in _PROVIDERS}
        expected.update({"crossref": "error", "semantic-scholar": "rate_limited"})
        report.add("per-source statuses", statuses == expected and bool(partial.get("items"))
                   and partial.get("error") is None,
                   f"{statuses}; {len(partial.get('items', []))} results still returned")

        say("full text")
        full = structured(client.call_tool("literature_get_fulltext", {"pmid": "90000001"}))
        bodyless = structured(client.call_tool("literature_get_fulltext",
                                               {"pmcid": "PMC9000002"}))
        envelopes += [full, bodyless]
        data, empty = full.get("data") or {}, bodyless.get("data") or {}
        report.add("full text: sections, and NOT_FOUND without a body",
                   data.get("status") == "ok" and len(data.get("sections", [])) >= 3
                   and empty.get("status") == "not_found" and not empty.get("sections")
                   and (bodyless.get("error") or {}).get("code") == "NOT_FOUND",
                   f"PMID 90000001 -> {data.get('pmcid')} with {len(data.get('sections', []))} "
                   f"sections; PMC9000002 -> {empty.get('status')}")
        check_stdout_purity(report, client, client.close())
        if SECRET in b"".join(client.raw_lines).decode("utf-8", "replace"):
            report.add("secret kept out of responses", False, "the key appeared on stdout")

    _check_pacing(report, fake)
    check_credit(report, envelopes)
    check_envelope_schema(report, envelopes)
    return 3 + 2


_PROVIDERS = [(p, v) for p, (v, _w, _d) in zip(
    ("pubmed", "europepmc", "biorxiv", "crossref", "openalex", "semantic-scholar", "arxiv"),
    URL_SETTINGS, strict=True)]


def _check_pacing(report: SelfTestReport, fake: FakeProviders) -> None:
    """Each provider's floor as the fake saw it."""
    details = []
    ok = True
    for provider, (floor, serial) in FLOORS.items():
        gaps = fake.floor_gaps(provider) if serial else fake.start_gaps(provider)
        overlaps = fake.overlaps(provider) if serial else 0
        smallest = min(gaps, default=None)
        report.measures[f"{provider}_gap_min_s"] = smallest if smallest is not None else 0.0
        held = bool(gaps) and smallest is not None and smallest >= floor - _TOLERANCE \
            and overlaps == 0
        ok = ok and held
        shown = f"{smallest:.3f}" if smallest is not None else "n/a"
        details.append(f"{provider} {len(gaps) + 1} requests, min gap {shown} s "
                       f"(floor {floor:g} s{', serial' if serial else ''})")
    for host, (floor, most) in HOST_FLOORS.items():
        gaps = fake.host_start_gaps(host)
        in_flight = fake.host_in_flight(host)
        smallest = min(gaps, default=None)
        report.measures[f"host_{host}_gap_min_s"] = smallest if smallest is not None else 0.0
        ok = ok and bool(gaps) and smallest is not None and smallest >= floor - _TOLERANCE \
            and in_flight <= most
        shown = f"{smallest:.3f}" if smallest is not None else "n/a"
        details.append(f"host {host} {len(gaps) + 1} requests, min gap {shown} s, at most "
                       f"{in_flight} at once (floor {floor:g} s, {most} at once)")
    report.add("pacing per host", ok, "; ".join(details))


def _check_history(report: SelfTestReport, history: Path, ledger: Path, errlog: Path) -> None:
    """One line per search; nothing of an abstract, an author or the secret there."""
    try:
        lines = history.read_text("utf-8").splitlines()
    except FileNotFoundError:
        report.add("history", False, f"no {history.name} was written")
        return
    text = "\n".join(lines)
    leaked = [w for w in ("Okafor", "made-up locus", "imaginary", "\"abstract\"", "\"authors\"")
              if w in text]
    secret_seen = [p.name for p in (history, ledger, errlog)
                   if p.exists() and SECRET in p.read_text("utf-8", "replace")]
    report.add("history: one line per search, no abstracts, authors or secrets",
               len(lines) == 3 and not leaked and not secret_seen,
               f"{len(lines)} lines; leaked: {leaked or 'nothing'}; secret in: "
               f"{secret_seen or 'nothing'}")
