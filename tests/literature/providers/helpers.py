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
