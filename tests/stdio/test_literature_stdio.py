"""literature-search-mcp as a real stdio subprocess against the loopback fake of seven providers."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from tests.core.served import structured
from tests.forked import StdioClient

from readingroom.literature.fake import FakeProviders

SERVER = [sys.executable, "-m", "readingroom.literature"]
SECRET = "stdio-test-key-91b2"


def server_env(fake: FakeProviders, tmp_path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "MCP_RECEIPT_LOG"}
    env.update({**fake.env(), "LITERATURE_SEARCH_STATE_DIR": str(tmp_path / "state"),
                "MCP_RECEIPT_LOG": str(tmp_path / "receipts.jsonl"),
                "SEMANTIC_SCHOLAR_API_KEY": SECRET, **extra})
    return env


@pytest.fixture
def fake():
    with FakeProviders(latency=0.01) as f:
        yield f


def test_the_three_tools_over_stdio(fake, tmp_path):
    with StdioClient(SERVER, env=server_env(fake, tmp_path)) as c:
        init = c.initialize()
        tools = c.request("tools/list", {})["result"]["tools"]
        sources = structured(c.call_tool("literature_sources", {}))
        search = structured(c.call_tool("literature_search", {"query": "readingroom"}))
        fake.modes["crossref"] = "rate_limited"
        narrowed = structured(c.call_tool("literature_search", {
            "query": "readingroom gene", "sources": ["crossref", "pubmed"], "limit": 2}))
        page2 = structured(c.call_tool("literature_search", {
            "query": "readingroom gene", "sources": ["crossref", "pubmed"], "limit": 2,
            "cursor": narrowed["data"]["next_cursor"]}))
        full = structured(c.call_tool("literature_get_fulltext", {"pmcid": "PMC9000001"}))
        bodyless_result = c.call_tool("literature_get_fulltext", {"pmcid": "PMC9000002"})
        bodyless = structured(bodyless_result)
        bad = c.call_tool("literature_search", {"query": "x", "limit": 51})
        raw = b"".join(c.raw_lines)
        assert c.close() == 0
        assert c.stdout_problems() == []
    assert init["result"]["serverInfo"]["name"] == "literature-search-mcp"
    assert sorted(t["name"] for t in tools) == ["literature_get_fulltext", "literature_search",
                                                "literature_sources"]
    assert all(t["annotations"]["readOnlyHint"] for t in tools)
    key = next(v for v in sources["data"]["optional_variables"]
               if v["name"] == "SEMANTIC_SCHOLAR_API_KEY")
    assert key["configured"] is True and key["from"] == "environment"
    assert SECRET.encode() not in raw
    assert {s["id"]: s["status"] for s in search["sources"]} == {
        p: "ok" for p in ("pubmed", "europepmc", "biorxiv", "crossref", "openalex",
                          "semantic-scholar", "arxiv")}
    top = search["items"][0]
    assert top["doi"] == "10.5555/rr.2024.0001" and len(top["evidence"]) == 5
    assert search["receipt"]["deposited"] is True
    statuses = {s["id"]: s["status"] for s in narrowed["sources"]}
    assert statuses["crossref"] == "rate_limited" and statuses["pubmed"] == "ok"
    assert statuses["arxiv"] == "skipped" and len(narrowed["items"]) == 2
    assert narrowed["result"]["has_more"] is True
    first_ids = {i.get("doi") or i.get("pmid") for i in narrowed["items"]}
    assert page2["items"] and page2["result"]["start"] == 3
    assert not first_ids & {i.get("doi") or i.get("pmid") for i in page2["items"]}
    assert full["data"]["status"] == "ok" and full["data"]["sections"]
    assert bodyless_result["isError"] is True and bodyless["error"]["code"] == "NOT_FOUND"
    assert bodyless["data"]["status"] == "not_found"
    assert bad["isError"] is True
    assert bad["structuredContent"]["error"]["code"] == "INVALID_ARGUMENT"
    history = (tmp_path / "state" / "history.jsonl").read_text("utf-8").splitlines()
    assert len(history) == 3
    text = "\n".join(history)
    assert "Okafor" not in text and '"abstract"' not in text and SECRET not in text


def test_clear_history_as_a_command(tmp_path):
    state = tmp_path / "state"
    state.mkdir()
    (state / "history.jsonl").write_text('{"a":1}\n', "utf-8")
    env = {**os.environ, "LITERATURE_SEARCH_STATE_DIR": str(state)}
    done = subprocess.run([*SERVER, "clear-history"], env=env, capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert "cleared 1 search " in done.stdout
    assert not (state / "history.jsonl").exists()
