"""A loopback fake of the J-STAGE WebAPI (``service=2`` and ``3``) that logs every request.

Serves the hand-made answers in ``canned/``. It is a
:class:`~readingroom.core.loopback.RecordingServer`: requests are handled on parallel threads
on purpose, so two at once are *seen* overlapping, and each is recorded with the stamps J-STAGE
would see (``arrived`` at the accept, ``answered`` just before the one write, ``finished``
after it).

The endpoint is ``/searchapi/do``. ``service=2`` answers ``volumes.xml``; ``service=3``
answers ``articles.xml``, or ``issue.xml`` for a ``cdjournal`` with a ``vol`` (the DOI lookup),
or ``err001.xml`` for the ``cdjournal`` ``nosuch``. At most ``count`` entries are returned.
Magic words in any parameter:

==================  ===========================================================
word                answer
==================  ===========================================================
``__none__``        ``zero.xml`` (a count of 0, one empty ``<entry/>``)
``__err001__``      ``err001.xml``; ``__err003__``, ``__err004__``, ``__sys009__``,
                    ``__warn002__`` likewise
``__429__``         HTTP 429 with ``Retry-After: 1`` every time
``__429once__``     HTTP 429 the first time this query is seen, then the answer
``__503__``         HTTP 503 every time
``__html__``        HTTP 200 with an HTML maintenance page
``__truncated__``   HTTP 200 with the XML cut in half
``__slow__``        the answer after :attr:`FakeJstage.slow_seconds`
==================  ===========================================================

:attr:`FakeJstage.script` lets a test put any answer on the wire: ``(params) -> (status,
headers, body) | None``, asked first.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from importlib import resources
from urllib.parse import urlencode
from xml.sax.saxutils import escape

from ..core.loopback import Answer, RecordingServer, Request, RequestRecord

__all__ = ["FakeJstage", "Reply", "RequestRecord", "Script", "canned", "canned_answer"]

Reply = tuple[int, dict[str, str], bytes]
"""(status, headers, body) of one answer."""
Script = Callable[[dict[str, str]], "Reply | None"]
"""(query parameters) → an answer, or None for the canned one."""
SLOW_S = 3.0
_XML = {"Content-Type": "application/atom+xml;charset=UTF-8"}
_HTML = (b"<!DOCTYPE html><html><head><title>Maintenance</title></head>"
         b"<body><h1>J-STAGE WebAPI is under maintenance</h1></body></html>")
_STATUS_WORDS = {"__err001__": "err001.xml", "__err003__": "err003.xml",
                 "__err004__": "err004.xml", "__sys009__": "sys_err009.xml",
                 "__warn002__": "warn002.xml", "__none__": "zero.xml"}


def canned(name: str) -> bytes:
    """A canned answer shipped with the package."""
    return resources.files("readingroom.jstage").joinpath("canned", name).read_bytes()


class FakeJstage(RecordingServer):
    """Run with ``with FakeJstage(latency=0.05) as fake: fake.url``.

    Args:
        latency: seconds each answer waits before it is written.
        slow_seconds: the extra wait of a ``__slow__`` request.
    """

    def __init__(self, latency: float = 0.0, *, slow_seconds: float = SLOW_S) -> None:
        super().__init__()
        self.latency = latency
        self.slow_seconds = slow_seconds
        self.script: Script | None = None
        self._seen: set[str] = set()
        self._seen_lock = threading.Lock()

    @property
    def url(self) -> str:
        """The WebAPI endpoint, for JSTAGE_API_URL."""
        return f"{self.origin}/searchapi/do"

    def env(self) -> dict[str, str]:
        """The variables that point jstage-mcp here."""
        return {"JSTAGE_API_URL": self.url}

    def answer(self, request: Request) -> Answer:
        """The scripted answer if :attr:`script` gives one, else the canned one."""
        params = request.params
        words = " ".join(params.values())
        status, headers, body = self._choose(request, words)
        delay = self.latency + (self.slow_seconds if "__slow__" in words else 0.0)
        return Answer(status, headers, body, delay)

    def _choose(self, request: Request, words: str) -> Reply:
        params = request.params
        if self.script is not None:
            scripted = self.script(params)
            if scripted is not None:
                return scripted
        if (request.prefix, request.path) != ("searchapi", "do"):
            return 404, {"Content-Type": "text/plain"}, b"Not Found"
        if "__429once__" in words:
            with self._seen_lock:
                first = request.query not in self._seen
                self._seen.add(request.query)
            if first:
                return 429, {"Retry-After": "1"}, b""
        elif "__429__" in words:
            return 429, {"Retry-After": "1"}, b""
        return canned_answer(params, f"{self.url}?{urlencode(params)}")


def canned_answer(params: dict[str, str], request_url: str) -> Reply:
    """The canned answer the fake gives for ``params`` (every magic word but the 429s)."""
    words = " ".join(params.values())
    if "__503__" in words:
        return 503, {"Content-Type": "text/plain"}, b"Service Unavailable"
    if "__html__" in words:
        return 200, {"Content-Type": "text/html; charset=UTF-8"}, _HTML
    name = next((file for word, file in _STATUS_WORDS.items() if word in words), None)
    if name is None:
        if params.get("service") == "2":
            name = "volumes.xml"
        elif params.get("cdjournal") == "nosuch":
            name = "err001.xml"
        elif params.get("cdjournal") and params.get("vol"):
            name = "issue.xml"
        else:
            name = "articles.xml"
    body = _fill(canned(name), request_url, params.get("count", ""))
    if "__truncated__" in words:
        body = body[: len(body) // 2]
    return 200, _XML, body


def _fill(body: bytes, request_url: str, count: str) -> bytes:
    """The request URL in place of ``{request_url}``; at most ``count`` entries."""
    text = body.decode("utf-8").replace("{request_url}", escape(request_url, {'"': "&quot;"}))
    first, last = text.find("  <entry>"), text.rfind("</entry>")
    if count.isdigit() and first != -1 and last != -1:
        end = last + len("</entry>")
        entries = [e for e in text[first:end].split("</entry>") if e.strip()]
        kept = entries[: max(1, int(count))]
        text = text[:first] + "".join(e + "</entry>" for e in kept) + text[end:]
    return text.encode("utf-8")
