"""In-memory MCP sessions of ndl-mcp over an httpx.MockTransport and a fake clock."""

from __future__ import annotations

from contextlib import asynccontextmanager
from datetime import timedelta

import httpx
import pytest
from mcp.shared.memory import create_connected_server_and_client_session

from readingroom.ndl.server import build_ndl_server
from readingroom.ndl.upstreams.ndl_search import NdlClient

from .harness import ENDPOINT, Upstream, by_query


@pytest.fixture
def upstream() -> Upstream:
    return Upstream(responder=by_query)


@pytest.fixture
def session_for():
    """``async with session_for(upstream, env={...}) as s`` → an initialised ClientSession."""

    @asynccontextmanager
    async def open_session(up: Upstream, env: dict[str, str] | None = None):
        client = NdlClient(ENDPOINT, transport=httpx.MockTransport(up.handle), clock=up.clock)
        server = build_ndl_server(client, env=env or {}, clock=up.clock)
        async with create_connected_server_and_client_session(
            server, read_timeout_seconds=timedelta(seconds=30)
        ) as session:
            yield session
        await client.aclose()

    return open_session
