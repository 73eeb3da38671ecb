"""The loopback HTTP server every self-test fake of the suite is built on.

It serves on 127.0.0.1 at a free port, one HTTP/1.0 request per connection, so the moment the
server *accepts* a connection is that request's arrival: :meth:`LoopbackServer.arrival` gives
it, and a fake compares it with its previous answer to see a courtesy floor as the upstream
sees it. A fake subclasses it and implements :meth:`LoopbackServer._handle`.

:class:`RecordingServer` is the one fake every server of the suite builds on: it reads each
request (method, path prefix, query parameters, body), asks :meth:`RecordingServer.answer` for
an :class:`Answer`, records a :class:`RequestRecord` (before the client can read the answer,
so a test that has its answer finds the request in the log) and writes the answer in one
write. The record has three stamps taken where an upstream would see them:

- **arrived**: when the connection was accepted, before a byte of the request was read (every
  request is its own HTTP/1.0 connection, so the accept is the earliest moment it can be seen);
- **answered**: just before the response is handed to the socket in one write. The client cannot
  have read the response before then, so a client keeping a floor from the end of its exchange
  shows here as at least the floor, race-free on a busy machine;
- **finished**: after the write; a request arriving before it overlapped this one.

Requests are served on parallel threads on purpose, so a client that overlaps requests is
*seen* overlapping. Several servers may share one :class:`Journal` (one fake of several hosts).
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from itertools import pairwise
from typing import Self
from urllib.parse import parse_qsl, unquote, urlsplit

__all__ = ["SHUTDOWN_POLL_S", "Answer", "Journal", "LoopbackServer", "RecordingServer", "Request",
           "RequestRecord", "floor_gaps", "overlaps", "start_gaps"]


SHUTDOWN_POLL_S = 0.02
"""How often a fake's serve loop looks for a stop (the standard library's default is 0.5 s)."""


class LoopbackServer:
    """Start with ``with Fake() as fake: fake.url`` (or :meth:`start` / :meth:`stop`)."""

    request_queue_size = 64
    """Listen backlog: concurrent searches of a self-test must never be refused at connect."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._arrivals: dict[socket.socket, float] = {}
        self._server: ThreadingHTTPServer | None = None

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> str:
        """Start serving on 127.0.0.1 at a free port; returns :attr:`url`."""
        fake = self

        class Handler(BaseHTTPRequestHandler):
            # One request per connection: the arrival stamp of the accept is this request's.
            protocol_version = "HTTP/1.0"

            def do_GET(self) -> None:
                fake._handle(self, "GET")

            def do_POST(self) -> None:
                fake._handle(self, "POST")

            def log_message(self, *args: object) -> None:  # keep stderr quiet
                pass

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            request_queue_size = fake.request_queue_size

            def get_request(self) -> tuple[socket.socket, object]:
                conn, address = super().get_request()
                fake._accepted(conn)
                return conn, address

            def shutdown_request(self, request: socket.socket) -> None:  # type: ignore[override]
                fake._forget(request)
                super().shutdown_request(request)

        self._server = Server(("127.0.0.1", 0), Handler)
        # A short poll: `shutdown()` waits for the serve loop's next poll, and the default
        # half second, paid at every fake's stop, was most of many tests' time.
        threading.Thread(target=self._server.serve_forever, args=(SHUTDOWN_POLL_S,),
                         daemon=True).start()
        return self.url

    def stop(self) -> None:
        """Stop serving."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    @property
    def origin(self) -> str:
        """``http://127.0.0.1:<port>``."""
        assert self._server is not None, "the server is not started"
        host, port = self._server.server_address[:2]
        assert isinstance(host, str)  # AF_INET: (host, port)
        return f"http://{host}:{port}"

    @property
    def url(self) -> str:
        """The URL a server under test is pointed at (the origin unless a fake says more)."""
        return self.origin

    def arrival(self, conn: object) -> float:
        """When the connection of a request was accepted (now, if it is not known)."""
        with self._lock:
            return self._arrivals.get(conn, time.monotonic())  # type: ignore[call-overload]

    def _accepted(self, conn: socket.socket) -> None:
        with self._lock:
            self._arrivals[conn] = time.monotonic()

    def _forget(self, conn: socket.socket) -> float | None:
        with self._lock:
            return self._arrivals.pop(conn, None)

    def _handle(self, handler: BaseHTTPRequestHandler, method: str) -> None:
        raise NotImplementedError


@dataclass(frozen=True)
class Request:
    """One request as a :class:`RecordingServer` read it, before it is answered."""

    method: str
    prefix: str
    """The first segment of the path (a fake of several upstreams puts each under its own)."""
    path: str
    """The rest of the path after the prefix, without a leading slash."""
    params: dict[str, str]
    """The query parameters (the last value of a repeated name; blank values kept)."""
    body: str = ""
    query: str = ""
    """The query string, percent-decoded."""

    @property
    def words(self) -> str:
        """Query string and body together: where a fake looks for its magic words."""
        return self.query + self.body


@dataclass(frozen=True)
class Answer:
    """What a fake answers: status, headers and body, after ``delay`` seconds.

    A ``delay`` of ``inf`` never answers: the connection is held until the server stops.
    """

    status: int
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes = b""
    delay: float = 0.0


@dataclass(frozen=True)
class RequestRecord:
    """One request as the fake saw it (monotonic seconds, the same clock in every process)."""

    method: str
    prefix: str
    path: str
    params: dict[str, str]
    body: str
    arrived: float
    """The connection was accepted."""
    answered: float
    """The response was about to be written."""
    finished: float
    """The response had been written (while it is being written: when the write began)."""
    status: int
    host: str = ""
    """The name of the :class:`RecordingServer` that served it (one fake of several hosts)."""


class Journal:
    """The request log of one fake (one or several servers), safe across serving threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._records: list[RequestRecord] = []

    def add(self, record: RequestRecord) -> None:
        """Record one request."""
        with self._lock:
            self._records.append(record)

    def finish(self, record: RequestRecord, finished: float) -> None:
        """Set when the answer to ``record`` had been written (unless the log was cleared)."""
        with self._lock:
            for n in range(len(self._records) - 1, -1, -1):  # most likely the newest
                if self._records[n] is record:
                    self._records[n] = replace(record, finished=finished)
                    return

    def records(self) -> list[RequestRecord]:
        """A copy of the log, in order of arrival."""
        with self._lock:
            return sorted(self._records, key=lambda r: r.arrived)

    def clear(self) -> None:
        """Forget the log."""
        with self._lock:
            self._records.clear()


def overlaps(records: list[RequestRecord]) -> int:
    """How many of ``records`` arrived before the previous one had finished."""
    return sum(1 for a, b in pairwise(records) if b.arrived < a.finished)


def start_gaps(records: list[RequestRecord]) -> list[float]:
    """Seconds between consecutive arrivals."""
    return [b.arrived - a.arrived for a, b in pairwise(records)]


def floor_gaps(records: list[RequestRecord]) -> list[float]:
    """Seconds from each answer to the next arrival: a courtesy floor as the upstream saw it."""
    return [b.arrived - a.answered for a, b in pairwise(records)]


class RecordingServer(LoopbackServer):
    """A loopback fake that records every request; subclasses implement :meth:`answer`.

    Args:
        name: what its records carry as ``host`` (a fake of several hosts names each).
        journal: the log to write to (default: its own).
    """

    def __init__(self, *, name: str = "", journal: Journal | None = None) -> None:
        super().__init__()
        self.name = name
        self.journal = journal if journal is not None else Journal()
        self._stopped = threading.Event()
        self._in_flight = 0
        self.max_in_flight = 0
        """The most connections it held at once."""

    def answer(self, request: Request) -> Answer:
        """The answer to one request (called on the request's own thread)."""
        raise NotImplementedError

    # ---------------------------------------------------------------- the log
    @property
    def log(self) -> list[RequestRecord]:
        """A copy of the request log, in order of arrival."""
        return self.journal.records()

    def requests(self, prefix: str) -> list[RequestRecord]:
        """The requests under one path prefix, in order of arrival."""
        return [r for r in self.log if r.prefix == prefix]

    def clear(self) -> None:
        """Forget the log."""
        self.journal.clear()

    def overlaps(self) -> int:
        """How many requests arrived before the previous one had been answered."""
        return overlaps(self.log)

    def gaps(self) -> list[float]:
        """Seconds between consecutive arrivals."""
        return start_gaps(self.log)

    def floor_gaps(self) -> list[float]:
        """Seconds from each answer to the next arrival: the courtesy floor as kept here."""
        return floor_gaps(self.log)

    # ---------------------------------------------------------------- serving
    def start(self) -> str:
        """Start serving (a held ``inf`` answer of an earlier run is not held again)."""
        self._stopped.clear()
        return super().start()

    def stop(self) -> None:
        """Release every held answer, then stop serving."""
        self._stopped.set()
        super().stop()

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

    def _handle(self, handler: BaseHTTPRequestHandler, method: str) -> None:
        arrived = self.arrival(handler.connection)
        split = urlsplit(handler.path)
        prefix, _, rest = split.path.strip("/").partition("/")
        length = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(length).decode("utf-8", "replace") if length else ""
        request = Request(method, prefix, rest,
                          dict(parse_qsl(split.query, keep_blank_values=True)), body,
                          unquote(split.query))
        out = self.answer(request)
        if out.delay == float("inf"):
            self._stopped.wait()
            return
        if out.delay:
            time.sleep(out.delay)
        reason = handler.responses.get(out.status, ("",))[0]
        head = [f"HTTP/1.0 {out.status} {reason}", f"Date: {formatdate(usegmt=True)}",
                "Connection: close", f"Content-Length: {len(out.body)}",
                *(f"{k}: {v}" for k, v in out.headers.items())]
        message = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + out.body
        answered = time.monotonic()
        # In the log before the client can read the answer: a test that reads the log once it
        # has its answer must find the request there.
        record = RequestRecord(method, prefix, rest, request.params, body, arrived, answered,
                               answered, out.status, self.name)
        self.journal.add(record)
        try:
            handler.wfile.write(message)
            handler.wfile.flush()
        except OSError:  # the client gave up (a cancelled call); the log still counts it
            pass
        self.journal.finish(record, time.monotonic())
