"""Test helpers: a recording fake Helveticat over httpx.MockTransport, and sample loading."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import httpx

from readingroom.core.clock import FakeClock
from readingroom.heritage.catalogue import Catalogue
from readingroom.heritage.service import HeritageService
from readingroom.heritage.upstreams.helveticat import HelveticatClient

HAND = Path(__file__).resolve().parents[2] / "fixtures" / "heritage" / "helveticat"
SRU = "https://helveticat.test/view/sru/41SNL_51_INST"
OAI = "https://helveticat.test/view/oai/41SNL_51_INST/request"

Answer = Callable[[httpx.Request], bytes | tuple[int, bytes]]


class FakeHelveticat:
    """Answers each request with what ``answer`` returns; keeps every request it saw."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.requests: list[httpx.Request] = []
        self.transport = httpx.MockTransport(self._handle)

    def _handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        out = self.answer(request)
        status, body = out if isinstance(out, tuple) else (200, out)
        return httpx.Response(status, content=body,
                              headers={"content-type": "text/xml;charset=UTF-8"})

    def params(self, n: int = -1) -> dict[str, str]:
        """The query parameters of request ``n``."""
        return dict(self.requests[n].url.params)


def hand(name: str) -> bytes:
    """A hand-written fixture of tests/fixtures/heritage/helveticat."""
    return (HAND / name).read_bytes()


def service_for(fake: FakeHelveticat, tmp_path: Path | None = None) -> Catalogue:
    """A service over ``fake`` with a fake clock and no receipt ledger (or one in tmp_path)."""
    clock = FakeClock()
    env = {"MCP_RECEIPT_LOG": str(tmp_path / "receipts.jsonl")} if tmp_path else {}
    client = HelveticatClient(sru_url=SRU, oai_url=OAI, transport=fake.transport, clock=clock)
    return Catalogue(client, env=env, clock=clock)


def heritage_for(fake: FakeHelveticat) -> HeritageService:
    """The server's one service with its catalogue over ``fake`` (what the tools are bound to)."""
    catalogue = service_for(fake)
    return HeritageService(env={}, clock=catalogue.clock, catalogue=catalogue)
