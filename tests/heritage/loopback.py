"""swiss-cultural-heritage-mcp in memory, its upstreams on loopback: scripted faults, real HTTP.

``async with on_loopback() as h`` starts :class:`FakeUpstreams` (canned answers; ``h.fake.script``
puts any answer on the wire), builds the real server (tool layer, Markdown, validation) over
real HTTP to it with a :class:`FakeClock` (pacing and backoff take no real time), and opens an
in-memory MCP session. ``h.call(name, args)`` returns ``(structuredContent, text, isError)``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from mcp.shared.memory import create_connected_server_and_client_session

from mcp import ClientSession
from readingroom.core.clock import Clock, FakeClock
from readingroom.heritage.fake import Canned as Answer
from readingroom.heritage.fake import FakeUpstreams
from readingroom.heritage.server import build_heritage_server

JSON = {"Content-Type": "application/json;charset=utf-8"}
XML = {"Content-Type": "text/xml;charset=UTF-8"}


def json_answer(payload: Any, status: int = 200) -> Answer:
    """A JSON body as a scripted answer."""
    return status, JSON, json.dumps(payload).encode("utf-8")


def xml_answer(body: bytes, status: int = 200) -> Answer:
    """An XML body as a scripted answer."""
    return status, XML, body


@dataclass
class Heritage:
    """A running server over the fake, and its MCP session."""

    fake: FakeUpstreams
    session: ClientSession
    clock: Clock

    async def call(self, name: str, args: dict[str, Any]) -> tuple[dict[str, Any], str, bool]:
        """Call a tool: (structuredContent valid against the schema, first text, isError)."""
        # The SDK client re-checks the 100 KB output schema itself on every call (about
        # 0.2 s); one compiled validator does the same check.
        self.session._tool_output_schemas.setdefault(name, None)
        result = await self.session.call_tool(name, args)
        text = result.content[0].text if result.content else ""  # type: ignore[union-attr]
        data = result.structuredContent or {}
        _validator().validate(data)
        return data, text, bool(result.isError)

    def script(self, fn: Callable[[str, str, dict[str, str], str], Answer | None]) -> None:
        """Put ``fn``'s answers on the wire (None falls through to the canned ones)."""
        self.fake.script = fn


_SHARED: list[FakeUpstreams] = []
_VALIDATORS: list[Any] = []


def _validator() -> Any:
    if not _VALIDATORS:
        import jsonschema

        from readingroom.core.envelope import response_schema

        _VALIDATORS.append(jsonschema.Draft202012Validator(response_schema()))
    return _VALIDATORS[0]


def shared_fake() -> FakeUpstreams:
    """One loopback fake for the whole test process (stopping one costs 0.5 s), reset per use."""
    if not _SHARED:
        fake = FakeUpstreams(slow_seconds=5.0)
        fake.start()
        _SHARED.append(fake)
    fake = _SHARED[0]
    fake.script = None
    fake.modes.clear()
    fake.clear()
    return fake


@asynccontextmanager
async def on_loopback(ledger: Path | None = None, env: dict[str, str] | None = None, *,
                      clock: Clock | None = None) -> AsyncIterator[Heritage]:
    """The server over loopback fakes, in an in-memory session; no receipts unless ``ledger``.

    ``clock`` defaults to a :class:`FakeClock`; pass ``SystemClock()`` where the fake must see
    real pacing.
    """
    fake = shared_fake()
    clock = clock if clock is not None else FakeClock()
    settings = {**fake.env(), "MCP_RECEIPT_LOG": str(ledger) if ledger else "", **(env or {})}
    server = build_heritage_server(env=settings, clock=clock)
    try:
        async with create_connected_server_and_client_session(
            server, read_timeout_seconds=timedelta(seconds=60)
        ) as session:
            yield Heritage(fake, session, clock)
    finally:
        fake.script = None
        fake.modes.clear()
