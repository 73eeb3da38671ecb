"""The loopback HTTP server every self-test fake of the suite is built on.

It serves on 127.0.0.1 at a free port, one HTTP/1.0 request per connection, so the moment the
server *accepts* a connection is that request's arrival: :meth:`LoopbackServer.arrival` gives
it, and a fake compares it with its previous answer to see a courtesy floor as the upstream
sees it. A fake subclasses it and implements :meth:`LoopbackServer._handle`.
"""

from __future__ import annotations

import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Self

__all__ = ["LoopbackServer"]


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
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
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
