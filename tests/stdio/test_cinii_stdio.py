"""cinii-mcp as a real stdio subprocess against the loopback fake of CiNii Research: every tool
in its success and failure shapes, and the application id kept out of every byte it writes."""

from __future__ import annotations

import json
import os
import sys

import jsonschema
import pytest
from tests.forked import StdioClient

from readingroom.cinii.fake import FakeCinii
from readingroom.core.envelope import response_schema

# cinii-mcp with the floor at zero (still serial, still one retry): the error paths would
# otherwise wait a second per request. The floor itself is proven by the self-test
# (tests/cinii/test_selftest.py), on the real server.
UNFLOORED = [sys.executable, "-c", (
    "import dataclasses, readingroom.cinii.upstreams.courtesy as c\n"
    "c.COURTESY = dataclasses.replace(c.COURTESY, min_interval=0.0, default_backoff=0.1)\n"
    "from readingroom.cinii.__main__ import main\n"
    "main()\n"
)]
VALIDATOR = jsonschema.Draft202012Validator(response_schema())
PLANTED = "planted-stdio-appid-0b7e"


def _structured(result: dict) -> dict:
    data = result["structuredContent"]
    VALIDATOR.validate(data)
    assert json.loads(result["content"][0]["text"]) == data
    assert data["attribution"]
    return data


@pytest.fixture
def fake():
    with FakeCinii(latency=0.01) as f:
        yield f


def test_every_tool_in_its_success_and_failure_shapes(fake, tmp_path):
    calls = {
        "articles": ("cinii_search_articles", {"q": "漱石", "sortorder": "citations"}),
        "books": ("cinii_search_books", {"title": "読書室", "isbn": "978-4-99999-999-1"}),
        "dissertations": ("cinii_search_dissertations", {"q": "読書室"}),
        "projects": ("cinii_search_projects", {"q": "読書室"}),
        "all": ("cinii_search_all", {"q": "漱石", "from": "1990", "until": "202012"}),
        "record": ("cinii_get_record", {"crid": "https://cir.nii.ac.jp/crid/9990000000000000011"}),
        "zero": ("cinii_search_all", {"q": "__none__"}),
        "unknown": ("cinii_get_record", {"crid": "1111111111111111111"}),
        "rate": ("cinii_search_articles", {"q": "__429__"}),
        "rate_once": ("cinii_search_books", {"q": "__429once__"}),
        "down": ("cinii_search_articles", {"q": "__503__"}),
        "refused": ("cinii_search_articles", {"q": "__forbidden__"}),
        "html": ("cinii_search_projects", {"q": "__html__"}),
        "truncated": ("cinii_search_all", {"q": "__truncated__"}),
        "bad_args": ("cinii_search_books", {"q": 5, "colour": "red"}),
        "bad_date": ("cinii_search_all", {"q": "x", "from": "1990-01"}),
        "no_term": ("cinii_search_articles", {"from": "1990"}),
        "bad_crid": ("cinii_get_record", {"crid": "not-a-crid"}),
    }
    ledger, errlog = tmp_path / "r.jsonl", tmp_path / "stderr.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MCP_", "CINII_"))}
    env.update({**fake.env(), "CINII_APPID": PLANTED, "MCP_RECEIPT_LOG": str(ledger)})
    with errlog.open("wb") as err, StdioClient(UNFLOORED, env=env, stderr=err) as c:
        c.initialize()
        out = {k: _structured(c.call_tool(name, args)) for k, (name, args) in calls.items()}
        assert c.close() == 0
        assert c.stdout_problems() == []
        stdout = b"\n".join(c.raw_lines)
    code = {k: (v.get("error") or {}).get("code") for k, v in out.items()}
    assert code == {
        "articles": None, "books": None, "dissertations": None, "projects": None, "all": None,
        "record": None, "zero": None, "unknown": "NOT_FOUND", "rate": "RATE_LIMITED",
        "rate_once": None, "down": "TRANSPORT_ERROR", "refused": "API_ERROR",
        "html": "API_ERROR", "truncated": "API_ERROR", "bad_args": "INVALID_ARGUMENT",
        "bad_date": "INVALID_ARGUMENT", "no_term": "INVALID_INPUT", "bad_crid": "INVALID_INPUT",
    }
    assert out["zero"]["result"]["total"] == 0 and "result" not in out["rate"]
    assert [i["record_type"] for i in out["all"]["items"]] == ["article", "book", "project",
                                                               "data"]
    assert "searched_for" not in out["record"]
    assert out["record"]["items"][0]["record_type"] == "book"
    assert out["articles"]["items"][0]["related"][0]["tool"] == "ndl_get_record"
    paths = [f"/{r.prefix}/{r.path}" for r in fake.log]
    assert sum("__429__" in " ".join(r.params.values()) for r in fake.log) == 2
    assert sum("__503__" in " ".join(r.params.values()) for r in fake.log) == 2
    assert not any("not-a-crid" in p for p in paths)
    assert {r.params.get("appid") for r in fake.log} == {PLANTED}
    # Sent with every request; shown in no answer, no receipt, no log line.
    for place, data in (("stdout", stdout), ("ledger", ledger.read_bytes()),
                        ("stderr", errlog.read_bytes())):
        assert PLANTED.encode() not in data, place
    # logs carry no search terms from URLs either
    assert "漱石" not in errlog.read_text("utf-8", "replace")
