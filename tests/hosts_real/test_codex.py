"""Real Codex reads what ``readingroom install-host --host codex`` wrote, and runs the servers.

``codex mcp get NAME --json`` must show our command, args, env, env_vars and both timeouts for
every server; ``codex mcp list --json`` must list them all; ``codex app-server`` (JSON-RPC over
stdio; no login, no model: its model endpoints point at a loopback recorder that must see
nothing) must list each server's tools with no ``toolsError`` and carry one tool call through to
the server and its loopback fake.

The fake's URL reaches the server through Codex's own mechanism: ``codex app-server -c
mcp_servers.NAME.env.VAR="..."`` adds it to the entry's ``env`` for that run (Codex passes a
stdio server only a short whitelist of its own environment, plus ``env_vars`` and ``env``), so
the file ``install-host`` wrote is tested unchanged. The world's proxy variables are added the
same way: a server request that is not for a loopback fake reaches the recorder.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from readingroom.catalog import SERVERS
from readingroom.core.declaration import ServerInfo
from readingroom.core.platform import Machine
from readingroom.core.rawstdio import RawStdioClient
from readingroom.hosts.entries import STARTUP_TIMEOUT_S, TOOL_TIMEOUT_MARGIN_S, build_entry

from .servers import catalogue, host_case
from .world import World, codex_offline_overrides, install_dir, server_executable

APP_SERVER_TIMEOUT_S = 60.0


def _native(path: Path) -> str:
    return str(path).replace("\\", "/")


def _installed(world: World) -> None:
    done = world.install_host("codex")
    assert done.returncode == 0, done.stdout + done.stderr
    assert (world.codex_home / "config.toml").is_file()


def _codex_json(world: World, *args: str) -> Any:
    done = world.run([world.hosts.program("codex"), *args])
    assert done.returncode == 0, f"codex {' '.join(args)}: {done.stdout}{done.stderr}"
    return json.loads(done.stdout)


@pytest.mark.parametrize("info", catalogue(), ids=lambda s: s.name)
def test_codex_mcp_get_shows_our_entry(world: World, info: ServerInfo):
    _installed(world)
    got = _codex_json(world, "mcp", "get", info.name, "--json")
    transport = got["transport"]
    assert got["enabled"] is True
    assert transport["type"] == "stdio"
    entry = build_entry(info, install_dir(), world.data_dir, Machine.current())
    assert transport["command"] == _native(server_executable(info))
    assert transport["args"] == [_native(Path(a)) if Path(a).is_absolute() else a
                                 for a in entry.args]
    assert transport["env"] == {"MCP_RECEIPT_LOG": _native(world.data_dir / "receipts.jsonl")}
    assert transport["env_vars"] == list(info.secrets)
    assert got["startup_timeout_sec"] == STARTUP_TIMEOUT_S
    assert got["tool_timeout_sec"] == info.deadline_s + TOOL_TIMEOUT_MARGIN_S


def test_codex_mcp_list_lists_every_server(world: World):
    _installed(world)
    listed = {s["name"]: s for s in _codex_json(world, "mcp", "list", "--json")}
    assert set(SERVERS) <= set(listed), sorted(listed)
    for name in SERVERS:
        assert listed[name]["enabled"] is True
        assert listed[name]["transport"]["command"] == _native(server_executable(SERVERS[name]))


class AppServer:
    """``codex app-server`` over stdio, through the raw JSON-RPC client of the suite."""

    def __init__(self, world: World, upstream: Mapping[str, Mapping[str, str]]) -> None:
        # The proxy variables go to each server too, so a request a server makes anywhere but
        # its loopback fakes reaches the world's recorder (and fails the test).
        proxies = {k: world.env[k] for k in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY",
                                             "NO_PROXY")}
        overrides = [a for name, env in upstream.items()
                     for key, value in {**proxies, **env}.items()
                     for a in ("-c", f"mcp_servers.{name}.env.{key}={json.dumps(value)}")]
        argv = [world.hosts.program("codex"), "app-server",
                *codex_offline_overrides(world.outside_url), *overrides]
        self.stderr_path = world.root / "codex-app-server.stderr"
        self._stderr = self.stderr_path.open("wb")
        self.client = RawStdioClient(argv, env=world.env, cwd=str(world.workdir),
                                     stderr=self._stderr)

    def call(self, method: str, params: dict[str, Any]) -> Any:
        """One request; its result (a JSON-RPC error fails the test)."""
        answer = self.client.request(method, params, timeout=APP_SERVER_TIMEOUT_S)
        assert "error" not in answer, f"{method}: {answer['error']}; stderr: {self.stderr()}"
        return answer["result"]

    def stderr(self) -> str:
        """What the app server wrote to stderr so far (the tail)."""
        self._stderr.flush()
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")[-2000:]

    def close(self) -> None:
        """Close stdin and wait for the app server to exit."""
        try:
            self.client.close(timeout=30)
        finally:
            self._stderr.close()


def test_codex_app_server_lists_tools_and_calls_one_per_server(world: World):
    _installed(world)
    cases = [host_case(info) for info in catalogue()]
    with ExitStack() as stack:
        upstream = {case.name: dict(case.contract.upstream(stack)) for case in cases}
        server = AppServer(world, upstream)
        try:
            server.call("initialize", {"clientInfo": {"name": "readingroom-tests",
                                                      "version": "1"}})
            server.client.notify("initialized")
            statuses = {s["name"]: s for s in server.call("mcpServerStatus/list", {})["data"]}
            thread = server.call("thread/start", {})["thread"]["id"]
            for case in cases:
                status = statuses.get(case.name)
                assert status is not None, sorted(statuses)
                assert status.get("toolsError") is None, status["toolsError"]
                assert sorted(status["tools"]) == sorted([*case.tool_calls,
                                                          *case.unchecked_tools])
                tool, arguments = case.call_through_host
                result = server.call("mcpServer/tool/call", {
                    "server": case.name, "threadId": thread, "tool": tool,
                    "arguments": arguments,
                })
                assert not result.get("isError"), result
                structured = result["structuredContent"]
                jsonschema.validate(structured, status["tools"][tool]["outputSchema"])
                assert structured["server"] == case.name
                if tool == "book_render_page":  # the page really went through Codex
                    assert structured["data"]["image_attached"] is True
                    assert any(c.get("type") == "image" for c in result.get("content", []))
                # The call reached the loopback fake, where the envelope names one endpoint.
                endpoint = (structured.get("query") or {}).get("endpoint")
                if endpoint is not None:
                    bases = [v for v in upstream[case.name].values() if "://" in v]
                    assert any(endpoint.startswith(b) for b in bases), (endpoint, bases)
        finally:
            server.close()
