"""A loopback fake of CiNii Research (OpenSearch v2 and CRID records) that logs every request.

Serves the hand-made answers in ``canned/``. It is a
:class:`~readingroom.core.loopback.RecordingServer`: requests are handled on parallel threads
on purpose, so a client that sends two at once is *seen* overlapping, and each is recorded with
the stamps CiNii would see (``arrived`` at the accept, ``answered`` just before the one write,
``finished`` after it). A record's ``prefix`` is ``opensearch`` or ``crid``, its ``path`` the
rest (``v2/articles``, ``<CRID>.json``).

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
import threading
from collections.abc import Callable
from importlib import resources

from ..core.loopback import Answer, RecordingServer, Request, RequestRecord

__all__ = ["RECORDS", "FakeCinii", "RequestRecord", "Script", "canned"]

Reply = tuple[int, dict[str, str], bytes]
"""(status, headers, body) of one scripted answer."""
Script = Callable[[str, dict[str, str]], "Reply | None"]
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
_SEARCHES = frozenset({"articles", "books", "dissertations", "projects", "all"})


def canned(name: str) -> bytes:
    """A canned answer shipped with the package."""
    return resources.files("readingroom.cinii").joinpath("canned", name).read_bytes()


class FakeCinii(RecordingServer):
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
        self._seen: set[tuple[str, str]] = set()
        self._seen_lock = threading.Lock()

    @property
    def url(self) -> str:
        """The base URL, for CINII_RESEARCH_URL."""
        return self.origin

    def env(self) -> dict[str, str]:
        """The variables that point cinii-mcp here."""
        return {"CINII_RESEARCH_URL": self.url}

    def answer(self, request: Request) -> Answer:
        """The scripted answer if :attr:`script` gives one, else the canned one."""
        path = f"/{request.prefix}/{request.path}" if request.path else f"/{request.prefix}"
        words = path + " " + " ".join(request.params.values())
        status, headers, body = self._choose(path, request.params, words, request.query)
        delay = self.latency + (self.slow_seconds if "__slow__" in words else 0.0)
        return Answer(status, headers, body, delay)

    def _choose(self, path: str, params: dict[str, str], words: str, query: str) -> Reply:
        if self.script is not None:
            scripted = self.script(path, params)
            if scripted is not None:
                return scripted
        if "__429once__" in words:
            with self._seen_lock:
                first = (path, query) not in self._seen
                self._seen.add((path, query))
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
        if not path.startswith("/opensearch/v2/") or kind not in _SEARCHES:
            return 404, {"Content-Type": "text/plain"}, b"Not Found"
        body = self._search(kind, params, f"{path}?{query}", none="__none__" in words)
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
