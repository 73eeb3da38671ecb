"""Test helpers for the provider modules: a recording MockTransport and sample loading."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from readingroom.core.clock import FakeClock

Handler = Callable[[httpx.Request], httpx.Response]


class Recorder:
    """An ``httpx.MockTransport`` that records each request and the fake clock's time of it."""

    def __init__(self, handler: Handler, clock: FakeClock | None = None) -> None:
        self.requests: list[httpx.Request] = []
        self.times: list[float] = []
        self.clock = clock
        self._handler = handler
        self.transport = httpx.MockTransport(self._handle)

    def _handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if self.clock is not None:
            self.times.append(self.clock.monotonic())
        return self._handler(request)

    def params(self, index: int = -1) -> dict[str, str]:
        """The query parameters of a recorded request."""
        return dict(self.requests[index].url.params)


def load_json(path: Path) -> Any:
    """A JSON sample file."""
    return json.loads(path.read_text(encoding="utf-8"))


def wrapped_payload(path: Path) -> Any:
    """The ``payload`` of an OpenScience-wrapper sample (one record one level below its
    envelope, as ``SOURCES.md`` describes)."""
    return load_json(path)["payload"]


def arxiv_body(path: Path) -> tuple[int, bytes]:
    """HTTP status and the real UTF-8 body of an arxiv.py recording (Latin-1 decoded there)."""
    data = load_json(path)
    return data["status_code"], data["body"].encode("latin-1")


class Client:
    """A provider's paced client as the service builds it (its one host), for provider tests.

    ``get`` goes through :class:`~readingroom.literature.host_clients.ProviderHttp` (the budgeted
    retries) over the host's core client; ``pacing`` is the provider's own rule.
    """

    def __init__(self, provider: Any, settings: Any, transport: Any = None,
                 clock: FakeClock | None = None, budget_s: float = 30.0) -> None:
        from readingroom.literature.budget import Budget
        from readingroom.literature.host_clients import HostClients, ProviderHttp

        self.clock = clock or FakeClock()
        self.pacing = provider.pacing(settings)
        self.hosts = HostClients([(provider.info.id, settings.base_url, self.pacing)],
                                 clock=self.clock, transport=transport)
        self.http = ProviderHttp(provider.info.id, self.hosts.for_url(settings.base_url),
                                 Budget(self.clock, budget_s, 10.0), self.clock,
                                 provider.headers(settings))

    async def get(self, url: str, params: Any = None, *, headers: Any = None) -> httpx.Response:
        """GET through the budgeted client."""
        return await self.http.get(url, params, headers=headers)

    async def aclose(self) -> None:
        """Close the host client."""
        await self.hosts.aclose()

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
