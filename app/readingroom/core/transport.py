"""The suite's stdio transport: every line a client sends is answered or handed on, never dropped.

The SDK's own stdio transport hands a line it cannot validate to the session as an exception,
which logs it and answers nothing, so the client waits for its own timeout: an invalid JSON
line, a batch array, ``params`` given as a list, an id that is ``null``, ``true``, ``1.5`` or an
object, a string with a lone surrogate (``"\\ud800"``, valid JSON but not Unicode text), a
100,000-deep line, and ``tools/call`` before ``initialize`` (which the SDK answers with a
misleading "Invalid request parameters"). Here each line is judged first (:class:`Screen`):

=============================================  ======  =====================================
the line                                       code    answered with the id
=============================================  ======  =====================================
not UTF-8, not JSON, ``NaN``/``Infinity``      -32700  when it can be read from the line
longer than :data:`MAX_MESSAGE_BYTES`          -32600  when it can be read from its start
nested deeper than :data:`MAX_DEPTH`           -32600  when it can be read from the line
a batch (array) or not an object               -32600  null
an id that is not a string or an integer       -32600  null (no valid id to echo)
``jsonrpc`` not ``"2.0"``, a non-string        -32600  yes
method, ``params`` not an object
a lone surrogate in a string                   -32602  yes (-32600 outside ``params``)
a method the protocol does not have            -32601  yes
a request other than ``ping`` before           -32600  yes, ``data.reason: not_initialized``
``initialize``
``params`` the method's schema refuses         -32602  yes
=============================================  ======  =====================================

Notifications are never answered (JSON-RPC); a bad one is dropped with a log line on stderr.
No message quotes more than a short prefix of what the client sent.

Replies go out through one writer: a reply that cannot be serialised (a defect) becomes a
``-32603`` error for its id instead of ending the server.
"""

from __future__ import annotations

import json
import logging
import re
import typing
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, BinaryIO

import anyio
import anyio.lowlevel
import anyio.to_thread
import mcp.types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from .bounds import json_nests_deeper

__all__ = [
    "MAX_DEPTH",
    "MAX_MESSAGE_BYTES",
    "Screen",
    "Screened",
    "recover_id",
    "stdio_transport",
]

log = logging.getLogger("readingroom.transport")

MAX_MESSAGE_BYTES = 4 * 1024 * 1024
"""The longest line read as a message. Every tool argument of the suite is capped far below
this; a longer line is read past without being held and answered ``-32600``."""
MAX_DEPTH = 64
"""The deepest nesting of arrays and objects a message may have (checked before parsing, so
nothing recurses on the input); a tool call uses five or six levels."""
_SHOWN = 80
"""The most characters of anything the client sent that a reply quotes."""
_READ_STEP = 64 * 1024

_TOKENS = re.compile(
    rb'"(?:[^"\\]++|\\.)*+"|[\[\]{}:,]|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null'
)
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89abcdefABCDEF]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _methods(union: Any) -> frozenset[str]:
    """The ``method`` literals of an SDK request or notification union."""
    members = typing.get_args(union.model_fields["root"].annotation)
    return frozenset(typing.get_args(m.model_fields["method"].annotation)[0] for m in members)


REQUEST_METHODS = _methods(types.ClientRequest)
NOTIFICATION_METHODS = _methods(types.ClientNotification)
_BEFORE_INITIALIZE = frozenset({"initialize", "ping"})


@dataclass(frozen=True)
class Screened:
    """What to do with one line: hand ``message`` on, send ``reply`` at once, or neither."""

    message: types.JSONRPCMessage | None = None
    reply: dict[str, Any] | None = None
    note: str = ""
    """Why a line was neither handed on nor answered (a notification), for the log."""


def _shown(text: str) -> str:
    """A short, printable prefix of client text for a message."""
    text = _LONE_SURROGATE.sub("\ufffd", text)
    return text if len(text) <= _SHOWN else text[:_SHOWN] + "…"


def _error(rid: str | int | None, code: int, message: str, **data: Any) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": rid, "error": error}


def _valid_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def recover_id(raw: bytes) -> str | int | None:
    """The id of a message that cannot be parsed, read from its top level; None if not there.

    Tokens are matched in the raw bytes (strings with their escapes, brackets, numbers), so
    invalid UTF-8, a cut-off line or a nesting too deep to parse still give up their id when
    it is a string or an integer directly inside the outermost object.
    """
    depth = 0
    expect: str | None = None  # "colon", then "value", after the top-level key "id"
    key_next = False
    for match in _TOKENS.finditer(raw):
        token = match.group()
        if expect == "colon":
            expect = "value" if token == b":" else None
            continue
        if expect == "value":
            if token.startswith(b'"'):
                try:
                    value = json.loads(token.decode("utf-8"))
                except (UnicodeDecodeError, ValueError):
                    return None
                return value if _valid_id(value) and not _LONE_SURROGATE.search(value) else None
            if re.fullmatch(rb"-?\d+", token):
                return int(token)
            return None
        if token in (b"{", b"["):
            depth += 1
            key_next = depth == 1 and token == b"{"
        elif token in (b"}", b"]"):
            depth -= 1
            key_next = False
        elif depth == 1 and token == b",":
            key_next = True
        elif depth == 1 and key_next and token.startswith(b'"'):
            key_next = False
            if token == b'"id"':
                expect = "colon"
        else:
            key_next = False
    return None


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def _holds_lone_surrogate(value: Any) -> bool:
    """Whether any string (or key) inside ``value`` holds a lone surrogate. Depth is bounded."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if _LONE_SURROGATE.search(item):
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def _validation_summary(exc: ValidationError) -> str:
    """The first few problems of a validation error: where and what, never the input."""
    parts = []
    for error in exc.errors(include_url=False, include_input=False, include_context=False)[:3]:
        where = ".".join(_shown(str(p)) for p in error.get("loc", ()) if p != "root")
        parts.append(f"{where or 'params'}: {_shown(str(error.get('msg', '')))}")
    return "; ".join(parts)


class Screen:
    """Judges each line from the client (see the module docstring for the table).

    It remembers whether ``initialize`` has been handed on, so a request that comes first is
    answered with a clear error instead of reaching the session.
    """

    def __init__(self) -> None:
        self.initialized = False

    def line(self, raw: bytes, *, too_long: bool = False) -> Screened:
        """Judge one line (its newline removed; ``too_long``: only its start was kept)."""
        raw = raw.rstrip(b"\r\n")
        if too_long:
            return Screened(reply=_error(
                recover_id(raw), types.INVALID_REQUEST,
                f"Invalid Request: the message is longer than {MAX_MESSAGE_BYTES} bytes and "
                "was not read.", reason="too_large", max_bytes=MAX_MESSAGE_BYTES))
        if not raw.strip():
            return Screened(note="an empty line")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            return Screened(reply=_error(
                recover_id(raw), types.PARSE_ERROR,
                f"Parse error: the message is not UTF-8 text (byte {exc.start}).",
                reason="not_utf8"))
        if json_nests_deeper(raw, MAX_DEPTH):
            return Screened(reply=_error(
                recover_id(raw), types.INVALID_REQUEST,
                f"Invalid Request: the message nests deeper than {MAX_DEPTH} levels and was "
                "not parsed.", reason="too_deep", max_depth=MAX_DEPTH))
        try:
            obj = json.loads(text, parse_constant=_refuse_constant)
        except ValueError as exc:
            where = (f" at line {exc.lineno} column {exc.colno}"
                     if isinstance(exc, json.JSONDecodeError) else "")
            what = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
            return Screened(reply=_error(
                recover_id(raw), types.PARSE_ERROR,
                f"Parse error: the message is not valid JSON ({_shown(what)}{where}).",
                reason="not_json"))
        except RecursionError:  # unreachable after json_nests_deeper; kept so no line can raise
            return Screened(reply=_error(None, types.INVALID_REQUEST, "Invalid Request: too deep."))
        if isinstance(obj, list):
            return Screened(reply=_error(
                None, types.INVALID_REQUEST,
                "Invalid Request: batches (a JSON array of messages) are not supported by MCP; "
                "send one message per line.", reason="batch"))
        if not isinstance(obj, dict):
            return Screened(reply=_error(
                None, types.INVALID_REQUEST,
                f"Invalid Request: a message is a JSON object, not {type(obj).__name__}.",
                reason="not_an_object"))
        return self._message(obj, raw)

    def _message(self, obj: dict[str, Any], raw: bytes) -> Screened:
        has_id = "id" in obj
        rid = obj.get("id")
        method = obj.get("method")
        is_request = has_id and "method" in obj
        if has_id and (not _valid_id(rid) or (isinstance(rid, str)
                                              and _LONE_SURROGATE.search(rid))):
            kind = "null" if rid is None else type(rid).__name__
            return Screened(reply=_error(
                None, types.INVALID_REQUEST,
                f"Invalid Request: the id must be a string or an integer, not {kind}.",
                reason="bad_id"))

        def refuse_anyway(known: str | int | None) -> Screened:
            return Screened(reply=_error(
                known, types.INVALID_REQUEST,
                "Invalid Request: a message needs a method (a request or notification) or a "
                "result or error (a response).", reason="no_method"))

        def refuse(code: int, message: str, **data: Any) -> Screened:
            if is_request:
                return Screened(reply=_error(rid, code, message, **data))
            return Screened(note=message)

        if obj.get("jsonrpc") != "2.0":
            return refuse(types.INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0".',
                          reason="not_jsonrpc_2")
        if "method" not in obj:
            if "result" in obj or "error" in obj:
                return self._response(obj)
            return refuse_anyway(rid if has_id else None)
        if not isinstance(method, str):
            return refuse(types.INVALID_REQUEST, "Invalid Request: the method must be a string.",
                          reason="bad_method")
        params = obj.get("params")
        if "params" in obj and not isinstance(params, dict):
            kind = "null" if params is None else type(params).__name__
            return refuse(types.INVALID_REQUEST,
                          f"Invalid Request: params must be an object, not {kind}.",
                          reason="params_not_object")
        if _SURROGATE_ESCAPE.search(raw) and _holds_lone_surrogate(obj):
            inside = params is not None and _holds_lone_surrogate(params)
            return refuse(
                types.INVALID_PARAMS if inside else types.INVALID_REQUEST,
                f"Invalid {'params' if inside else 'Request'}: a string holds a lone surrogate "
                "(an unpaired \\ud800-\\udfff escape), which is not Unicode text; send the "
                "character itself or a complete surrogate pair.", reason="lone_surrogate")
        if not is_request:
            return self._notification(obj, method)
        if method not in REQUEST_METHODS:
            return refuse(types.METHOD_NOT_FOUND, f"Method not found: {_shown(method)!r}.",
                          reason="unknown_method")
        if not self.initialized and method not in _BEFORE_INITIALIZE:
            return refuse(
                types.INVALID_REQUEST,
                f"Invalid Request: {_shown(method)} before initialize. Start the session with "
                "an initialize request (then the notifications/initialized notification); "
                "only ping may come first.", reason="not_initialized")
        try:
            types.ClientRequest.model_validate({"method": method, "params": params}
                                               if "params" in obj else {"method": method})
            message = types.JSONRPCMessage.model_validate(obj)
        except ValidationError as exc:
            return refuse(types.INVALID_PARAMS,
                          f"Invalid params for {_shown(method)}: {_validation_summary(exc)}.",
                          reason="invalid_params")
        if method == "initialize":
            self.initialized = True
        return Screened(message=message)

    def _notification(self, obj: dict[str, Any], method: str) -> Screened:
        if method not in NOTIFICATION_METHODS:
            return Screened(note=f"an unknown notification {_shown(method)!r}")
        if not self.initialized and method != "notifications/cancelled":
            return Screened(note=f"the notification {_shown(method)!r} before initialize")
        try:
            types.ClientNotification.model_validate(
                {k: obj[k] for k in ("method", "params") if k in obj})
            return Screened(message=types.JSONRPCMessage.model_validate(obj))
        except ValidationError as exc:
            return Screened(note=f"a notification with invalid params: {_validation_summary(exc)}")

    @staticmethod
    def _response(obj: dict[str, Any]) -> Screened:
        # A response to a request of the server's: nothing to answer, whatever its shape.
        try:
            return Screened(message=types.JSONRPCMessage.model_validate(obj))
        except ValidationError:
            return Screened(note="a message with neither a method nor a valid result or error")


class _Writer:
    """Writes one JSON-RPC message per line to the protocol stream, one writer at a time."""

    def __init__(self, out: typing.IO[str]) -> None:
        self._out = anyio.wrap_file(out)
        self._lock = anyio.Lock()

    async def write_text(self, line: str) -> None:
        async with self._lock:
            await self._out.write(line + "\n")
            await self._out.flush()

    async def write_reply(self, reply: dict[str, Any]) -> None:
        await self.write_text(json.dumps(reply, ensure_ascii=False, separators=(",", ":")))

    async def write_message(self, message: SessionMessage) -> None:
        root = message.message.root
        try:
            line = message.message.model_dump_json(by_alias=True, exclude_none=True)
        except Exception as exc:  # a defect: the reply must still answer its request
            rid = getattr(root, "id", None)
            log.error("a reply could not be serialised (%s): %s", type(exc).__name__,
                      _shown(str(exc)))
            if rid is None or isinstance(root, types.JSONRPCNotification):
                return
            line = json.dumps(_error(
                rid, types.INTERNAL_ERROR,
                "Internal error: the server built a reply it could not serialise; this is a "
                "defect and the server's stderr log has the reason.", reason="unserialisable"))
        await self.write_text(line)


async def _read_lines(stdin: BinaryIO) -> AsyncIterator[tuple[bytes, bool]]:
    """Yield ``(line, too_long)``; a line past the limit is read through, only its start kept."""
    while True:
        line = await anyio.to_thread.run_sync(stdin.readline, MAX_MESSAGE_BYTES + 1,
                                              abandon_on_cancel=True)
        if not line:
            return
        if len(line) > MAX_MESSAGE_BYTES and not line.endswith(b"\n"):
            head = line[:_READ_STEP]
            del line
            while True:
                rest = await anyio.to_thread.run_sync(stdin.readline, _READ_STEP,
                                                      abandon_on_cancel=True)
                if not rest or rest.endswith(b"\n"):
                    break
            yield head, True
        else:
            yield line, False


@asynccontextmanager
async def stdio_transport(
    stdin: BinaryIO, stdout: typing.IO[str]
) -> AsyncIterator[
    tuple[MemoryObjectReceiveStream[SessionMessage | Exception],
          MemoryObjectSendStream[SessionMessage]]
]:
    """The ``(read, write)`` streams for ``Server.run`` over a binary stdin and a text stdout.

    Lines are judged by a :class:`Screen`: bad ones are answered here, good ones handed on.
    Replies of the session and of the screen share one writer, so lines never interleave.
    """
    read_send: MemoryObjectSendStream[SessionMessage | Exception]
    read_stream: MemoryObjectReceiveStream[SessionMessage | Exception]
    write_stream: MemoryObjectSendStream[SessionMessage]
    write_receive: MemoryObjectReceiveStream[SessionMessage]
    read_send, read_stream = anyio.create_memory_object_stream(0)
    write_stream, write_receive = anyio.create_memory_object_stream(0)
    writer = _Writer(stdout)
    screen = Screen()

    async def reader() -> None:
        try:
            async with read_send:
                async for line, too_long in _read_lines(stdin):
                    judged = screen.line(line, too_long=too_long)
                    if judged.reply is not None:
                        log.warning("answered a bad message: %s", judged.reply["error"]["message"])
                        await writer.write_reply(judged.reply)
                    elif judged.message is not None:
                        await read_send.send(SessionMessage(judged.message))
                    elif judged.note and judged.note != "an empty line":
                        log.warning("dropped %s", judged.note)
        except anyio.ClosedResourceError:  # the session ended first
            await anyio.lowlevel.checkpoint()

    async def sender() -> None:
        try:
            async with write_receive:
                async for message in write_receive:
                    await writer.write_message(message)
        except anyio.ClosedResourceError:
            await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as tg:
        tg.start_soon(reader)
        tg.start_soon(sender)
        yield read_stream, write_stream
