"""ndl-mcp as a real stdio subprocess against a loopback fake SRU server."""

from __future__ import annotations

import os
import sys
from datetime import timedelta
from pathlib import Path

import anyio
import pytest
from tests.core.served import structured
from tests.forked import StdioClient

from readingroom.core.envelope import tool_output_schema
from readingroom.ndl.fake import FakeSru

SERVER = [sys.executable, "-m", "readingroom.ndl"]
# ndl-mcp with the floor at zero (still serial, still one retry): for the tests of error paths,
# which would otherwise wait a second per request. The floor itself is proven by
# test_sixteen_simultaneous_calls_are_serial_and_paced and the self-test, on the real server.
UNFLOORED = [sys.executable, "-c", (
    "import dataclasses, readingroom.ndl.upstreams.ndl_search as c\n"
    "c.UNDERTAKINGS = dataclasses.replace(c.UNDERTAKINGS, min_interval=0.0)\n"
    "from readingroom.ndl.__main__ import main\n"
    "main()\n"
)]


def server_env(fake: FakeSru, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "MCP_RECEIPT_LOG"}
    env.update({"NDL_SRU_URL": fake.url, **extra})
    return env


@pytest.fixture
def fake():
    with FakeSru(latency=0.01) as f:
        yield f


def test_initialize_and_list_six_read_only_tools(fake, tmp_path):
    with StdioClient(SERVER, env=server_env(fake)) as c:
        init = c.initialize()
        tools = c.request("tools/list", {})["result"]["tools"]
        assert c.close() == 0
        assert c.stdout_problems() == []
    assert init["result"]["serverInfo"]["name"] == "ndl-mcp"
    assert "ndl_search_all" in init["result"]["instructions"]
    assert len(tools) == 6
    for t in tools:
        assert t["annotations"]["readOnlyHint"] is True
        assert t["annotations"]["idempotentHint"] is True
        assert t["annotations"]["openWorldHint"] is True
        assert t["annotations"]["destructiveHint"] is False
        assert t["outputSchema"] == tool_output_schema("ndl-mcp", t["name"])


def test_every_error_path_over_stdio(fake, tmp_path):
    calls = {
        "ok": ("ndl_search_books", {"title": "吾輩は猫である"}),
        "zero": ("ndl_search_books", {"title": "__none__"}),
        "syntax": ("ndl_search_books", {"title": "__syntax__"}),
        "rate": ("ndl_search_books", {"title": "__429__"}),
        "rate_date": ("ndl_search_books", {"title": "__429date__"}),
        "down": ("ndl_search_books", {"title": "__503__"}),
        "html": ("ndl_search_books", {"title": "__html__"}),
        "truncated": ("ndl_search_books", {"title": "__truncated__"}),
        "bad_args": ("ndl_search_books", {"title": 5, "colour": "red"}),
        "reserved": ("ndl_search_books", {"title": "cats or dogs"}),
        "dpid": ("ndl_search_all", {"title": "x", "providers": ["ndl-dl-online"]}),
        "empty": ("ndl_search_books", {}),
    }
    errlog = tmp_path / "stderr.log"
    with errlog.open("wb") as err, StdioClient(UNFLOORED, env=server_env(fake),
                                                   stderr=err) as c:
        c.initialize()
        out = {k: structured(c.call_tool(name, args)) for k, (name, args) in calls.items()}
        assert c.close() == 0
        assert c.stdout_problems() == []
    code = {k: (v.get("error") or {}).get("code") for k, v in out.items()}
    assert code == {
        "ok": None, "zero": None, "syntax": "API_ERROR", "rate": "RATE_LIMITED",
        "rate_date": "RATE_LIMITED", "down": "TRANSPORT_ERROR", "html": "API_ERROR",
        "truncated": "API_ERROR", "bad_args": "INVALID_ARGUMENT",
        "reserved": "RESERVED_WORD_IN_QUERY", "dpid": "PROVIDER_NOT_PERMITTED",
        "empty": "INVALID_INPUT",
    }
    assert out["zero"]["result"]["total"] == 0
    assert "result" not in out["rate"]
    # 429s were retried exactly once; refusals sent nothing.
    queries = [r.params["query"] for r in fake.log]
    assert sum("__429__" in q for q in queries) == 2
    assert sum("__429date__" in q for q in queries) == 2
    assert sum("__503__" in q for q in queries) == 1
    assert not any("cats" in q or "ndl-dl-online" in q for q in queries)
    # logs went to stderr, and carry no search terms from URLs
    assert "吾輩" not in errlog.read_text("utf-8", "replace")


def test_sixteen_simultaneous_calls_are_serial_and_paced(fake, tmp_path):
    ledger = tmp_path / "r.jsonl"
    tools = ["ndl_search_books", "ndl_search_articles", "ndl_search_all",
             "ndl_search_national_bibliography"]
    with StdioClient(SERVER, env=server_env(fake, MCP_RECEIPT_LOG=str(ledger),
                                               READINGROOM_CONCURRENCY="16")) as c:
        c.initialize()
        ids = [c.send_request("tools/call", {"name": tools[i % 4],
                                             "arguments": {"title": f"漱石{i}", "count": 500}})
               for i in range(16)]
        results = [c.wait(i, timeout=60)["result"] for i in ids]
        assert c.close() == 0
        assert c.stdout_problems() == []
    assert not any(r["isError"] for r in results)
    log = fake.log
    assert len(log) == 16
    assert fake.max_in_flight == 1 and fake.overlaps() == 0
    # The floor as the upstream sees it: from its last answer to the next arrival.
    assert min(fake.floor_gaps()) >= 1.0
    assert min(fake.gaps()) >= 1.0
    assert max(int(r.params["maximumRecords"]) for r in log) <= 100
    assert len(ledger.read_text("utf-8").splitlines()) == 16


def test_stdout_guard_sends_stray_writes_to_stderr(tmp_path):
    script = (
        "import os, sys\n"
        "from readingroom.core.stdio import reserve_stdout\n"
        "proto = reserve_stdout()\n"
        "print('stray print')\n"
        "os.write(1, b'stray native write\\n')\n"
        "proto.write('{\"jsonrpc\": \"2.0\", \"method\": \"x\"}\\n')\n"
        "proto.flush()\n"
    )
    import subprocess

    done = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=30)
    assert done.returncode == 0
    assert done.stdout == b'{"jsonrpc": "2.0", "method": "x"}\n'
    assert b"stray print" in done.stderr and b"stray native write" in done.stderr


@pytest.mark.anyio
async def test_sdk_client_validates_structured_content(fake):
    """The v1 SDK client checks structuredContent against each tool's outputSchema."""
    from mcp.client.stdio import stdio_client

    from mcp import ClientSession, StdioServerParameters

    params = StdioServerParameters(command=SERVER[0], args=SERVER[1:],
                                   env={"NDL_SRU_URL": fake.url, "PYTHONPATH": os.pathsep.join(
                                       p for p in sys.path if p)}, cwd=str(Path.cwd()))
    with open(os.devnull, "w") as devnull:
        async with stdio_client(params, errlog=devnull) as (r, w), ClientSession(
            r, w, read_timeout_seconds=timedelta(seconds=30)
        ) as s:
            with anyio.fail_after(30):
                await s.initialize()
                await s.list_tools()
                ok = await s.call_tool("ndl_search_articles", {"title": "漱石"})
                bad = await s.call_tool("ndl_search_books", {"title": "a or b"})
    assert not ok.isError and ok.structuredContent["items"]
    assert bad.isError and bad.structuredContent["error"]["code"] == "RESERVED_WORD_IN_QUERY"
