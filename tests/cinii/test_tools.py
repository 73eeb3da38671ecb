"""cinii-mcp over an in-memory MCP session (a scripted CiNii on a fake clock): six declared
tools, envelopes against the schema, argument errors as envelopes, an unknown tool as -32602."""

from __future__ import annotations

import json
from contextlib import asynccontextmanager
from datetime import timedelta

import jsonschema
import pytest
from mcp.shared.exceptions import McpError
from mcp.shared.memory import create_connected_server_and_client_session
from mcp.types import INVALID_PARAMS

from readingroom.cinii.server import build_cinii_server
from readingroom.core.clock import FakeClock
from readingroom.core.envelope import response_schema, tool_output_schema

from .upstream import APPID, Upstream, service

pytestmark = pytest.mark.anyio
SIX = {"cinii_search_articles", "cinii_search_books", "cinii_search_dissertations",
       "cinii_search_projects", "cinii_search_all", "cinii_get_record"}
VALIDATOR = jsonschema.Draft202012Validator(response_schema())


@asynccontextmanager
async def session(up: Upstream, ledger=None, **kw):
    server = build_cinii_server(service(up, ledger, **kw), env={}, clock=up.clock)
    async with create_connected_server_and_client_session(
            server, read_timeout_seconds=timedelta(seconds=30)) as s:
        yield s


def envelope(result) -> dict:
    data = result.structuredContent
    VALIDATOR.validate(data)
    assert json.loads(result.content[0].text) == data and data["attribution"]
    return data


async def test_six_declared_tools_for_the_model():
    async with session(Upstream(FakeClock())) as s:
        tools = (await s.list_tools()).tools
    assert {t.name for t in tools} == SIX
    for t in tools:
        a = t.annotations
        assert t.title and (a.readOnlyHint, a.destructiveHint, a.idempotentHint,
                            a.openWorldHint) == (True, False, True, True)
        assert t.outputSchema == tool_output_schema("cinii-mcp", t.name)
        assert len(t.description) > 200


async def test_every_tool_answers_an_envelope_and_leaves_a_receipt(tmp_path):
    up, ledger = Upstream(FakeClock()), tmp_path / "r.jsonl"
    calls = [("cinii_search_articles", {"q": "漱石"}), ("cinii_search_books", {"title": "読書室"}),
             ("cinii_search_dissertations", {"q": "読書室"}),
             ("cinii_search_projects", {"q": "読書室"}), ("cinii_search_all", {"q": "漱石"}),
             ("cinii_get_record", {"crid": "9990000000000000001"})]
    async with session(up, ledger) as s:
        out = [envelope(await s.call_tool(n, a)) for n, a in calls]
    assert [e.get("error") for e in out] == [None] * 6
    assert all(e["items"] for e in out)
    assert "searched_for" not in out[-1] and "searched_for" in out[0]
    text = ledger.read_text("utf-8")
    assert len(text.splitlines()) == 6 and APPID not in text
    assert all(APPID not in json.dumps(e, ensure_ascii=False) for e in out)


async def test_bad_arguments_are_an_envelope_and_an_unknown_tool_is_32602():
    up = Upstream(FakeClock())
    async with session(up) as s:
        bad = await s.call_tool("cinii_search_books", {"q": 5, "colour": "red"})
        with pytest.raises(McpError) as err:
            await s.call_tool("cinii_search_everything", {"q": "x"})
    assert bad.isError and envelope(bad)["error"]["code"] == "INVALID_ARGUMENT"
    assert err.value.error.code == INVALID_PARAMS and up.seen == []


async def test_without_an_appid_the_tools_answer_not_configured_and_send_nothing():
    up = Upstream(FakeClock())
    async with session(up, appid=None) as s:
        res = await s.call_tool("cinii_search_all", {"q": "漱石"})
    assert res.isError and envelope(res)["error"]["code"] == "NOT_CONFIGURED"
    assert up.seen == []
