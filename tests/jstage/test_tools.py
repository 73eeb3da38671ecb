"""jstage-mcp over an in-memory MCP session (a scripted J-STAGE on a fake clock): three declared
tools, all in the envelope with "Powered by J-STAGE", argument errors as envelopes, an unknown
tool as -32602."""

from __future__ import annotations

import json
from contextlib import asynccontextmanager
from datetime import timedelta

import jsonschema
import pytest
from mcp.shared.exceptions import McpError
from mcp.shared.memory import create_connected_server_and_client_session
from mcp.types import INVALID_PARAMS

from readingroom.core.clock import FakeClock
from readingroom.core.envelope import response_schema, tool_output_schema
from readingroom.jstage.server import build_jstage_server

from .upstream import Upstream, service

pytestmark = pytest.mark.anyio
THREE = {"jstage_search_articles", "jstage_get_article_by_doi", "jstage_list_issues"}
VALIDATOR = jsonschema.Draft202012Validator(response_schema())


@asynccontextmanager
async def session(up: Upstream, ledger=None):
    server = build_jstage_server(service(up, ledger), env={}, clock=up.clock)
    async with create_connected_server_and_client_session(
            server, read_timeout_seconds=timedelta(seconds=30)) as s:
        yield s


def envelope(result) -> dict:
    data = result.structuredContent
    VALIDATOR.validate(data)
    assert json.loads(result.content[0].text) == data
    assert any("Powered by J-STAGE" in line for line in data["attribution"])
    return data


async def test_three_declared_tools_for_the_model():
    async with session(Upstream(FakeClock())) as s:
        tools = (await s.list_tools()).tools
    assert {t.name for t in tools} == THREE
    for t in tools:
        a = t.annotations
        assert t.title and (a.readOnlyHint, a.destructiveHint, a.idempotentHint,
                            a.openWorldHint) == (True, False, True, True)
        assert t.outputSchema == tool_output_schema("jstage-mcp", t.name)
        assert len(t.description) > 200


async def test_every_tool_answers_an_envelope_and_leaves_a_receipt(tmp_path):
    up, ledger = Upstream(FakeClock()), tmp_path / "r.jsonl"
    calls = [("jstage_search_articles", {"article": "漱石"}),
             ("jstage_get_article_by_doi", {"doi": "10.99999/rrkiyo.12.1_1"}),
             ("jstage_list_issues", {"cdjournal": "rrkiyo"})]
    async with session(up, ledger) as s:
        out = [envelope(await s.call_tool(n, a)) for n, a in calls]
    assert [e.get("error") for e in out] == [None] * 3 and all(e["items"] for e in out)
    operations = [json.loads(x)["operation"] for x in ledger.read_text("utf-8").splitlines()]
    assert operations == [n for n, _ in calls]


async def test_bad_arguments_are_an_envelope_and_an_unknown_tool_is_32602():
    up = Upstream(FakeClock())
    async with session(up) as s:
        bad = await s.call_tool("jstage_list_issues", {"cdjournal": 5, "colour": "red"})
        with pytest.raises(McpError) as err:
            await s.call_tool("jstage_search_journals", {"material": "x"})
    assert bad.isError and envelope(bad)["error"]["code"] == "INVALID_ARGUMENT"
    assert err.value.error.code == INVALID_PARAMS and up.seen == []
