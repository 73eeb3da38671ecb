"""Attack: a valid 19 MiB body of millions of tiny containers (JSON) or tags (XML).

Issue 18 §2. ``json.loads`` and lxml hold the interpreter lock for the whole parse, so no other
thread or task runs: a JSON body of six million ``[]`` took 6 s and ~420 MB, and a server
answered nothing meanwhile, not even ``ping`` or a cancel (heritage went past 1 GB, literature
took 27.9 s). Moving such a parse to a thread does not help (measured: a 6.2 s gap on the
event loop's thread for a 6.3 s parse). Now the core bounds the work before parsing: a JSON
body of more than ``MAX_JSON_VALUES`` values (brackets and commas outside strings) or an XML
document of more than ``MAX_TAGS`` tags is refused unparsed with ``API_ERROR`` (reason
``too_many_values``), for every server; ndl-mcp also parses its pages off the event loop.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from tests.forked import StdioClient

from readingroom.core.http import HttpClient, Politeness, UpstreamBodyError
from readingroom.core.loopback import LoopbackServer

# Starts real server or command processes: left out of the quick tier (tests/conftest.py).
pytestmark = pytest.mark.stdio

SIZE = 19 * 1024 * 1024
QUICK_S = 5.0
"""The bound on an answer (the fix answers in a fraction of a second; before: 6 s and more)."""
JSON_BODY = b"[" + b"[]," * (SIZE // 3) + b"[]]"
XML_BODY = (b'<searchRetrieveResponse xmlns="http://www.loc.gov/zing/srw/"><records>'
            + b"<a/>" * (SIZE // 4) + b"</records></searchRetrieveResponse>")


class Tiny(LoopbackServer):
    """Serves :data:`JSON_BODY` or :data:`XML_BODY` at every path."""

    body = JSON_BODY

    def _handle(self, handler: BaseHTTPRequestHandler, method: str) -> None:
        head = f"HTTP/1.0 200 OK\r\nContent-Length: {len(self.body)}\r\n\r\n".encode()
        with contextlib.suppress(OSError):
            handler.wfile.write(head + self.body)


@pytest.fixture
def upstream() -> Iterator[Tiny]:
    with Tiny() as server:
        yield server


@pytest.mark.anyio
async def test_the_core_client_refuses_a_body_of_millions_of_values(upstream: Tiny) -> None:
    async with HttpClient(politeness=Politeness(min_interval=0.0, serial=True),
                          user_agent="attack-test") as client:
        began = time.monotonic()
        with pytest.raises(UpstreamBodyError) as raised:
            await client.get_json(upstream.url + "/x")
        took = time.monotonic() - began
    assert raised.value.details["reason"] == "too_many_values"
    assert took < QUICK_S, f"{took:.2f} s"


def test_ndl_mcp_refuses_a_page_of_millions_of_tags_and_answers_ping_meanwhile(
    upstream: Tiny, tmp_path: Path
) -> None:
    upstream.body = XML_BODY
    env = {**os.environ, "NDL_SRU_URL": upstream.url + "/api/sru",
           "MCP_RECEIPT_LOG": str(tmp_path / "receipts.jsonl")}
    with StdioClient([sys.executable, "-m", "readingroom.ndl"], env=env) as server:
        server.initialize()
        began = time.monotonic()
        call = server.send_request("tools/call", {"name": "ndl_search_books",
                                                  "arguments": {"title": "こころ"}})
        ping = server.send_request("ping", {})
        assert server.wait(ping, timeout=30)["result"] == {}
        pinged = time.monotonic() - began
        answer = server.wait(call, timeout=30)["result"]
        took = time.monotonic() - began
        assert server.close() == 0
    envelope = answer["structuredContent"]
    assert answer["isError"] is True and envelope["error"]["code"] == "API_ERROR"
    assert envelope["error"]["details"]["reason"] == "too_many_values"
    print(f"ndl-mcp: answered in {took:.2f} s, ping in {pinged:.2f} s")
    assert took < QUICK_S and pinged < QUICK_S, (took, pinged)
