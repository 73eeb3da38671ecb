"""``warming`` over MCP: the model loads after ``notifications/initialized``, never per request.

The server is the real one (:func:`build_book_server`) in an in-memory client session; its
model loader waits on an event the test holds, so the load is really in progress while the
tools answer, and ends only when the test lets it.
"""

from __future__ import annotations

import json
import threading

import anyio
import pytest
from mcp.shared.memory import create_connected_server_and_client_session

from readingroom.book.search.embeddings import load_static_model
from readingroom.book.search.semantic import SemanticConfig, SemanticRuntime
from readingroom.book.server import build_book_server
from readingroom.book.service import BookService
from tests.book.search.tiny_model import make_model

BOOK = "# Power\n\n## Wires\nThe electric current runs through the fence.\n\n" \
       "## Kitchen\nBanana bread and a cake.\n"


@pytest.fixture
def library(tmp_path):
    model = make_model(tmp_path / "tiny")
    src = tmp_path / "power.md"
    src.write_text(BOOK, encoding="utf-8")
    BookService(tmp_path / "data").init(src, book_id="power",
                                        semantic=SemanticConfig(model_dir=model))
    return tmp_path / "data", model


def envelope(result) -> dict:
    return json.loads(result.content[0].text)


@pytest.mark.anyio
async def test_warming_after_initialize_then_ok(library):
    data, model = library
    started, release = threading.Event(), threading.Event()
    loads: list[int] = []

    def loader():
        loads.append(1)
        started.set()
        release.wait(30)
        return load_static_model(model)

    runtime = SemanticRuntime(loader=loader)
    server = build_book_server(data, semantic=runtime, env={})
    async with create_connected_server_and_client_session(server) as client:
        # initialize (with notifications/initialized) is done: the load began with no tool call.
        assert await anyio.to_thread.run_sync(started.wait, 10)
        status = envelope(await client.call_tool("book_status", {"book_id": "power"}))
        assert status["data"]["search_modes"]["semantic"] == "warming"
        assert status["data"]["server"]["search"]["semantic"]["state"] == "warming"
        found = envelope(await client.call_tool("book_search", {
            "book_id": "power", "query": "electric", "semantic": "on"}))
        assert found["data"]["modes"]["semantic"] == "warming" and found["items"]
        assert all(h["matched_by"] == ["lexical"] for h in found["items"])
        assert any(d["code"] == "CAPABILITY_UNAVAILABLE" for d in found["diagnostics"])
        release.set()
        assert await anyio.to_thread.run_sync(runtime.wait, 10)
        after = envelope(await client.call_tool("book_search", {
            "book_id": "power", "query": "voltage"}))
        assert after["data"]["modes"]["semantic"] == "ok"
        assert after["items"][0]["matched_by"] == ["semantic"]
        status = envelope(await client.call_tool("book_status", {"book_id": "power"}))
        assert status["data"]["server"]["search"]["semantic"]["load_seconds"] is not None
    assert loads == [1], "loaded once per process, never per request"
