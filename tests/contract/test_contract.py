"""The contract every server passes, each server a real stdio subprocess.

Parametrised over the real catalogue and the test servers (``catalog.py``). Each server is
started once for the module; the last test closes its stdin and judges everything it wrote.
The tests marked ``smoke`` (start-up, the sample call, the clean exit) are the quick tier's
stdio check of every server (``python run.py test --quick``).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from mcp.types import INVALID_PARAMS, JSONRPCMessage

from readingroom.catalog import SERVERS
from readingroom.core.declaration import ServerInfo
from readingroom.core.envelope import response_schema, tool_output_schema

from .catalog import CASES, CONTRACT_SERVERS, TEST_SERVERS, ContractCase, case_for
from .client import ContractClient

START_S = 30.0
"""Ceiling for start-up plus ``initialize`` (a cold import of the SDK takes about 0.5 s)."""
CALL_S = 30.0
OUTPUT_SCHEMA_CEILING = 500
"""One tool's compact output schema (core.envelope.tool_output_schema: about 420 bytes); the
envelope's detail is in the published docs/response-schema.json, not in every tool."""
OWN_BYTES_CEILING = 6_000
"""Name, title, description and input schema of one tool, without its output schema."""
SUITE_BYTES_PER_TOOL = 3_000
"""Issue 19 §6: the whole suite's tools/list, per tool on average."""
SUITE_BYTES = 100_000
"""Issue 19 §6: the whole suite's tools/list (every catalogue server's) together."""
UNKNOWN_ARGUMENT = "__contract_unknown_argument__"

SERVER_PARAMS = [pytest.param(s, id=s.name) for s in CONTRACT_SERVERS]
PUBLISHED = jsonschema.Draft202012Validator(response_schema())


@dataclass
class Running:
    """One server process, started for the module, with what it answered at start-up."""

    case: ContractCase
    client: ContractClient
    initialize: dict[str, Any]
    tools: list[dict[str, Any]]
    tools_list_bytes: int
    stderr: Path

    @property
    def server(self) -> ServerInfo:
        """The server's declaration."""
        return self.case.server

    def tool(self, name: str) -> dict[str, Any]:
        """The ``tools/list`` entry of ``name``."""
        return next(t for t in self.tools if t["name"] == name)

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """A ``tools/call`` result, with its envelope checked against the tool's schema."""
        result = self.client.call_tool(name, arguments, timeout=CALL_S)
        data = result["structuredContent"]
        jsonschema.Draft202012Validator(self.tool(name)["outputSchema"]).validate(data)
        PUBLISHED.validate(data)  # the envelope's detail, which the compact schema leaves out
        assert json.loads(result["content"][0]["text"]) == data, "text and structure agree"
        assert data["server"] == self.server.name and data["operation"] == name
        return result


@pytest.fixture(scope="module", params=SERVER_PARAMS)
def running(request: pytest.FixtureRequest, tmp_path_factory) -> Iterator[Running]:
    case = case_for(request.param)
    stderr = tmp_path_factory.mktemp(case.name) / "stderr.log"
    with ExitStack() as stack:
        env = case.environment(stack)
        errlog = stack.enter_context(stderr.open("wb"))
        client = stack.enter_context(ContractClient(case.command(), env=env, stderr=errlog))
        init = client.initialize(timeout=START_S)
        rid = client.send_request("tools/list", {})
        tools = client.wait(rid, timeout=CALL_S)["result"]["tools"]
        size = len(client.response_line(rid))
        yield Running(case, client, init, tools, size, stderr)


def test_every_server_has_a_contract_case():
    assert set(CASES) == {s.name for s in CONTRACT_SERVERS}
    assert not set(TEST_SERVERS) & set(SERVERS), "a test server never joins the real catalogue"


# --- 1. declaration --------------------------------------------------------------------------


@pytest.mark.smoke
def test_initialize_reports_the_declared_name(running: Running):
    result = running.initialize["result"]
    assert result["serverInfo"]["name"] == running.server.name
    assert "tools" in result["capabilities"]
    assert result.get("instructions"), "a tool-selection guide is sent at initialize"


def test_every_tool_is_fully_declared(running: Running):
    assert running.tools, "a server declares at least one tool"
    names = [t["name"] for t in running.tools]
    assert len(names) == len(set(names))
    for tool in running.tools:
        name, hints = tool["name"], tool.get("annotations") or {}
        assert name.startswith(running.server.prefix), name
        assert tool.get("title") and hints.get("title") == tool["title"], name
        for hint in ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"):
            assert isinstance(hints.get(hint), bool), f"{name}: {hint} stated explicitly"
        assert tool.get("description"), name
        for key in ("inputSchema", "outputSchema"):
            jsonschema.Draft202012Validator.check_schema(tool[key])
            assert tool[key].get("type") == "object", f"{name}: {key}"


# --- 2. compact tools/list -------------------------------------------------------------------


def test_tools_list_is_compact(running: Running, capsys: pytest.CaptureFixture[str]):
    n = len(running.tools)
    with capsys.disabled():
        print(f"\n[contract] {running.server.name}: tools/list {running.tools_list_bytes} bytes "
              f"for {n} tools ({running.tools_list_bytes // n} per tool)")
    for tool in running.tools:
        own = {k: v for k, v in tool.items() if k != "outputSchema"}
        size = len(json.dumps(own, ensure_ascii=False, separators=(",", ":")).encode())
        assert size <= OWN_BYTES_CEILING, f"{tool['name']} declares {size} bytes"
        if "outputSchema" in tool:  # core's compact schema, the same for every server
            assert tool["outputSchema"] == tool_output_schema(running.server.name, tool["name"])
            schema = json.dumps(tool["outputSchema"], ensure_ascii=False, separators=(",", ":"))
            assert len(schema.encode()) <= OUTPUT_SCHEMA_CEILING, (
                f"{tool['name']}: output schema of {len(schema.encode())} bytes")


def _tools_list_bytes(info: ServerInfo) -> tuple[int, int]:
    """``(bytes of the tools/list response line, number of tools)`` of one real server."""
    case = case_for(info)
    with ExitStack() as stack:
        env = case.environment(stack)
        errlog = stack.enter_context(open(os.devnull, "wb"))
        client = stack.enter_context(ContractClient(case.command(), env=env, stderr=errlog))
        client.initialize(timeout=START_S)
        rid = client.send_request("tools/list", {})
        tools = client.wait(rid, timeout=CALL_S)["result"]["tools"]
        size = len(client.response_line(rid))
        assert client.close() == 0
    return size, len(tools)


def test_the_suite_tools_list_fits_a_host(capsys: pytest.CaptureFixture[str]):
    """Issue 19 §6: every catalogue server's tools/list together, against the suite's target
    (a host that connects them all transfers, parses and may show the model all of it)."""
    with ThreadPoolExecutor(max_workers=len(SERVERS)) as pool:
        sizes = dict(zip(SERVERS, pool.map(_tools_list_bytes, SERVERS.values()), strict=True))
    total = sum(size for size, _ in sizes.values())
    tools = sum(n for _, n in sizes.values())
    with capsys.disabled():
        for name, (size, n) in sizes.items():
            print(f"\n[contract] {name}: tools/list {size} bytes for {n} tools "
                  f"({size // n} per tool)", end="")
        print(f"\n[contract] suite: tools/list {total} bytes for {tools} tools "
              f"({total // tools} per tool; target at most {SUITE_BYTES_PER_TOOL} per tool "
              f"and {SUITE_BYTES} in all)")
    assert total <= SUITE_BYTES_PER_TOOL * tools, f"{total // tools} bytes per tool"
    assert total <= SUITE_BYTES, f"{total} bytes for the suite"


# --- 3 and 5. envelopes, credit on success and failure ---------------------------------------


@pytest.mark.smoke
def test_sample_call_succeeds_with_credit(running: Running):
    name, arguments = running.case.sample_call
    result = running.call(name, arguments)
    assert result["isError"] is False
    assert "error" not in result["structuredContent"]
    if running.server.credit:
        assert result["structuredContent"]["attribution"]


def test_inputs_refuse_unknown_arguments(running: Running):
    for tool in running.tools:
        assert tool["inputSchema"].get("additionalProperties") is False, tool["name"]


def test_bad_arguments_give_an_invalid_argument_envelope_with_credit(running: Running):
    sample_name, sample_args = running.case.sample_call
    calls = [(t["name"], {UNKNOWN_ARGUMENT: 1}) for t in running.tools]
    calls.append((sample_name, {k: {"not": "this"} for k in sample_args}))
    for name, arguments in calls:
        result = running.call(name, arguments)
        data = result["structuredContent"]
        assert result["isError"] is True, name
        assert data["error"]["code"] == "INVALID_ARGUMENT", name
        assert data["error"]["details"]["errors"], name
        if running.server.credit:
            assert data["attribution"], f"{name}: credit on a failure too"


# --- 4. unknown tool -------------------------------------------------------------------------


def test_unknown_tool_is_a_jsonrpc_invalid_params_error(running: Running):
    missing = f"{running.server.prefix}no_such_tool"
    response = running.client.request("tools/call", {"name": missing, "arguments": {}},
                                      timeout=CALL_S)
    assert "result" not in response
    assert response["error"]["code"] == INVALID_PARAMS
    assert missing in response["error"]["message"]
    assert response["error"]["data"]["code"] == "UNKNOWN_TOOL"
    assert response["error"]["data"]["available_tools"] == sorted(t["name"] for t in running.tools)


def test_help_goes_to_stderr_and_names_every_setting(running: Running):
    with ExitStack() as stack:
        env = running.case.environment(stack)
        done = subprocess.run([*running.case.command(), "--help"], env=env,
                              capture_output=True, timeout=START_S)
    assert done.returncode == 0 and done.stdout == b""
    text = done.stderr.decode("utf-8")
    assert text.startswith(f"{running.server.name} ")
    assert all(setting.name in text for setting in running.server.all_settings)


# --- 6 and 7. clean stdout, clean exit (keep this test last: it closes the server) ----------


@pytest.mark.smoke
def test_stdout_is_json_rpc_only_and_stdin_close_exits_zero(running: Running):
    assert running.client.close() == 0, running.stderr.read_text("utf-8", "replace")[-2000:]
    assert running.client.stdout_problems() == []
    assert len(running.client.raw_lines) == len(running.client.messages) > 2
    for message in running.client.messages:  # a request, notification, result or error
        JSONRPCMessage.model_validate(message)


# --- 8. cancel -------------------------------------------------------------------------------

CANCEL_PARAMS = [pytest.param(s, id=s.name) for s in CONTRACT_SERVERS
                 if s.name in CASES and CASES[s.name].slow_call is not None]


@pytest.mark.parametrize("server", CANCEL_PARAMS)
def test_cancel_mid_call_frees_the_server_for_the_next_call(server: ServerInfo, tmp_path):
    """A cancelled slow call stops; with one admission slot, the next call proves it."""
    case = case_for(server)
    assert case.slow_call is not None
    slow_name, slow_args = case.slow_call
    token = "contract-slow"
    with ExitStack() as stack:
        # One slot: had the cancelled call kept running, the next call would wait behind it.
        env = case.environment(stack, READINGROOM_CONCURRENCY="1")
        errlog = stack.enter_context((tmp_path / "stderr.log").open("wb"))
        client = stack.enter_context(ContractClient(case.command(), env=env, stderr=errlog))
        client.initialize(timeout=START_S)
        rid = client.send_request("tools/call", {"name": slow_name, "arguments": slow_args,
                                                 "_meta": {"progressToken": token}})
        client.wait_for(lambda m: m.get("method") == "notifications/progress"
                        and m["params"]["progressToken"] == token, timeout=CALL_S)
        client.notify("notifications/cancelled", {"requestId": rid, "reason": "contract"})
        began = time.monotonic()
        after = client.call_tool(*case.sample_call, timeout=10.0)
        answered_in = time.monotonic() - began
        assert client.close() == 0
        assert client.stdout_problems() == []
    assert after["isError"] is False
    assert answered_in < 5.0, f"the next call waited {answered_in:.1f} s behind the cancelled one"
    # The spec says a receiver SHOULD NOT answer a cancelled request; SDK 1.x answers it with
    # one error (code 0). Either is allowed; a result or a second answer is not.
    answers = [m for m in client.messages if m.get("id") == rid]
    assert len(answers) <= 1
    assert all("error" in m and "result" not in m for m in answers), answers
