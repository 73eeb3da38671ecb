"""The MCP Inspector CLI against every server of the catalogue, as installed.

``inspector --cli <server executable> --method tools/list --strict`` must pass the Inspector's
schema portability lint; every tool, called once with valid arguments, must answer
``isError: false`` with structuredContent valid against its outputSchema; invalid arguments must
answer ``isError: true`` with the envelope's error object. The server's upstream variables reach
it through the Inspector's own ``-e KEY=VALUE``.
"""

from __future__ import annotations

import json
from contextlib import ExitStack
from typing import Any

import jsonschema
import pytest

from readingroom.core.declaration import ServerInfo

from .servers import catalogue, host_case
from .world import World, server_executable, tool_arg

EXIT_TOOL_ERROR = 5
"""Inspector 2.x: a tools/call that answered ``isError: true``."""


def _inspector(world: World, info: ServerInfo, upstream: dict[str, str], *args: str
               ) -> tuple[int, dict[str, Any], str]:
    # The proxy variables too: a server request not for a loopback fake reaches the recorder.
    proxies = {k: world.env[k] for k in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")}
    env_args = [a for k, v in {**proxies, **upstream}.items() for a in ("-e", f"{k}={v}")]
    # The target goes before the options: --tool-arg takes several values and would swallow it.
    argv = [world.hosts.program("inspector"), "--cli", "--format", "json", *env_args,
            str(server_executable(info)), *info.args, *args]
    done = world.run(argv)
    try:
        envelope = json.loads(done.stdout)
    except json.JSONDecodeError:
        pytest.fail(f"inspector printed no JSON (exit {done.returncode}): "
                    f"{done.stdout[-500:]} {done.stderr[-1500:]}")
    return done.returncode, envelope, done.stderr


@pytest.fixture(scope="module")
def world(module_world: World) -> World:
    """One world for the module: the Inspector writes no host config, it only starts servers
    (each test's call still starts its own server process)."""
    return module_world


_LISTED: dict[str, list[dict[str, Any]]] = {}
"""What ``tools/list --strict`` answered, per server: the same installed executable lists the
same tools, so the tests after the first read the schemas from here instead of starting the
Inspector and the server once more (each start costs seconds)."""


def _tools(world: World, info: ServerInfo, upstream: dict[str, str]) -> list[dict[str, Any]]:
    if info.name in _LISTED:
        return _LISTED[info.name]
    code, envelope, stderr = _inspector(world, info, upstream, "--method", "tools/list",
                                        "--strict")
    assert code == 0, f"tools/list --strict exited {code}: {stderr[-3000:]}"
    assert "schemaFindings" not in envelope, envelope.get("schemaFindings")
    tools: list[dict[str, Any]] = envelope["result"]["tools"]
    _LISTED[info.name] = tools
    return tools


@pytest.mark.parametrize("info", catalogue(), ids=lambda s: s.name)
def test_tools_list_passes_the_strict_schema_lint(world: World, info: ServerInfo):
    case = host_case(info)
    with ExitStack() as stack:
        tools = _tools(world, info, dict(case.contract.upstream(stack)))
    names = [t["name"] for t in tools]
    assert names, "no tools listed"
    for tool in tools:
        jsonschema.Draft202012Validator.check_schema(tool["inputSchema"])
        jsonschema.Draft202012Validator.check_schema(tool["outputSchema"])
    assert sorted([*case.tool_calls, *case.unchecked_tools]) == sorted(names), (
        "tests/hosts_real/servers.py needs exactly one valid call (or a reason) per listed tool"
    )


@pytest.mark.parametrize("info", catalogue(), ids=lambda s: s.name)
def test_every_tool_answers_valid_structured_content(world: World, info: ServerInfo):
    case = host_case(info)
    with ExitStack() as stack:
        upstream = dict(case.contract.upstream(stack))
        schemas = {t["name"]: t["outputSchema"] for t in _tools(world, info, upstream)}
        for tool, arguments in case.tool_calls.items():
            args = [a for k, v in arguments.items() for a in ("--tool-arg", tool_arg(k, v))]
            code, envelope, stderr = _inspector(
                world, info, upstream, "--method", "tools/call", "--tool-name", tool, *args)
            result = envelope["result"]
            assert code == 0, f"{tool}: exit {code}: {stderr[-1500:]}"
            assert result.get("isError") is False, f"{tool}: {result}"
            structured = result["structuredContent"]
            jsonschema.validate(structured, schemas[tool])
            texts = [c["text"] for c in result["content"] if c["type"] == "text"]
            assert json.loads(texts[0]) == structured


@pytest.mark.parametrize("info", catalogue(), ids=lambda s: s.name)
def test_invalid_arguments_answer_is_error_with_the_error_object(world: World, info: ServerInfo):
    case = host_case(info)
    tool, arguments = case.invalid_call
    args = [a for k, v in arguments.items() for a in ("--tool-arg", tool_arg(k, v))]
    with ExitStack() as stack:
        code, envelope, _ = _inspector(world, info, dict(case.contract.upstream(stack)),
                                       "--method", "tools/call", "--tool-name", tool, *args)
    result = envelope["result"]
    assert code == EXIT_TOOL_ERROR
    assert result["isError"] is True
    error = result["structuredContent"]["error"]
    assert error["code"] == "INVALID_ARGUMENT", error
    assert error["message"]
    jsonschema.validate(result["structuredContent"], _tools_output_schema(world, info, tool))


def _tools_output_schema(world: World, info: ServerInfo, tool: str) -> dict[str, Any]:
    with ExitStack() as stack:
        tools = _tools(world, info, dict(host_case(info).contract.upstream(stack)))
    return next(t["outputSchema"] for t in tools if t["name"] == tool)
