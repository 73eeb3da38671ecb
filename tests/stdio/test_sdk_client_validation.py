"""The v1 SDK client over real stdio, against every server of the catalogue.

``mcp.ClientSession.call_tool`` holds every result that is not an error to the tool's declared
``outputSchema`` (and raises when it does not match). Every tool is declared with core's
compact schema (:func:`~readingroom.core.envelope.tool_output_schema`, issue 19 §6); here every
tool of every server is called once through the SDK client with valid arguments (the real-host
layer's calls, ``tests/hosts_real/servers.py``), each answer is also held to the published
schema, and the invalid call's error envelope (which the SDK does not validate) is held to the
declared schema by hand.
"""

from __future__ import annotations

import os
from contextlib import ExitStack
from datetime import timedelta

import anyio
import jsonschema
import pytest
from mcp.client.stdio import stdio_client
from tests.hosts_real.servers import host_case

from mcp import ClientSession, StdioServerParameters
from readingroom.catalog import SERVERS
from readingroom.core.declaration import ServerInfo
from readingroom.core.envelope import response_schema, tool_output_schema

pytestmark = pytest.mark.anyio

PUBLISHED = jsonschema.Draft202012Validator(response_schema())
SESSION_S = 120.0
"""The whole session: start-up, tools/list and one call per tool against loopback fakes."""


@pytest.mark.parametrize("info", list(SERVERS.values()), ids=lambda s: s.name)
async def test_the_sdk_client_accepts_every_tools_answer(info: ServerInfo):
    case = host_case(info)
    command = case.contract.command()
    with ExitStack() as stack, open(os.devnull, "w") as devnull:
        env = case.contract.environment(stack)
        params = StdioServerParameters(command=command[0], args=command[1:], env=env)
        async with stdio_client(params, errlog=devnull) as (r, w), ClientSession(
            r, w, read_timeout_seconds=timedelta(seconds=60)
        ) as session:
            with anyio.fail_after(SESSION_S):
                await session.initialize()
                declared = {t.name: t.outputSchema for t in (await session.list_tools()).tools}
                answers = {name: await session.call_tool(name, args)  # validated by the SDK
                           for name, args in case.tool_calls.items()}
                invalid = await session.call_tool(*case.invalid_call)
    structured = [n for n, schema in declared.items() if schema is not None]
    assert structured, "at least one tool declares an output schema"
    for name in structured:
        assert declared[name] == tool_output_schema(info.name, name)
    for name, result in answers.items():
        assert not result.isError, (name, result.content[0])
        if declared[name] is not None:
            data = result.structuredContent
            assert data is not None and (data["server"], data["operation"]) == (info.name, name)
            PUBLISHED.validate(data)
    tool = case.invalid_call[0]
    assert invalid.isError and invalid.structuredContent is not None
    assert invalid.structuredContent["error"]["code"] == "INVALID_ARGUMENT"
    jsonschema.validate(invalid.structuredContent, declared[tool])
    PUBLISHED.validate(invalid.structuredContent)
