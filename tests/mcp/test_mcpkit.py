"""The MCP kit's call boundary over in-memory sessions: deadline, admission, errors, credit.

Driven through the test-only toy server (``tests/contract/toy_server``), whose ``toy_wait``
is held open by a :class:`WaitRoom` so every ordering here is awaited, never slept for.
"""

from __future__ import annotations

import time
from contextlib import asynccontextmanager
from datetime import timedelta

import anyio
import anyio.lowlevel
import jsonschema
import pytest
from mcp.shared.exceptions import McpError
from mcp.shared.memory import create_connected_server_and_client_session
from mcp.shared.message import SessionMessage
from mcp.types import INVALID_PARAMS, JSONRPCMessage
from pydantic import BaseModel, ConfigDict, Field

from readingroom.core.declaration import ServerInfo
from readingroom.core.envelope import Envelope, response_schema, tool_output_schema
from readingroom.core.mcpkit import ToolSpec, build_server, input_schema

from ..contract.toy_server import SERVER as TOY
from ..contract.toy_server.server import WaitRoom, build_toy_server, tool_specs

pytestmark = pytest.mark.anyio

VALIDATOR = jsonschema.Draft202012Validator(response_schema())


def envelope(result) -> dict:
    """The structured envelope, valid against the published schema."""
    VALIDATOR.validate(result.structuredContent)
    return result.structuredContent


@asynccontextmanager
async def session(server):
    async with create_connected_server_and_client_session(
        server, read_timeout_seconds=timedelta(seconds=30)
    ) as s:
        yield s


async def test_deadline_has_a_one_second_floor_and_answers_deadline_exceeded():
    room = WaitRoom()
    server = build_toy_server({"READINGROOM_TOOL_DEADLINE": "0.01"}, room=room)
    async with session(server) as s:
        began = time.monotonic()
        with anyio.fail_after(10):
            res = await s.call_tool("toy_wait", {"seconds": 60, "label": "held"})
        took = time.monotonic() - began
        with anyio.fail_after(10):
            after = await s.call_tool("toy_echo", {"text": "still here"})
    data = envelope(res)
    assert res.isError and data["error"]["code"] == "DEADLINE_EXCEEDED"
    assert data["error"]["details"] == {"deadline_s": 1.0}
    assert data["attribution"] == list(TOY.credit)
    assert room.log == ["start held"], "the body was abandoned, not finished"
    assert 1.0 <= took < 10
    assert not after.isError and envelope(after)["data"] == {"text": "still here"}


@pytest.mark.parametrize("concurrency,seen_while_a_runs", [
    ("1", ["start a"]),
    ("2", ["start a", "start b"]),
])
async def test_admission_limit_holds_a_second_call_until_the_first_finishes(
    concurrency, seen_while_a_runs
):
    room = WaitRoom()
    server = build_toy_server({"READINGROOM_CONCURRENCY": concurrency}, room=room)
    results = {}

    async def call(label: str) -> None:
        results[label] = await s.call_tool("toy_wait", {"seconds": 60, "label": label})

    async with session(server) as s, anyio.create_task_group() as tg:
        with anyio.fail_after(10):
            tg.start_soon(call, "a")
            await room.entered("a").wait()
            tg.start_soon(call, "b")
            await anyio.wait_all_tasks_blocked()  # b has reached the server and is parked
            assert room.log == seen_while_a_runs
            room.release("b")
            room.release("a")
            await room.entered("b").wait()
    if concurrency == "1":
        assert room.log == ["start a", "end a", "start b", "end b"]
    assert {k: envelope(r)["data"] for k, r in results.items()} == {
        "a": {"label": "a", "released": True}, "b": {"label": "b", "released": True}}


async def test_core_error_becomes_its_typed_envelope_with_the_declared_credit():
    async with session(build_toy_server({})) as s:
        res = await s.call_tool("toy_fail", {"record": "r1"})
    data = envelope(res)
    assert res.isError
    assert data["error"]["code"] == "NOT_FOUND"
    assert data["error"]["details"] == {"record": "r1"}
    assert data["attribution"] == list(TOY.credit)


async def test_bad_arguments_name_the_field_and_never_reach_the_tool():
    room = WaitRoom()
    async with session(build_toy_server({}, room=room)) as s:
        res = await s.call_tool("toy_wait", {"seconds": -1, "colour": "red"})
    data = envelope(res)
    assert res.isError and data["error"]["code"] == "INVALID_ARGUMENT"
    assert sorted(e["loc"] for e in data["error"]["details"]["errors"]) == [
        ["colour"], ["seconds"]]
    assert data["attribution"] == list(TOY.credit)
    assert room.log == []


async def test_unknown_tool_is_invalid_params_and_the_session_goes_on():
    async with session(build_toy_server({})) as s:
        with pytest.raises(McpError) as raised:
            await s.call_tool("toy_nothing", {})
        after = await s.call_tool("toy_echo", {"text": "x"})
    error = raised.value.error
    assert error.code == INVALID_PARAMS
    assert "toy_nothing" in error.message
    assert error.data == {"code": "UNKNOWN_TOOL", "tool": "toy_nothing",
                          "available_tools": ["toy_echo", "toy_fail", "toy_wait"]}
    assert not after.isError


class _NoInput(BaseModel):
    model_config = ConfigDict(extra="forbid")


BARE = ServerInfo(name="bare-mcp", entry_point="bare:main")


async def test_a_defect_is_internal_error_and_credit_is_added_only_where_declared():
    async def broken(_args: _NoInput) -> Envelope:
        raise RuntimeError("boom")

    async def plain(_args: _NoInput) -> Envelope:
        return Envelope(server=BARE.name, operation="bare_plain")

    tools = [ToolSpec("bare_broken", "Broken", "Fails.", _NoInput, broken),
             ToolSpec("bare_plain", "Plain", "Answers.", _NoInput, plain)]
    async with session(build_server(BARE, "bare", tools, env={})) as s:
        broke = await s.call_tool("bare_broken", {})
        fine = await s.call_tool("bare_plain", {})
    data = envelope(broke)
    assert broke.isError and data["error"]["code"] == "INTERNAL_ERROR"
    assert "boom" not in data["error"]["message"], "details go to stderr, not the envelope"
    assert envelope(fine)["attribution"] == [] and not fine.isError


async def test_finish_hook_runs_first_and_its_credit_is_kept():
    seen = []

    def finish(env: Envelope, tool: str) -> None:
        seen.append(tool)
        env.attribution = ["credit chosen by the server"]

    server = build_server(TOY, "toy", tool_specs(), env={}, finish=finish)
    async with session(server) as s:
        ok = await s.call_tool("toy_echo", {"text": "x"})
        bad = await s.call_tool("toy_echo", {})
    assert seen == ["toy_echo", "toy_echo"]
    assert envelope(ok)["attribution"] == envelope(bad)["attribution"] == [
        "credit chosen by the server"]


async def test_the_deadline_counts_from_arrival_so_a_queued_call_is_answered_in_time():
    release = anyio.Event()
    entered = anyio.Event()
    log: list[str] = []

    async def hog(_args: _NoInput) -> Envelope:
        # Holds its slot past every deadline (shielded), so the queued call cannot start.
        log.append("hog")
        entered.set()
        with anyio.CancelScope(shield=True):
            await release.wait()
        return Envelope(server=BARE.name, operation="bare_hog")

    async def plain(_args: _NoInput) -> Envelope:
        log.append("plain")
        return Envelope(server=BARE.name, operation="bare_plain")

    tools = [ToolSpec("bare_hog", "Hog", "Holds its slot.", _NoInput, hog),
             ToolSpec("bare_plain", "Plain", "Answers.", _NoInput, plain)]
    server = build_server(BARE, "bare", tools, env={"READINGROOM_TOOL_DEADLINE": "1",
                                                    "READINGROOM_CONCURRENCY": "1"})
    async with session(server) as s:
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(s.call_tool, "bare_hog", {})
                await entered.wait()
                began = time.monotonic()
                queued = await s.call_tool("bare_plain", {})
                took = time.monotonic() - began
                release.set()
    data = envelope(queued)
    assert queued.isError and data["error"]["code"] == "DEADLINE_EXCEEDED"
    assert data["error"]["details"] == {"deadline_s": 1.0, "started": False, "concurrency": 1}
    assert "could not start within 1 s" in data["error"]["message"]
    assert log == ["hog"], "the queued call never began"
    assert 1.0 <= took < 1.9, "answered at its own deadline, not when the slot came free"


# --- what tools/list declares (issue 19 §6) ---------------------------------------------------


class _Titled(BaseModel):
    model_config = ConfigDict(extra="forbid")
    from_year: int | None = Field(None, ge=0, description="Earliest year.")
    label: str = Field(title="Shelf label", max_length=9)


def test_input_schema_is_pydantics_without_the_titles_it_derives_from_names():
    ours, theirs = input_schema(_Titled), _Titled.model_json_schema()
    assert "title" not in ours and theirs["title"] == "_Titled"
    assert "title" not in ours["properties"]["from_year"]
    assert theirs["properties"]["from_year"].pop("title") == "From Year"
    assert ours["properties"]["label"]["title"] == "Shelf label", "a chosen title is kept"
    del theirs["title"]
    assert ours == theirs, "nothing else differs"


async def test_a_reply_naming_another_tool_is_sent_as_the_tool_that_answered():
    """Each tool declares its server and operation as constants, and the SDK client refuses a
    structuredContent that breaks them: a handler's mislabelled envelope must not cost the
    caller its answer."""

    async def mislabelled(_args: _NoInput) -> Envelope:
        return Envelope(server="other-mcp", operation="other_tool", data={"answer": 42})

    tools = [ToolSpec("bare_mislabelled", "Mislabelled", "Answers.", _NoInput, mislabelled)]
    async with session(build_server(BARE, "bare", tools, env={})) as s:
        declared = (await s.list_tools()).tools[0].outputSchema
        with anyio.fail_after(10):
            res = await s.call_tool("bare_mislabelled", {})  # validated by the SDK client
    data = envelope(res)
    assert not res.isError and data["data"] == {"answer": 42}
    assert (data["server"], data["operation"]) == ("bare-mcp", "bare_mislabelled")
    assert declared == tool_output_schema("bare-mcp", "bare_mislabelled")
    jsonschema.validate(data, declared)


async def test_a_cancel_that_arrives_as_the_call_finishes_is_answered_once_and_serving_goes_on():
    """The SDK's cancel/answer race (python-sdk #2416): the client's cancel is read while the
    tool's last await has its result but the task has not yet resumed. The SDK then marks the
    request answered, and its own ``respond()`` asserts, which ended the whole server."""
    room = WaitRoom()
    server = build_toy_server({}, room=room)
    to_server, server_reads = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    server_writes, from_server = anyio.create_memory_object_stream[SessionMessage](0)

    def message(**fields) -> SessionMessage:
        return SessionMessage(JSONRPCMessage.model_validate({"jsonrpc": "2.0", **fields}))

    seen: list[dict] = []

    async def answer(rid: int) -> dict:
        while True:
            got = (await from_server.receive()).message.model_dump(by_alias=True,
                                                                    exclude_none=True)
            seen.append(got)
            if got.get("id") == rid:
                return got

    async def serve() -> None:
        await server.run(server_reads, server_writes, server.create_initialization_options())

    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            tg.start_soon(serve)
            await to_server.send(message(id=1, method="initialize", params={
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "race", "version": "1"}}))
            await answer(1)
            await to_server.send(message(method="notifications/initialized"))
            await to_server.send(message(id=2, method="tools/call", params={
                "name": "toy_wait", "arguments": {"seconds": 60, "label": "x"}}))
            await room.entered("x").wait()
            cancel = message(method="notifications/cancelled", params={"requestId": 2})
            while True:  # hand the cancel to the session's reader the moment it waits for one
                try:
                    to_server.send_nowait(cancel)
                    break
                except anyio.WouldBlock:
                    await anyio.lowlevel.checkpoint()
            room.release("x")  # in the same turn: the tool's wait has its result first
            first = await answer(2)
            await to_server.send(message(id=3, method="tools/call", params={
                "name": "toy_echo", "arguments": {"text": "after"}}))
            after = await answer(3)
            await to_server.send(message(id=4, method="ping"))
            await answer(4)
            assert room.log == ["start x", "end x"]
            to_server.close()
    assert "error" in first or "result" in first
    assert [m for m in seen if m.get("id") == 2] == [first], "one answer for the call"
    assert after["result"]["structuredContent"]["data"] == {"text": "after"}
