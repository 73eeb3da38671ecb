"""The protocol answers, even when the request is bad (issue 18 §7), over real stdio.

Before, the SDK's stdio transport dropped every line it could not validate: an invalid JSON
line, a batch, ``params`` as a list, ids ``null``/``true``/``1.5``/objects, a 100,000-deep line
and a lone surrogate in any string argument went unanswered (the client waited for its own
timeout), an unknown method got -32602 "Invalid request parameters", and ``tools/call`` before
``initialize`` the same. Now the suite's own transport (``core/transport.py``) answers each, with
the id when it can be recovered, for all four servers; the server keeps serving and stdout
stays JSON-RPC only.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.forked import StdioClient

from readingroom.core.rawstdio import RawStdioClient

ANSWER_S = 10.0
"""Generous: each answer comes in milliseconds; what matters is that one comes at all."""


def _environment(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("READINGROOM_", "BOOK_AGENT_", "MCP_RECEIPT_LOG"))}
    env.update({"LITERATURE_SEARCH_STATE_DIR": str(tmp_path / "state"),
                # Nothing reaches an upstream in these tests; a closed port proves it.
                "NDL_SRU_URL": "http://127.0.0.1:9/sru"})
    return env


SERVERS = {
    "ndl-mcp": ["-m", "readingroom.ndl"],
    "literature-search-mcp": ["-m", "readingroom.literature"],
    "swiss-cultural-heritage-mcp": ["-m", "readingroom.heritage"],
    "book-agent mcp": ["-m", "readingroom.book", "--data-dir", "{data}", "mcp"],
}


@pytest.fixture(params=sorted(SERVERS))
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[RawStdioClient]:
    argv = [a.replace("{data}", str(tmp_path / "books")) for a in SERVERS[request.param]]
    client = StdioClient([sys.executable, *argv], env=_environment(tmp_path))
    with client:
        yield client


def line(obj: object) -> bytes:
    """One message as a line, non-ASCII escaped (so a lone surrogate travels as ``\\ud800``)."""
    return json.dumps(obj, ensure_ascii=True).encode("ascii") + b"\n"


def request(rid: object, method: str, params: object = None) -> bytes:
    msg: dict[str, object] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        msg["params"] = params
    return line(msg)


def error_of(answer: dict, rid: object) -> dict:
    assert answer.get("jsonrpc") == "2.0", answer
    assert "error" in answer and "result" not in answer, answer
    assert answer["id"] == rid, answer
    assert isinstance(answer["error"]["message"], str) and answer["error"]["message"]
    return answer["error"]


def _string_arguments(tool: dict) -> list[str]:
    names = []
    for name, schema in tool["inputSchema"].get("properties", {}).items():
        kinds = [schema.get("type")] + [s.get("type") for s in schema.get("anyOf", [])]
        if "string" in kinds:
            names.append(name)
    return names


def test_before_initialize_a_call_is_refused_clearly_and_ping_answers(server) -> None:
    # String ids: the client's own requests below number theirs 1, 2, ...
    refused = error_of(server.answer_to_raw(
        request("a", "tools/call", {"name": "anything", "arguments": {}}), ANSWER_S), "a")
    assert refused["code"] == -32600 and refused["data"]["reason"] == "not_initialized"
    assert "initialize" in refused["message"]
    listed = error_of(server.answer_to_raw(request("b", "tools/list"), ANSWER_S), "b")
    assert listed["data"]["reason"] == "not_initialized"
    assert server.answer_to_raw(request("c", "ping"), ANSWER_S) == {
        "jsonrpc": "2.0", "id": "c", "result": {}}
    server.initialize()
    assert server.request("tools/list", {}, ANSWER_S)["result"]["tools"]


DEEP = 100_000
CASES: list[tuple[str, bytes, object, int, str]] = [
    # name, the raw line, the id answered, the code, data.reason
    ("invalid JSON (id recoverable)", b'{"jsonrpc": "2.0", "id": 107, "method": "ping", \n', 107,
     -32700, "not_json"),
    ("not JSON at all", b"hello server\n", None, -32700, "not_json"),
    ("NaN is not JSON", b'{"jsonrpc":"2.0","id":114,"method":"ping","params":{"a":NaN}}\n', 114,
     -32700, "not_json"),
    ("invalid UTF-8", b'{"jsonrpc":"2.0","id":113,"method":"ping","params":{"a":"\xff\xfe"}}\n',
     113, -32700, "not_utf8"),
    ("a batch array", b'[{"jsonrpc":"2.0","id":8,"method":"ping"}]\n', None, -32600, "batch"),
    ("a bare number", b"42\n", None, -32600, "not_an_object"),
    ("params as a list", request(109, "tools/list", []), 109, -32600, "params_not_object"),
    ("id null", request(None, "ping"), None, -32600, "bad_id"),
    ("id true", request(True, "ping"), None, -32600, "bad_id"),
    ("id 1.5", request(1.5, "ping"), None, -32600, "bad_id"),
    ("id an object", request({"a": 1}, "ping"), None, -32600, "bad_id"),
    ("id a list", request([1], "ping"), None, -32600, "bad_id"),
    ("100k-deep line", b'{"jsonrpc":"2.0","id":110,"method":"tools/call","params":{"name":"x",'
     b'"arguments":{"a":' + b"[" * DEEP + b"]" * DEEP + b"}}}\n", 110, -32600, "too_deep"),
    ("100k-deep, id last", b'{"jsonrpc":"2.0","method":"ping","params":{"a":' + b"[" * DEEP
     + b"]" * DEEP + b'},"id":"late"}\n', "late", -32600, "too_deep"),
    ("unknown method", request(111, "books/burn", {}), 111, -32601, "unknown_method"),
    ("jsonrpc 1.0", line({"jsonrpc": "1.0", "id": 116, "method": "ping"}), 116, -32600,
     "not_jsonrpc_2"),
    ("neither method nor result", line({"jsonrpc": "2.0", "id": 117}), 117, -32600, "no_method"),
    ("tools/call without a name", request(118, "tools/call", {"arguments": {}}), 118, -32602,
     "invalid_params"),
    ("lone surrogate in a method-level field", line(
        {"jsonrpc": "2.0", "id": 119, "method": "ping", "note": "\ud800"}), 119, -32600,
     "lone_surrogate"),
    ("over 4 MiB", b'{"jsonrpc":"2.0","id":120,"method":"tools/call","params":{"name":"x",'
     b'"arguments":{"q":"' + b"a" * (5 * 1024 * 1024) + b'"}}}\n', 120, -32600, "too_large"),
]


def test_every_bad_message_is_answered_and_the_server_keeps_serving(server) -> None:
    server.initialize()
    tools = server.request("tools/list", {}, ANSWER_S)["result"]["tools"]
    for name, raw, rid, code, reason in CASES:
        error = error_of(server.answer_to_raw(raw, ANSWER_S), rid)
        assert (error["code"], error.get("data", {}).get("reason")) == (code, reason), name
        assert len(error["message"]) < 400, name  # never an echo of what was sent
    # A lone surrogate in any string argument of any tool: answered, with its id.
    asked = 0
    for tool in tools:
        for argument in _string_arguments(tool):
            asked += 1
            rid = f"surrogate-{tool['name']}-{argument}"
            error = error_of(server.answer_to_raw(request(rid, "tools/call", {
                "name": tool["name"], "arguments": {argument: "a\ud800b"}}), ANSWER_S), rid)
            assert (error["code"], error["data"]["reason"]) == (-32602, "lone_surrogate")
    assert asked >= 3
    # A notification is never answered, good or bad; the next request still is.
    server.send_raw(line({"jsonrpc": "2.0", "method": "notifications/unknown"}))
    server.send_raw(line({"jsonrpc": "2.0", "method": "notifications/cancelled",
                          "params": [1]}))
    assert server.request("ping", {}, ANSWER_S) == {"jsonrpc": "2.0", "id": server._next_id - 1,
                                                   "result": {}}
    assert server.request("tools/list", {}, ANSWER_S)["result"]["tools"] == tools
    assert server.close() == 0
    assert server.stdout_problems() == []
