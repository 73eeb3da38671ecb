"""The recording loopback server (:mod:`readingroom.core.loopback`): what its log holds when."""

from __future__ import annotations

import socket

from readingroom.core.loopback import Answer, RecordingServer, Request

BIG = 8 << 20
"""An answer larger than any socket buffer: its write cannot end before the client reads it."""


class _Big(RecordingServer):
    def answer(self, request: Request) -> Answer:
        return Answer(200, {"Content-Type": "application/octet-stream"}, b"x" * BIG)


def test_a_request_is_in_the_log_before_its_answer_can_be_read():
    """A client holding the first bytes of its answer finds the request in the log, though the
    server is still writing (a test reading the log after its answer never misses it)."""
    fake = _Big()
    url = fake.start()
    try:
        host, port = url.removeprefix("http://").split("/")[0].split(":")
        with socket.create_connection((host, int(port)), timeout=30) as conn:
            conn.sendall(b"GET /upstream/search?q=whale HTTP/1.0\r\nHost: x\r\n\r\n")
            assert conn.recv(12).startswith(b"HTTP/1.0 200")
            [record] = fake.requests("upstream")
            assert record.path == "search" and record.params == {"q": "whale"}
            assert record.finished == record.answered  # the write has not ended
            received = 12
            while chunk := conn.recv(1 << 20):
                received += len(chunk)
        assert received > BIG
        # The end of file came when the handler closed the connection, after the write ended.
        [done] = fake.requests("upstream")
        assert done.finished > done.answered >= done.arrived
    finally:
        fake.stop()
