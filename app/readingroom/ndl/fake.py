"""A loopback fake of NDL Search's SRU endpoint that logs every request it receives.

Serves the project's own canned DC-NDL responses (``canned/``, written by hand in the shape of
real recordings). It handles requests on parallel threads on purpose, so a client that sends
two requests at once is *seen* overlapping in :attr:`FakeSru.log`.

Every request is recorded by :class:`~readingroom.core.loopback.RecordingServer` with the
stamps the self-test judges the courtesy floor by, as the NDL would see it (arrival at the
accept, ``answered`` just before the one write, ``finished`` after it).

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

import time
from email.utils import formatdate
from importlib import resources

from ..core.loopback import Answer, RecordingServer, Request, RequestRecord

__all__ = ["FakeSru", "RequestRecord", "canned"]

SLOW_S = 3.0


def canned(name: str) -> bytes:
    """A canned response body shipped with the package."""
    return resources.files("readingroom.ndl").joinpath("canned", name).read_bytes()


_HTML = (
    b"<!DOCTYPE html><html><head><title>Maintenance</title></head>"
    b"<body><h1>Service temporarily unavailable</h1></body></html>"
)


class FakeSru(RecordingServer):
    """Run with ``with FakeSru(latency=0.05) as fake: fake.url``.

    Args:
        latency: seconds each answer waits before it is written (the upstream's work).
        slow_seconds: the extra wait of a ``__slow__`` query.
    """

    def __init__(self, latency: float = 0.0, *, slow_seconds: float = SLOW_S) -> None:
        super().__init__()
        self.latency = latency
        self.slow_seconds = slow_seconds
        self._seen: set[str] = set()

    @property
    def url(self) -> str:
        """The SRU endpoint, for NDL_SRU_URL."""
        return f"{self.origin}/api/sru"

    def answer(self, request: Request) -> Answer:
        """The canned answer the query's magic word chooses, after the latency."""
        query = request.params.get("query", "")
        status, headers, body = self._choose(query)
        delay = self.latency + (self.slow_seconds if "__slow__" in query else 0.0)
        return Answer(status, headers, body, delay)

    def _choose(self, query: str) -> tuple[int, dict[str, str], bytes]:
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
