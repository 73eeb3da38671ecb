"""A loopback fake of NDL Search's SRU endpoint that logs every request it receives.

Serves the project's own canned DC-NDL responses (``canned/``, written by hand in the shape of
real recordings). It handles requests on parallel threads on purpose, so a client that sends
two requests at once is *seen* overlapping in :attr:`FakeSru.log`.

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

import threading
import time
from dataclasses import dataclass
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from itertools import pairwise
from urllib.parse import parse_qs, urlsplit

__all__ = ["FakeSru", "RequestRecord"]


@dataclass(frozen=True)
class RequestRecord:
    """One request as the fake saw it (monotonic seconds of this process)."""

    started: float
    finished: float
    params: dict[str, str]
    status: int


def canned(name: str) -> bytes:
    """A canned response body shipped with the package."""
    return resources.files("readingroom.setup").joinpath("canned", name).read_bytes()


_HTML = (
    b"<!DOCTYPE html><html><head><title>Maintenance</title></head>"
    b"<body><h1>Service temporarily unavailable</h1></body></html>"
)


class FakeSru:
    """Run with ``with FakeSru(latency=0.05) as fake: fake.url``."""

    def __init__(self, latency: float = 0.0) -> None:
        self.latency = latency
        self._lock = threading.Lock()
        self._log: list[RequestRecord] = []
        self._seen: set[str] = set()
        self._in_flight = 0
        self.max_in_flight = 0
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ---------------------------------------------------------------- lifecycle
    def __enter__(self) -> FakeSru:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> str:
        """Start serving on 127.0.0.1 at a free port; returns the endpoint URL."""
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                fake._handle(self)

            def log_message(self, *args: object) -> None:  # keep stderr quiet
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self.url

    def stop(self) -> None:
        """Stop serving."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    @property
    def url(self) -> str:
        """The SRU endpoint, for NDL_SRU_URL."""
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/api/sru"

    @property
    def log(self) -> list[RequestRecord]:
        """A copy of the request log, in order of arrival."""
        with self._lock:
            return sorted(self._log, key=lambda r: r.started)

    # ---------------------------------------------------------------- checks
    def overlaps(self) -> int:
        """How many requests started before the previous one had been answered."""
        log = self.log
        return sum(1 for a, b in pairwise(log) if b.started < a.finished)

    def gaps(self) -> list[float]:
        """Seconds between consecutive request starts."""
        log = self.log
        return [b.started - a.started for a, b in pairwise(log)]

    # ---------------------------------------------------------------- serving
    def _handle(self, req: BaseHTTPRequestHandler) -> None:
        started = time.monotonic()
        with self._lock:
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
        params = {k: v[0] for k, v in parse_qs(urlsplit(req.path).query).items()}
        status, headers, body = self._choose(params)
        delay = self.latency + (3.0 if "__slow__" in params.get("query", "") else 0.0)
        if delay:
            time.sleep(delay)
        try:
            req.send_response(status)
            for k, v in headers.items():
                req.send_header(k, v)
            req.send_header("Content-Length", str(len(body)))
            req.end_headers()
            req.wfile.write(body)
        finally:
            with self._lock:
                self._in_flight -= 1
                self._log.append(RequestRecord(started, time.monotonic(), params, status))

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
