"""A loopback fake of NDL Search's SRU endpoint that logs every request it receives.

Serves the project's own canned DC-NDL responses (``canned/``, written by hand in the shape of
real recordings). It handles requests on parallel threads on purpose, so a client that sends
two requests at once is *seen* overlapping in :attr:`FakeSru.log`.

Timing is taken where an upstream would see it, so the self-test judges the courtesy floor as
the NDL would:

- **arrival**: stamped when the fake accepts the connection, before a byte of the request is
  read. The fake speaks HTTP/1.0 and closes every connection after one response, so every
  request is its own connection and the accept is the earliest moment it can be seen (stamping
  per request line read would be later, after the thread was scheduled and the line parsed).
- **answered**: stamped just before the response is handed to the socket in one write. The
  client cannot have read the response before that moment, so a client keeping the floor from
  the end of its exchange shows here as at least the floor, race-free; a stamp taken after the
  write could land after the client already had the whole response (the thread may be
  preempted in between) and fail an honest client on a busy machine.
- **finished**: after the write; a request arriving before it overlapped this one.

Behaviour is chosen by magic words in the CQL, so tests and the self-test can reach every path:

==================  ===========================================================
word in the query   answer
==================  ===========================================================
``zassaku``         ``articles.xml`` (any dpid clause naming the article sets)
``__none__``        ``no_records.xml`` ("Record does not exist")
``__syntax__``      ``query_syntax.xml`` ("illegal query syntax")
``__429__``         HTTP 429 with ``Retry-After: 1`` every time
``__429once__``     HTTP 429 the first time this query is seen, then books.xml
``__429date__``     HTTP 429 with an HTTP-date Retry-After (2 s ahead), every time
``__503__``         HTTP 503
``__html__``        HTTP 200 with an HTML maintenance page
``__truncated__``   HTTP 200 with XML cut off mid-record
``__slow__``        books.xml after a 3 s delay
(otherwise)         ``books.xml``
==================  ===========================================================
"""

from __future__ import annotations

import socket
import time
from dataclasses import dataclass
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler
from importlib import resources
from itertools import pairwise
from urllib.parse import parse_qs, urlsplit

from ..core.loopback import LoopbackServer

__all__ = ["FakeSru", "RequestRecord", "canned"]

SLOW_S = 3.0


@dataclass(frozen=True)
class RequestRecord:
    """One request as the fake saw it (monotonic seconds, the same clock as every process)."""

    arrived: float
    """The connection was accepted."""
    answered: float
    """The response was about to be written."""
    finished: float
    """The response had been written."""
    params: dict[str, str]
    status: int


def canned(name: str) -> bytes:
    """A canned response body shipped with the package."""
    return resources.files("readingroom.ndl").joinpath("canned", name).read_bytes()


_HTML = (
    b"<!DOCTYPE html><html><head><title>Maintenance</title></head>"
    b"<body><h1>Service temporarily unavailable</h1></body></html>"
)


class FakeSru(LoopbackServer):
    """Run with ``with FakeSru(latency=0.05) as fake: fake.url``.

    Args:
        latency: seconds each answer waits before it is written (the upstream's work).
        slow_seconds: the extra wait of a ``__slow__`` query.
    """

    def __init__(self, latency: float = 0.0, *, slow_seconds: float = SLOW_S) -> None:
        super().__init__()
        self.latency = latency
        self.slow_seconds = slow_seconds
        self._log: list[RequestRecord] = []
        self._seen: set[str] = set()
        self._in_flight = 0
        self.max_in_flight = 0

    @property
    def url(self) -> str:
        """The SRU endpoint, for NDL_SRU_URL."""
        return f"{self.origin}/api/sru"

    @property
    def log(self) -> list[RequestRecord]:
        """A copy of the request log, in order of arrival."""
        with self._lock:
            return sorted(self._log, key=lambda r: r.arrived)

    # ---------------------------------------------------------------- checks
    def overlaps(self) -> int:
        """How many requests arrived before the previous one had been answered."""
        log = self.log
        return sum(1 for a, b in pairwise(log) if b.arrived < a.finished)

    def gaps(self) -> list[float]:
        """Seconds between consecutive arrivals."""
        log = self.log
        return [b.arrived - a.arrived for a, b in pairwise(log)]

    def floor_gaps(self) -> list[float]:
        """Seconds from each answer to the next arrival: the courtesy floor as kept here."""
        log = self.log
        return [b.arrived - a.answered for a, b in pairwise(log)]

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
        params = {k: v[0] for k, v in parse_qs(urlsplit(req.path).query).items()}
        status, headers, body = self._choose(params)
        delay = self.latency + (self.slow_seconds if "__slow__" in params.get("query", "")
                                else 0.0)
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
                self._log.append(RequestRecord(arrived, answered, time.monotonic(), params,
                                               status))

    def _choose(self, params: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        query = params.get("query", "")
        xml = {"Content-Type": "text/xml; charset=UTF-8"}
        if "__429once__" in query:
            with self._lock:
                first = query not in self._seen
                self._seen.add(query)
            if first:
                return 429, {"Retry-After": "1"}, b""
            return 200, xml, canned("books.xml")
        if "__429date__" in query:
            return 429, {"Retry-After": formatdate(time.time() + 2, usegmt=True)}, b""
        if "__429__" in query:
            return 429, {"Retry-After": "1"}, b""
        if "__503__" in query:
            return 503, {"Content-Type": "text/plain"}, b"Service Unavailable"
        if "__html__" in query:
            return 200, {"Content-Type": "text/html; charset=UTF-8"}, _HTML
        if "__none__" in query:
            return 200, xml, canned("no_records.xml")
        if "__syntax__" in query:
            return 200, xml, canned("query_syntax.xml")
        if "__truncated__" in query:
            body = canned("books.xml")
            return 200, xml, body[: len(body) // 2]
        if "zassaku" in query:
            return 200, xml, canned("articles.xml")
        return 200, xml, canned("books.xml")
