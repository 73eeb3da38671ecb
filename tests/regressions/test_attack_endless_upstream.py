"""Attack: an upstream that answers 200 and then streams 64 KiB chunks forever.

Issue 9 §2. Before, the 20 MiB limit was checked only after the whole body had arrived, so
ndl-mcp read the stream into memory without end (5.0 GB in 15 s; 1.28 GB after 8 s when
measured again before the fix). Now the core client stops reading at the cap while the body
streams and answers ``API_ERROR`` (reason ``too_large``), for every server. The hostile server
runs on loopback only and is stopped by the test.
"""

from __future__ import annotations

import os
import socket
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.core.served import peak_rss_mb

from readingroom.core.http import MAX_BODY_BYTES, HttpClient, Politeness, UpstreamBodyError
from readingroom.core.rawstdio import RawStdioClient

# Starts real server or command processes: left out of the quick tier (tests/conftest.py).
pytestmark = [pytest.mark.anyio, pytest.mark.stdio]
CHUNK = b"<x>" + b"a" * (64 * 1024 - 3)
RSS_LIMIT_MB = 200


class EndlessUpstream:
    """A loopback HTTP server whose every answer is a 200 with a body that never ends."""

    def __init__(self) -> None:
        self._sock = socket.create_server(("127.0.0.1", 0))
        self._stop = threading.Event()
        self.hung_up = threading.Event()
        self.sent_bytes = 0
        self._threads: list[threading.Thread] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._sock.getsockname()[1]}/api/sru"

    def start(self) -> None:
        self._spawn(self._accept)

    def stop(self) -> None:
        self._stop.set()
        # Closing a listening socket does not wake a blocked accept(); one connection does.
        with socket.create_connection(self._sock.getsockname(), timeout=5):
            pass
        self._sock.close()
        for thread in self._threads:
            thread.join(timeout=10)

    def _spawn(self, target, *args) -> None:
        thread = threading.Thread(target=target, args=args, daemon=True)
        self._threads.append(thread)
        thread.start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            if self._stop.is_set():
                conn.close()
                return
            self._spawn(self._stream, conn)

    def _stream(self, conn: socket.socket) -> None:
        with conn:
            try:
                conn.recv(65536)
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/xml\r\n\r\n")
                while not self._stop.is_set():
                    conn.sendall(CHUNK)
                    self.sent_bytes += len(CHUNK)
            except OSError:
                self.hung_up.set()  # the client closed the connection: it stopped reading


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def endless() -> Iterator[EndlessUpstream]:
    server = EndlessUpstream()
    server.start()
    yield server
    server.stop()


async def test_the_core_client_stops_reading_at_the_cap(endless: EndlessUpstream) -> None:
    cap = 2 * 1024 * 1024
    async with HttpClient(politeness=Politeness(min_interval=0.0, serial=True),
                          user_agent="attack-test", max_body_bytes=cap) as client:
        with pytest.raises(UpstreamBodyError) as raised:
            await client.get(endless.url, {"query": "x"})
    assert raised.value.details["reason"] == "too_large"
    assert raised.value.details["max_bytes"] == cap
    assert endless.hung_up.wait(timeout=10), "the connection was closed, not drained"


def test_ndl_mcp_answers_api_error_and_stays_small(endless: EndlessUpstream,
                                                    tmp_path: Path) -> None:
    env = {**os.environ, "NDL_SRU_URL": endless.url, "READINGROOM_TOOL_DEADLINE": "5",
           "MCP_RECEIPT_LOG": str(tmp_path / "receipts.jsonl")}
    with RawStdioClient([sys.executable, "-m", "readingroom.ndl"], env=env) as server:
        server.initialize()
        answer = server.call_tool("ndl_search_books", {"title": "こころ"}, timeout=30)
        peak = peak_rss_mb(server.proc.pid)
    envelope = answer["structuredContent"]
    assert answer["isError"] is True
    assert envelope["error"]["code"] == "API_ERROR"
    assert envelope["error"]["details"]["reason"] == "too_large"
    assert envelope["error"]["details"]["max_bytes"] == MAX_BODY_BYTES
    assert endless.hung_up.wait(timeout=10)
    if peak is None:
        pytest.skip("no /proc here: the answer was checked, the peak memory cannot be read")
    assert peak < RSS_LIMIT_MB, f"ndl-mcp peaked at {peak} MB"
