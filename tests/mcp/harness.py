"""Helpers for in-memory ndl-mcp sessions: a scripted upstream and canned responses."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlsplit

import httpx

from readingroom.core.clock import FakeClock
from readingroom.ndl.fake import canned

ENDPOINT = "https://ndl.test/api/sru"


@dataclass
class Upstream:
    """A scripted upstream: ``responder(params, n)`` returns a response; requests are kept."""

    responder: Callable[[dict[str, str], int], httpx.Response]
    requests: list[dict[str, str]] = field(default_factory=list)
    clock: FakeClock = field(default_factory=FakeClock)
    started_at: list[float] = field(default_factory=list)

    def handle(self, request: httpx.Request) -> httpx.Response:
        params = {k: v[0] for k, v in parse_qs(urlsplit(str(request.url)).query).items()}
        self.requests.append(params)
        self.started_at.append(self.clock.monotonic())
        return self.responder(params, len(self.requests))


def xml(name: str, status: int = 200) -> httpx.Response:
    """A canned SRU body as an HTTP response."""
    return httpx.Response(status, content=canned(name),
                          headers={"Content-Type": "text/xml; charset=UTF-8"})


def by_query(params: dict[str, str], _n: int) -> httpx.Response:
    """Books by default, articles for the article sets."""
    return xml("articles.xml" if "zassaku" in params["query"] else "books.xml")


