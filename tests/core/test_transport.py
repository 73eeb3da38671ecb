"""The screen of the suite's stdio transport, line by line (no process)."""

from __future__ import annotations

import json

import pytest

from readingroom.core.transport import MAX_DEPTH, Screen, recover_id


def _initialised() -> Screen:
    screen = Screen()
    judged = screen.line(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}}).encode())
    assert judged.message is not None and screen.initialized
    return screen


@pytest.mark.parametrize("raw, expected", [
    (b'{"jsonrpc":"2.0","id":5,"method":"ping"', 5),
    (b'{"jsonrpc":"2.0","method":"x","params":{"id":3},"id":"top"}', "top"),
    (b'{"params":{"id":3}}', None),  # only the top level counts
    (b'{"id":{"a":1}}', None),
    (b'{"id":1.5}', None),
    (b'{"id":true}', None),
    (b'{"a":"\\"id\\":9","id":-4', -4),  # a key inside a string is no key
    (b'{"jsonrpc":"2.0","id":"\xff","method":"ping"}', None),
    (b'{"x":"\xff","id":12}', 12),
    (b'[{"id":1}]', None),
    (b"", None),
])
def test_recover_id(raw: bytes, expected: object) -> None:
    assert recover_id(raw) == expected


def test_a_good_request_is_handed_on_with_its_id() -> None:
    judged = _initialised().line(b'{"jsonrpc":"2.0","id":"x","method":"tools/list"}\r\n')
    assert judged.reply is None and judged.message is not None
    assert judged.message.root.id == "x"


def test_depth_is_judged_before_parsing() -> None:
    ok = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":' + b"[" * (MAX_DEPTH - 3) \
        + b"]" * (MAX_DEPTH - 3) + b"}}"
    assert _initialised().line(ok).message is not None
    deep = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":' + b"[" * MAX_DEPTH \
        + b"]" * MAX_DEPTH + b"}}"
    reply = _initialised().line(deep).reply
    assert reply is not None and reply["id"] == 1 and reply["error"]["code"] == -32600
    # Brackets inside strings are not nesting.
    strings = b'{"jsonrpc":"2.0","id":2,"method":"ping","params":{"a":"' + b"[" * 500 + b'"}}'
    assert _initialised().line(strings).message is not None


def test_a_notification_is_never_answered() -> None:
    screen = _initialised()
    for raw in (b'{"jsonrpc":"2.0","method":"notifications/nope"}',
                b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":[1]}',
                b'{"jsonrpc":"1.0","method":"notifications/initialized"}',
                b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"x":"\\ud800"}}'):
        judged = screen.line(raw)
        assert judged.reply is None and judged.message is None and judged.note, raw


def test_a_valid_surrogate_pair_is_text() -> None:
    judged = _initialised().line(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                             "params": {"name": "t", "arguments": {
                                                 "q": "😀"}}}).encode())
    assert judged.message is not None


def test_invalid_params_never_quote_the_input() -> None:
    secret = "s" * 10_000
    judged = _initialised().line(json.dumps({
        "jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": 5, secret: 1}
    }).encode())
    assert judged.reply is not None and judged.reply["error"]["code"] == -32602
    assert len(json.dumps(judged.reply)) < 600


def test_a_response_from_the_client_is_handed_on() -> None:
    judged = _initialised().line(b'{"jsonrpc":"2.0","id":4,"result":{}}')
    assert judged.message is not None and judged.reply is None
