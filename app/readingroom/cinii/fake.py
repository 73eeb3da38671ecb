"""A loopback fake of CiNii Research (OpenSearch v2 and CRID records) that logs every request.

Serves the hand-made answers in ``canned/``. Requests are handled on parallel threads on
purpose, so a client that sends two at once is *seen* overlapping. Timing is taken where CiNii
would see it (as :mod:`readingroom.ndl.fake_sru` does): ``arrived`` when the connection is
accepted (HTTP/1.0, one request per connection), ``answered`` just before the one write of the
response, ``finished`` after it.

Paths: ``/opensearch/v2/<type>`` (``articles``, ``books``, ``dissertations``, ``projects``,
``all``) and ``/crid/<CRID>.json``. A search answer holds at most ``count`` items. The
channel's ``@id`` and ``link`` are the request URL, application id included, as CiNii names the
request. Magic words anywhere in the query string or the path:

==================  ===========================================================
word                answer
==================  ===========================================================
``__none__``        ``zero.json`` (a count of 0)
``__429__``         HTTP 429 with ``Retry-After: 1`` every time
``__429once__``     HTTP 429 the first time this query is seen, then the answer
``__503__``         HTTP 503 every time
``__forbidden__``   HTTP 403 (an application id refused)
``__html__``        HTTP 200 with an HTML maintenance page
``__truncated__``   HTTP 200 with the JSON cut in half
``__slow__``        the answer after :attr:`FakeCinii.slow_seconds`
==================  ===========================================================

A CRID without a canned record is HTTP 404. :attr:`FakeCinii.script` lets a test put any
answer on the wire: ``(path, params) -> (status, headers, body) | None``, asked first.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler
from importlib import resources
from itertools import pairwise
from urllib.parse import parse_qsl, unquote, urlsplit

from ..core.loopback import LoopbackServer

__all__ = ["RECORDS", "Answer", "FakeCinii", "RequestRecord", "Script", "canned"]

Answer = tuple[int, dict[str, str], bytes]
"""(status, headers, body) of one answer."""
Script = Callable[[str, dict[str, str]], "Answer | None"]
"""(path, query parameters) → an answer, or None for the canned one."""

RECORDS = {
    "9990000000000000001": "crid_article.json",
    "9990000000000000011": "crid_book.json",
}
"""The CRIDs with a canned record."""
SLOW_S = 3.0
_JSON = {"Content-Type": "application/json;charset=UTF-8"}
_HTML = (b"<!DOCTYPE html><html><head><title>Maintenance</title></head>"
         b"<body><h1>CiNii Research is under maintenance</h1></body></html>")


def canned(name: str) -> bytes:
    """A canned answer shipped with the package."""
    return resources.files("readingroom.cinii").joinpath("canned", name).read_bytes()


@dataclass(frozen=True)
class RequestRecord:
    """One request as the fake saw it (monotonic seconds)."""

    arrived: float
    answered: float
    finished: float
    path: str
    params: dict[str, str]
    status: int


class FakeCinii(LoopbackServer):
    """Run with ``with FakeCinii(latency=0.05) as fake: fake.url``.

    Args:
        latency: seconds each answer waits before it is written (the upstream's work).
        slow_seconds: the extra wait of a ``__slow__`` request.
    """

    def __init__(self, latency: float = 0.0, *, slow_seconds: float = SLOW_S) -> None:
        super().__init__()
        self.latency = latency
        self.slow_seconds = slow_seconds
        self.script: Script | None = None
        self._log: list[RequestRecord] = []
        self._seen: set[str] = set()
        self._in_flight = 0
        self.max_in_flight = 0

    @property
    def url(self) -> str:
        """The base URL, for CINII_RESEARCH_URL."""
        return self.origin

    def env(self) -> dict[str, str]:
        """The variables that point cinii-mcp here."""
        return {"CINII_RESEARCH_URL": self.url}

    @property
    def log(self) -> list[RequestRecord]:
        """A copy of the request log, in order of arrival."""
        with self._lock:
            return sorted(self._log, key=lambda r: r.arrived)

    def overlaps(self) -> int:
        """How many requests arrived before the previous one had been answered."""
        return sum(1 for a, b in pairwise(self.log) if b.arrived < a.finished)

    def gaps(self) -> list[float]:
        """Seconds between consecutive arrivals."""
        return [b.arrived - a.arrived for a, b in pairwise(self.log)]

    def floor_gaps(self) -> list[float]:
        """Seconds from each answer to the next arrival: the courtesy floor as kept here."""
        return [b.arrived - a.answered for a, b in pairwise(self.log)]

    # ---------------------------------------------------------------- serving
    def _accepted(self, conn: socket.socket) -> None:
        super()._accepted(conn)
        with self._lock:
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)

    def _forget(self, conn: socket.socket) -> float | None:
        arrived = super()._forget(conn)
        if arrived is not None:
            with self._lock:
                self._in_flight -= 1
        return arrived

    def _handle(self, req: BaseHTTPRequestHandler, method: str = "GET") -> None:
        arrived = self.arrival(req.request)
        split = urlsplit(req.path)
        path = unquote(split.path)
        params = dict(parse_qsl(split.query, keep_blank_values=True))
        words = path + " " + " ".join(params.values())
        status, headers, body = self._choose(path, params, words, req.path)
        delay = self.latency + (self.slow_seconds if "__slow__" in words else 0.0)
        if delay:
            time.sleep(delay)
        head = [f"HTTP/1.0 {status} {req.responses.get(status, ('',))[0]}",
                f"Date: {formatdate(usegmt=True)}", "Connection: close",
                f"Content-Length: {len(body)}", *(f"{k}: {v}" for k, v in headers.items())]
        message = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body
        answered = time.monotonic()
        try:
            req.wfile.write(message)
            req.wfile.flush()
        finally:
            with self._lock:
                self._log.append(RequestRecord(arrived, answered, time.monotonic(), path,
                                               params, status))

    def _choose(self, path: str, params: dict[str, str], words: str, raw: str) -> Answer:
        if self.script is not None:
            scripted = self.script(path, params)
            if scripted is not None:
                return scripted
        if "__429once__" in words:
            with self._lock:
                first = raw not in self._seen
                self._seen.add(raw)
            if first:
                return 429, {"Retry-After": "1"}, b""
        elif "__429__" in words:
            return 429, {"Retry-After": "1"}, b""
        if "__503__" in words:
            return 503, {"Content-Type": "text/plain"}, b"Service Unavailable"
        if "__forbidden__" in words:
            return 403, {"Content-Type": "text/plain"}, b"Forbidden"
        if "__html__" in words:
            return 200, {"Content-Type": "text/html; charset=UTF-8"}, _HTML
        if path.startswith("/crid/") and path.endswith(".json"):
            name = RECORDS.get(path[len("/crid/"):-len(".json")])
            if name is None:
                return 404, {"Content-Type": "text/plain"}, b"Not Found"
            return 200, _JSON, canned(name)
        kind = path.removeprefix("/opensearch/v2/")
        if not path.startswith("/opensearch/v2/") or f"{kind}.json" not in _SEARCHES:
            return 404, {"Content-Type": "text/plain"}, b"Not Found"
        body = self._search(kind, params, raw, none="__none__" in words)
        if "__truncated__" in words:
            body = body[: len(body) // 2]
        return 200, _JSON, body

    def _search(self, kind: str, params: dict[str, str], raw: str, *, none: bool) -> bytes:
        data = json.loads(canned("zero.json" if none else f"{kind}.json"))
        request_url = f"{self.origin}{raw}"
        data["@id"] = request_url
        data["link"] = {"@id": request_url}
        count = params.get("count", "20")
        if "items" in data and count.isdigit():
            data["items"] = data["items"][: max(1, int(count))]
            data["opensearch:itemsPerPage"] = len(data["items"])
        return json.dumps(data, ensure_ascii=False).encode("utf-8")


_SEARCHES = frozenset({"articles.json", "books.json", "dissertations.json", "projects.json",
                       "all.json"})
