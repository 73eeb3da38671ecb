"""cinii-mcp and jstage-mcp as real stdio subprocesses, with their courtesy unchanged, against
loopback fakes that serve the *real* recordings (``<samples>/cinii``, ``<samples>/jstage``).

Every tool is called in its success shape (the real answer) and in each failure shape the wire
can bring: HTTP 429 on every attempt, HTTP 503 on every attempt, the real answer cut in half,
and each server's own (CiNii: 403, an HTML page, an unknown CRID, no application id; J-STAGE:
an HTML page and the WebAPI statuses ``ERR_003``, ``ERR_001``, ``WARN_002``, ``ERR_004``,
``SYS_ERR_009``, whose answers are hand-made because none was ever recorded). What the fake saw
is then judged: never two requests at once, and every arrival at least 1.0 s after the
previous answer. ``ERR_003`` and HTTP 429 are ``RATE_LIMITED`` with no result, never a zero.

The shapes are split over a few server processes that run side by side, each with its own fake
and its own courtesy judged whole (the floor is per process, as it is for a user's host): the
same calls, the same judgement, a fifth of the waiting. They share one receipt ledger, as a
user's servers do.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from tests.forked import StdioClient

from readingroom.cinii import SERVER as CINII
from readingroom.cinii.fake import FakeCinii
from readingroom.core.envelope import response_schema
from readingroom.jstage import SERVER as JSTAGE
from readingroom.jstage.fake import FakeJstage, canned_answer

pytestmark = pytest.mark.slow

VALIDATOR = jsonschema.Draft202012Validator(response_schema())
FLOOR_S = 1.0
PLANTED = "planted-real-sample-appid-5d21"
REAL_CRID = "1971993809689508364"
"""The CRID of the real record sample (a Book)."""
REAL_DOI = "10.11249/jsbpjjpp.23.1_53"
"""A DOI of the real pyjstage service=3 sample (journal jsbpjjpp, volume 23)."""
_JSON = {"Content-Type": "application/json;charset=UTF-8"}
_XML = {"Content-Type": "application/atom+xml;charset=UTF-8"}
_HTML = (b"<!DOCTYPE html><html><head><title>Maintenance</title></head>"
         b"<body><h1>Maintenance</h1></body></html>")
WIRE = {
    "429": (429, {"Retry-After": "1"}, b""),
    # With Retry-After, so the one retry waits 1 s rather than the 10 s default backoff.
    "503": (503, {"Content-Type": "text/plain", "Retry-After": "1"}, b"Service Unavailable"),
    "html": (200, {"Content-Type": "text/html; charset=UTF-8"}, _HTML),
    "403": (403, {"Content-Type": "text/plain"}, b"Forbidden"),
    "404": (404, {"Content-Type": "text/plain"}, b"Not Found"),
}
"""Failure shapes that are the same bytes whatever was asked."""


def _real(samples: Path, folder: str, name: str) -> bytes:
    path = samples / folder / name
    if not path.is_file():
        pytest.skip(f"real sample {path} not found")
    return path.read_bytes()


def _env(fake_env: dict[str, str], ledger: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("MCP_", "CINII_", "JSTAGE_", "READINGROOM_TOOL"))}
    env.update({**fake_env, "MCP_RECEIPT_LOG": str(ledger), **extra})
    return env


def _run(command: list[str], env: dict[str, str], errlog: Path, state: dict[str, str],
         calls: list[tuple[str, str, dict[str, Any]]]) -> tuple[list[dict[str, Any]], bytes]:
    """Each (mode, tool, arguments) in turn, the fake answering in ``mode``."""
    out = []
    with errlog.open("wb") as err, StdioClient(command, env=env, stderr=err) as client:
        client.initialize()
        for mode, name, args in calls:
            state["mode"] = mode
            result = client.call_tool(name, args)
            data = result["structuredContent"]
            VALIDATOR.validate(data)
            assert json.loads(result["content"][0]["text"]) == data
            assert data["attribution"], (mode, name)
            out.append(data)
        assert client.close() == 0
        assert client.stdout_problems() == []
        stdout = b"\n".join(client.raw_lines)
    return out, stdout


Fake = FakeCinii | FakeJstage


def _run_side_by_side(groups: Sequence[list[tuple[str, str, dict[str, Any]]]],
                      start: Callable[[int, dict[str, str]], tuple[Fake, list[str],
                                                                   dict[str, str]]],
                      tmp_path: Path) -> tuple[list[dict[str, Any]], list[Fake], bytes, bytes]:
    """Each group of calls through its own server process and fake, the groups at once.

    ``start(i, state)`` starts group ``i``'s fake (answering by ``state["mode"]``) and gives
    it with the server's command and environment. Returns the envelopes in the order of the
    groups' calls, the (stopped) fakes, every server's stdout and every server's stderr.
    """
    def one(i: int) -> tuple[list[dict[str, Any]], Fake, bytes, bytes]:
        state = {"mode": groups[i][0][0]}
        fake, command, env = start(i, state)
        errlog = tmp_path / f"stderr-{i}.log"
        try:
            out, stdout = _run(command, env, errlog, state, groups[i])
        finally:
            fake.stop()
        return out, fake, stdout, errlog.read_bytes()

    with ThreadPoolExecutor(max_workers=len(groups)) as pool:
        done = list(pool.map(one, range(len(groups))))
    envelopes = [e for out, _, _, _ in done for e in out]
    return (envelopes, [fake for _, fake, _, _ in done],
            b"\n".join(d[2] for d in done), b"\n".join(d[3] for d in done))


def _grouped(calls: list[tuple[str, str, dict[str, Any]]], groups: Sequence[Sequence[str]]
             ) -> list[list[tuple[str, str, dict[str, Any]]]]:
    """``calls`` split by their mode into ``groups`` (each group keeps the calls' order)."""
    split = [[c for c in calls if c[0] in modes] for modes in groups]
    assert sum(map(len, split)) == len(calls), "every mode belongs to a group"
    return split


def _courtesy_as_the_fake_saw_it(fake: FakeCinii | FakeJstage) -> float:
    """Serial, and the floor from each answer to the next arrival; the smallest gap."""
    assert fake.overlaps() == 0 and fake.max_in_flight <= 1
    gaps = fake.floor_gaps()
    assert gaps and min(gaps) >= FLOOR_S, min(gaps, default=None)
    return min(gaps)


def _code(envelope: dict[str, Any]) -> str | None:
    return (envelope.get("error") or {}).get("code")


# --------------------------------------------------------------------------- cinii-mcp

CINII_TOOLS: list[tuple[str, dict[str, Any]]] = [
    ("cinii_search_articles", {"q": "夏目漱石", "count": 2}),
    ("cinii_search_books", {"title": "吾輩は猫である"}),
    ("cinii_search_dissertations", {"q": "夏目漱石"}),
    ("cinii_search_projects", {"q": "夏目漱石"}),
    ("cinii_search_all", {"q": "夏目漱石"}),
    ("cinii_get_record", {"crid": REAL_CRID}),
]
CINII_EXPECTED = {"ok": None, "429": "RATE_LIMITED", "503": "TRANSPORT_ERROR",
                  "damaged": "API_ERROR", "403": "API_ERROR", "html": "API_ERROR"}


def _cinii_script(samples: Path, state: dict[str, str]
                  ) -> Callable[[str, dict[str, str]], tuple[int, dict[str, str], bytes]]:
    search = _real(samples, "cinii", "jp-lit-mcp_cinii-research_opensearch-articles_search-"
                   "response.json")
    record = _real(samples, "cinii", "jp-lit-mcp_cinii-research_crid-book-record-response.json")

    def script(path: str, params: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        mode = state["mode"]
        if mode in WIRE:
            return WIRE[mode]
        if path.startswith("/crid/"):
            body = record if path == f"/crid/{REAL_CRID}.json" else None
        else:
            body = search  # the real channel, on every search endpoint
        if body is None:
            return WIRE["404"]
        return 200, _JSON, body[: len(body) // 2] if mode == "damaged" else body

    return script


CINII_GROUPS = (("ok",), ("429",), ("503",), ("damaged", "403"), ("html",))
"""The shapes by server process: each group waits about as long (a retry costs a floor)."""


def test_cinii_every_tool_on_the_real_samples_in_every_shape(samples, tmp_path):
    calls = [(mode, name, args) for mode in CINII_EXPECTED for name, args in CINII_TOOLS]
    calls.append(("ok", "cinii_get_record", {"crid": "1111111111111111111"}))
    groups = _grouped(calls, CINII_GROUPS)
    calls = [c for group in groups for c in group]
    ledger = tmp_path / "receipts.jsonl"

    def start(i: int, state: dict[str, str]) -> tuple[Fake, list[str], dict[str, str]]:
        fake = FakeCinii()
        fake.script = _cinii_script(samples, state)
        fake.start()
        return fake, CINII.command(), _env(fake.env(), ledger, CINII_APPID=PLANTED)

    out, fakes, stdout, stderr = _run_side_by_side(groups, start, tmp_path)
    log = [r for fake in fakes for r in fake.log]
    smallest = min(_courtesy_as_the_fake_saw_it(fake) for fake in fakes)
    got = [(mode, name, _code(e)) for (mode, name, args), e in zip(calls, out, strict=True)]
    assert got == [(mode, name, "NOT_FOUND" if args.get("crid") == "1111111111111111111"
                    else CINII_EXPECTED[mode]) for mode, name, args in calls]
    assert ("ok", "cinii_get_record", "NOT_FOUND") in got
    for (mode, name, _), envelope in zip(calls, out, strict=True):
        if mode == "ok" and _code(envelope) is None:
            item = envelope["items"][0]
            # The real search item has no title: it is kept, and flagged.
            assert item["crid"] and (item.get("title") or item.get("title_missing")), name
            if name == "cinii_get_record":
                assert item["crid"] == REAL_CRID and item["record_type"] == "book"
                assert "searched_for" not in envelope
            else:
                assert envelope["result"]["total"] == 3903  # the real count, as CiNii gave it
        if mode in ("429", "503", "damaged"):
            assert "result" not in envelope and envelope["items"] == [], (mode, name)
    # 429 and 503: one retry each; every request carried the appid, no byte shows it.
    assert len(log) == len(calls) + 2 * len(CINII_TOOLS)
    assert {r.params.get("appid") for r in log} == {PLANTED}
    assert len(ledger.read_text("utf-8").splitlines()) == len(calls)
    for place, data in (("stdout", stdout), ("ledger", ledger.read_bytes()),
                        ("stderr", stderr)):
        assert PLANTED.encode() not in data, place
    print(f"cinii-mcp: {len(calls)} calls, {len(log)} requests in {len(groups)} processes, "
          f"smallest floor gap {smallest:.3f} s")


def test_cinii_without_an_appid_every_tool_is_not_configured_and_nothing_is_sent(tmp_path):
    state = {"mode": "ok"}
    calls = [("ok", name, args) for name, args in CINII_TOOLS]
    with FakeCinii() as fake:
        out, _ = _run(CINII.command(), _env(fake.env(), tmp_path / "r.jsonl"),
                      tmp_path / "stderr.log", state, calls)
        assert fake.log == []
    assert [_code(e) for e in out] == ["NOT_CONFIGURED"] * len(CINII_TOOLS)
    assert all("result" not in e for e in out)


# --------------------------------------------------------------------------- jstage-mcp

JSTAGE_TOOLS: list[tuple[str, dict[str, Any]]] = [
    ("jstage_search_articles", {"abst": "統合失調症", "count": 3}),
    ("jstage_get_article_by_doi", {"doi": REAL_DOI}),
    ("jstage_list_issues", {"cdjournal": "johokanri"}),
]
JSTAGE_STATUS = {"err003": "__err003__", "err001": "__err001__", "warn002": "__warn002__",
                 "err004": "__err004__", "sys009": "__sys009__"}
"""Modes answered with the fake's hand-made WebAPI status answers."""
JSTAGE_EXPECTED = {
    "ok": [None, None, None],
    "429": ["RATE_LIMITED"] * 3,
    "503": ["TRANSPORT_ERROR"] * 3,
    "damaged": ["API_ERROR"] * 3,
    "html": ["API_ERROR"] * 3,
    "err003": ["RATE_LIMITED"] * 3,
    # ERR_001 is J-STAGE's checked zero: an empty search and list, an unknown DOI.
    "err001": [None, "NOT_FOUND", None],
    "warn002": ["API_ERROR"] * 3,
    "err004": ["API_ERROR"] * 3,
    "sys009": ["API_ERROR"] * 3,
}


def _jstage_script(samples: Path, state: dict[str, str]
                   ) -> Callable[[dict[str, str]], tuple[int, dict[str, str], bytes]]:
    articles = _real(samples, "jstage", "pyjstage_service3_search.xml")
    volumes = _real(samples, "jstage", "pyjstage_service2_list.xml")

    def script(params: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        mode = state["mode"]
        if mode in WIRE:
            return WIRE[mode]
        if mode in JSTAGE_STATUS:
            return canned_answer({"service": params.get("service", "3"),
                                  "material": JSTAGE_STATUS[mode]}, "http://127.0.0.1/x")
        body = volumes if params.get("service") == "2" else articles
        return 200, _XML, body[: len(body) // 2] if mode == "damaged" else body

    return script


JSTAGE_GROUPS = (("ok", "err001"), ("429",), ("503",), ("damaged", "err003", "err004"),
                 ("html", "warn002", "sys009"))
"""The shapes by server process: each group waits about as long (a retry costs a floor)."""


def test_jstage_every_tool_on_the_real_samples_in_every_shape(samples, tmp_path):
    calls = [(mode, name, args) for mode in JSTAGE_EXPECTED for name, args in JSTAGE_TOOLS]
    groups = _grouped(calls, JSTAGE_GROUPS)
    calls = [c for group in groups for c in group]
    ledger = tmp_path / "receipts.jsonl"

    def start(i: int, state: dict[str, str]) -> tuple[Fake, list[str], dict[str, str]]:
        fake = FakeJstage()
        fake.script = _jstage_script(samples, state)
        fake.start()
        return fake, JSTAGE.command(), _env(fake.env(), ledger)

    out, fakes, _, _ = _run_side_by_side(groups, start, tmp_path)
    log = [r for fake in fakes for r in fake.log]
    smallest = min(_courtesy_as_the_fake_saw_it(fake) for fake in fakes)
    tool_index = {name: i for i, (name, _) in enumerate(JSTAGE_TOOLS)}
    got = [(mode, name, _code(e)) for (mode, name, _), e in zip(calls, out, strict=True)]
    want = [(mode, name, JSTAGE_EXPECTED[mode][tool_index[name]]) for mode, name, _ in calls]
    assert got == want
    assert {mode for mode, _, _ in calls} == set(JSTAGE_EXPECTED)
    by = {(mode, name): e for (mode, name, _), e in zip(calls, out, strict=True)}
    assert by["ok", "jstage_search_articles"]["result"]["total"] == 677
    assert by["ok", "jstage_get_article_by_doi"]["items"][0]["doi"] == REAL_DOI
    assert by["ok", "jstage_list_issues"]["items"][0]["cdjournal"] == "johokanri"
    for mode in ("429", "err003", "503", "damaged"):
        for name, _ in JSTAGE_TOOLS:
            assert "result" not in by[mode, name] and by[mode, name]["items"] == [], (mode, name)
    for name in ("jstage_search_articles", "jstage_list_issues"):
        assert by["err001", name]["result"]["total"] == 0
    for envelope in out:
        assert any("Powered by J-STAGE" in line for line in envelope["attribution"])
    # Every tool leaves a receipt for every answer after sending, in the one shared ledger.
    receipts = ledger.read_text("utf-8").splitlines()
    assert len(receipts) == len(calls)
    print(f"jstage-mcp: {len(calls)} calls, {len(log)} requests in {len(groups)} processes, "
          f"smallest floor gap {smallest:.3f} s")
