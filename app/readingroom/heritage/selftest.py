"""swiss-cultural-heritage-mcp's self-test: its promises, proven in a real server process.

Launches the server as a stdio subprocess (``python -m readingroom.heritage``, or the frozen
executable beside this one) against :class:`~.fake.FakeUpstreams`, and checks:

* the eleven read-only tools (only the static list is closed-world);
* every tool in both response formats: the envelope always in ``structuredContent``, JSON or
  Markdown with the source-and-licence footer as text;
* cross-search with CKAN failing: artists and museum ``error``, the National Library still
  answering;
* records' own licences (SIKART rows CC BY-NC-SA), an unknown id as a ``NOT_FOUND`` error
  (the suite's rule for fetch tools), a resource without a DataStore refused, Dodis full text
  withheld;
* a redirect to a host outside the allow-list refused;
* the Helveticat guards (a change date without a set, neither query nor set) send nothing;
* the shared checks of :mod:`readingroom.core.selftest` (stdout purity, credit and the
  published schema on every envelope, an intact receipt chain).
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
    check_stdout_purity,
    initialize,
    run_against_fake,
    structured,
)
from . import SERVER
from .fake import ACTIVE, INACTIVE, FakeUpstreams

__all__ = ["CALLS", "run_self_test"]

CALLS: dict[str, dict[str, Any]] = {
    "heritage_search_helveticat": {"query": "Volksschule"},
    "heritage_get_publication": {"identifier": "oai:helveticat.nb.admin.ch:991090000000103976"},
    "heritage_list_nb_collections": {},
    "heritage_search_artists": {"query": "Probe"},
    "heritage_get_artist": {"artist_id": "9900001"},
    "heritage_search_museum_datasets": {"query": "Waffen"},
    "heritage_browse_collection": {"resource_id": ACTIVE},
    "heritage_cross_search": {"query": "Probe"},
    "heritage_search_memory": {"query": "Probe"},
    "heritage_get_memory_item": {"collection": "memobase", "item_id": "tst-001-1"},
    "heritage_list_memory_collections": {},
}
"""One valid call per tool (also the contract's and the real hosts' calls)."""
_CLOSED_WORLD = {"heritage_list_memory_collections"}


def run_self_test(
    command: Sequence[str] | None = None,
    *,
    progress: Callable[[str], None] | None = None,
) -> SelfTestReport:
    """Run every check against swiss-cultural-heritage-mcp; never raises for a failed check."""
    envelopes: list[dict[str, Any]] = []

    def finish(stage: Stage, _fake: FakeUpstreams) -> None:
        check_credit(stage.report, envelopes)
        check_envelope_schema(stage.report, envelopes)
        _check_receipts(stage.report, stage.ledger, envelopes)

    return run_against_fake(
        SERVER.name, list(command) if command else SERVER.command(),
        FakeUpstreams(slow_seconds=5.0),
        environment=lambda fake, _folder: fake.env(),
        exercise=lambda stage, fake: _exercise(stage, fake, envelopes),
        finish=finish, progress=progress)


def _exercise(stage: Stage, fake: FakeUpstreams, envelopes: list[dict[str, Any]]) -> None:
    report, say = stage.report, stage.say
    say("starting swiss-cultural-heritage-mcp")
    with stage.client() as client:
        tools = initialize(report, client, SERVER.name)
        names = {t.get("name") for t in tools}
        hinted = all(
            (t.get("annotations") or {}).get("readOnlyHint") is True
            and (t.get("annotations") or {}).get("idempotentHint") is True
            and (t.get("annotations") or {}).get("destructiveHint") is False
            and (t.get("annotations") or {}).get("openWorldHint") is (
                t.get("name") not in _CLOSED_WORLD)
            for t in tools)
        report.add("11 tools, read-only", names == set(CALLS) and hinted,
                   f"{len(names)} tools: {', '.join(sorted(str(n) for n in names))}")

        say("every tool in both formats")
        bad: list[str] = []
        for name, args in CALLS.items():
            as_json = client.call_tool(name, {**args, "response_format": "json"}, timeout=60)
            as_md = client.call_tool(name, args, timeout=60)
            data, md = structured(as_json), structured(as_md)
            envelopes += [data, md]
            text = (as_md.get("content") or [{}])[0].get("text", "")
            ok = (not as_json.get("isError") and not as_md.get("isError")
                  and json.loads(as_json["content"][0]["text"]) == data
                  and md.get("operation") == name and "**Sources & licences**" in text)
            if not ok:
                bad.append(name)
        report.add("every tool answers, json and markdown", not bad,
                   f"{len(CALLS)} tools x 2 formats; failed: {bad or 'none'}")

        say("one source failing in cross-search")
        fake.modes["ckan"] = "broken"  # "error" (HTTP 500) is retried for 25 s
        partial = structured(client.call_tool("heritage_cross_search", {
            "query": "Probe", "response_format": "json"}, timeout=90))
        fake.modes.clear()
        envelopes.append(partial)
        statuses = {s.get("id"): s.get("status") for s in partial.get("sources", [])}
        report.add("cross-search survives a failing source",
                   statuses == {"sik_isea": "error", "snm": "error", "helveticat": "ok"}
                   and bool(partial.get("items")) and "error" not in partial,
                   f"{statuses}; {len(partial.get('items', []))} items still returned")

        say("licences, not-found, no DataStore, full text")
        fmt = {"response_format": "json"}
        artist = structured(client.call_tool("heritage_get_artist", {"artist_id": "9900001",
                                                                     **fmt}))
        missing = structured(client.call_tool("heritage_get_artist", {"artist_id": "1", **fmt}))
        nods = structured(client.call_tool("heritage_browse_collection",
                                           {"resource_id": INACTIVE, **fmt}))
        doc = structured(client.call_tool("heritage_get_memory_item",
                                          {"collection": "dodis", "item_id": "G90001", **fmt}))
        envelopes += [artist, missing, nods, doc]
        licence = (artist.get("items") or [{}])[0].get("licence")
        report.add("record licences and honest envelopes",
                   licence == "CC BY-NC-SA"
                   and (missing.get("error") or {}).get("code") == "NOT_FOUND"
                   and (nods.get("error") or {}).get("code") == "CAPABILITY_UNAVAILABLE"
                   and "NICHT AUSGEBEN" not in json.dumps(doc),
                   f"SIKART licence {licence}; unknown id -> "
                   f"{(missing.get('error') or {}).get('code')}; no DataStore -> "
                   f"{(nods.get('error') or {}).get('code')}; Dodis full text withheld")

        say("a redirect off the allow-list")
        redirected = structured(client.call_tool("heritage_search_artists", {
            "query": "__redirect__", **fmt}))
        envelopes.append(redirected)
        message = (redirected.get("error") or {}).get("message", "")
        report.add("redirects re-checked against the allow-list",
                   "elsewhere.invalid" in message and "refused" in message
                   and not any("trap" in r.path for r in fake.log),
                   message[:120] or "no error")

        say("Helveticat guards")
        before = len(fake.requests("sru")) + len(fake.requests("oai"))
        guards = [structured(client.call_tool("heritage_search_helveticat", a)) for a in (
            {"query": "Schule", "from_date": "2020-01-01", **fmt}, {**fmt})]
        envelopes += guards
        after = len(fake.requests("sru")) + len(fake.requests("oai"))
        report.add("guards send no request",
                   after == before and all(g.get("error") for g in guards),
                   f"{len(guards)} refused calls, {after - before} requests sent")
        check_stdout_purity(report, client, client.close())


def _check_receipts(report: SelfTestReport, path: Path, envelopes: list[dict[str, Any]]) -> None:
    """Every receipt an envelope names is in an intact chain."""
    from ..core.verification import verify

    named = sum(1 for e in envelopes if (e.get("receipt") or {}).get("deposited"))
    if not path.exists():
        report.add("receipt chain", False, "no receipt ledger was written")
        return
    result = verify(path)
    report.add("receipt chain", result.ok and result.count >= named > 0,
               f"{result.count} receipts (cross-search's NB lane adds its own) for {named} "
               f"named by envelopes, chain {'intact' if result.ok else 'BROKEN'}")
