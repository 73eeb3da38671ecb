"""jstage-mcp as a real stdio subprocess against the loopback fake of the J-STAGE WebAPI: every
tool in its success and failure shapes, J-STAGE's statuses read by meaning."""

from __future__ import annotations

import json
import os
import sys

import jsonschema
import pytest
from tests.forked import StdioClient

from readingroom.core.envelope import response_schema
from readingroom.jstage.fake import FakeJstage

# jstage-mcp with the floor at zero (still serial, still one retry); the floor itself is
# proven by the self-test (tests/jstage/test_selftest.py), on the real server.
UNFLOORED = [sys.executable, "-c", (
    "import dataclasses, readingroom.jstage.upstreams.courtesy as c\n"
    "c.COURTESY = dataclasses.replace(c.COURTESY, min_interval=0.0, default_backoff=0.1)\n"
    "from readingroom.jstage.__main__ import main\n"
    "main()\n"
)]
VALIDATOR = jsonschema.Draft202012Validator(response_schema())


def _structured(result: dict) -> dict:
    data = result["structuredContent"]
    VALIDATOR.validate(data)
    assert json.loads(result["content"][0]["text"]) == data
    assert any("Powered by J-STAGE" in line for line in data["attribution"])
    return data


@pytest.fixture
def fake():
    with FakeJstage(latency=0.01) as f:
        yield f


def test_every_tool_in_its_success_and_failure_shapes(fake, tmp_path):
    calls = {
        "search": ("jstage_search_articles", {"article": "漱石", "sortflg": "volume"}),
        "doi": ("jstage_get_article_by_doi", {"doi": "https://doi.org/10.99999/rrkiyo.12.1_1"}),
        "issues": ("jstage_list_issues", {"cdjournal": "rrkiyo", "volorder": "descending"}),
        "zero": ("jstage_search_articles", {"article": "__none__"}),
        "err001": ("jstage_search_articles", {"keyword": "__err001__"}),
        "issues_zero": ("jstage_list_issues", {"material": "__err001__"}),
        "doi_unknown": ("jstage_get_article_by_doi", {"doi": "10.99999/rrkiyo.12.1_77"}),
        "err003": ("jstage_search_articles", {"article": "__err003__"}),
        "issues_err003": ("jstage_list_issues", {"material": "__err003__"}),
        "err004": ("jstage_search_articles", {"abst": "__err004__"}),
        "warn002": ("jstage_search_articles", {"text": "__warn002__"}),
        "sys009": ("jstage_list_issues", {"material": "__sys009__"}),
        "http429": ("jstage_search_articles", {"article": "__429__"}),
        "down": ("jstage_list_issues", {"cdjournal": "x__503__"}),
        "html": ("jstage_search_articles", {"article": "__html__"}),
        "bad_args": ("jstage_search_articles", {"article": 5, "colour": "red"}),
        "no_term": ("jstage_list_issues", {"pubyearfrom": 2000}),
        "bad_doi": ("jstage_get_article_by_doi", {"doi": "not a doi"}),
    }
    ledger, errlog = tmp_path / "r.jsonl", tmp_path / "stderr.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MCP_", "JSTAGE_"))}
    env.update({**fake.env(), "MCP_RECEIPT_LOG": str(ledger)})
    with errlog.open("wb") as err, StdioClient(UNFLOORED, env=env, stderr=err) as c:
        c.initialize()
        out = {k: _structured(c.call_tool(name, args)) for k, (name, args) in calls.items()}
        assert c.close() == 0
        assert c.stdout_problems() == []
    code = {k: (v.get("error") or {}).get("code") for k, v in out.items()}
    assert code == {
        "search": None, "doi": None, "issues": None, "zero": None, "err001": None,
        "issues_zero": None, "doi_unknown": "NOT_FOUND", "err003": "RATE_LIMITED",
        "issues_err003": "RATE_LIMITED", "err004": "API_ERROR", "warn002": "API_ERROR",
        "sys009": "API_ERROR", "http429": "RATE_LIMITED", "down": "TRANSPORT_ERROR",
        "html": "API_ERROR", "bad_args": "INVALID_ARGUMENT", "no_term": "INVALID_INPUT",
        "bad_doi": "INVALID_INPUT",
    }
    for key in ("zero", "err001", "issues_zero"):
        assert out[key]["result"]["total"] == 0 and out[key]["items"] == []
    for key in ("err003", "issues_err003", "http429"):
        assert "result" not in out[key] and out[key]["items"] == []
    assert out["doi"]["items"][0]["doi"] == "10.99999/rrkiyo.12.1_1"
    # Every answer after sending left a receipt: all three tools deposit.
    operations = [json.loads(x)["operation"] for x in ledger.read_text("utf-8").splitlines()]
    assert set(operations) == {"jstage_search_articles", "jstage_get_article_by_doi",
                               "jstage_list_issues"}
    assert len(operations) == 15
    assert sum("__429__" in " ".join(r.params.values()) for r in fake.log) == 2
    assert sum("__err003__" in " ".join(r.params.values()) for r in fake.log) == 2
    assert "漱石" not in errlog.read_text("utf-8", "replace")
