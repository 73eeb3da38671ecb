"""A scripted CiNii Research for the service tests: an ``httpx.MockTransport`` handler over the
canned answers, on a :class:`FakeClock`, that records when each request started and ended."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from readingroom.cinii.fake import RECORDS, canned
from readingroom.cinii.service import CiniiService
from readingroom.core.clock import FakeClock
from readingroom.core.secrets import SecretValue

__all__ = ["APPID", "BASE", "Seen", "Upstream", "service"]

BASE = "https://cinii.test"
APPID = "planted-appid-9c2e41"

Answer = tuple[int, dict[str, str], bytes]


@dataclass
class Seen:
    """One request as the scripted upstream saw it (fake-clock seconds)."""

    started: float
    ended: float
    path: str
    params: dict[str, str]


@dataclass
class Upstream:
    """The handler: a script first (``(path, params) -> answer | None``), else canned."""

    clock: FakeClock
    work: float = 0.25
    script: Callable[[str, dict[str, str]], Answer | None] | None = None
    seen: list[Seen] = field(default_factory=list)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        started = self.clock.monotonic()
        self.clock.advance(self.work)  # the upstream's work takes time on the fake clock
        path = request.url.path
        params = dict(request.url.params)
        answer = self.script(path, params) if self.script else None
        status, headers, body = answer or self._canned(path, params, str(request.url))
        self.seen.append(Seen(started, self.clock.monotonic(), path, params))
        return httpx.Response(status, headers=headers, content=body)

    def _canned(self, path: str, params: dict[str, str], url: str) -> Answer:
        if path.startswith("/crid/"):
            name = RECORDS.get(path.removeprefix("/crid/").removesuffix(".json"))
            if name is None:
                return 404, {}, b"Not Found"
            return 200, {}, canned(name)
        kind = path.removeprefix("/opensearch/v2/")
        data: dict[str, Any] = json.loads(canned(f"{kind}.json"))
        data["@id"] = url  # as CiNii names the request: application id included
        count = int(params.get("count", "20"))
        if "items" in data:
            data["items"] = data["items"][:count]
        return 200, {}, json.dumps(data, ensure_ascii=False).encode()


def service(upstream: Upstream, ledger: Any = None, *, appid: str | None = APPID
            ) -> CiniiService:
    """A service over ``upstream`` with a planted application id (None: no id at all)."""
    env = {"MCP_RECEIPT_LOG": str(ledger)} if ledger is not None else {}
    lookup = (lambda: SecretValue("CINII_APPID", appid, "environment")) if appid else (
        lambda: None)
    return CiniiService(base_url=BASE, transport=httpx.MockTransport(upstream),
                        clock=upstream.clock, env=env, appid_lookup=lookup)
