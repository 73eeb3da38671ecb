"""One loopback fake of all seven literature providers, routing by path, logging every request.

Serves the project's own canned responses (``canned/``, written by hand in the shape of the
real recordings). Each provider lives under its own path prefix; :meth:`FakeProviders.env`
gives the base-URL variables that point the server at it:

===================  =========================  ===========================================
prefix               variable                   paths
===================  =========================  ===========================================
``/pubmed``          ``PUBMED_EUTILS_URL``      ``esearch.fcgi``, ``efetch.fcgi``
``/europepmc``       ``EUROPEPMC_URL``          ``search``, ``{PMCID}/fullTextXML``
``/biorxiv``         ``BIORXIV_URL``            ``search``
``/crossref``        ``CROSSREF_URL``           ``works``
``/openalex``        ``OPENALEX_URL``           ``works``
``/semantic-scholar``  ``SEMANTIC_SCHOLAR_URL``  ``graph/v1/paper/search``
``/arxiv``           ``ARXIV_URL``              ``api/query``
===================  =========================  ===========================================

Behaviour per provider is :attr:`FakeProviders.modes` (``ok``, ``empty``, ``rate_limited``:
HTTP 429 with ``Retry-After: 0`` every time, ``error``: HTTP 500, ``malformed``: 200 with a
body that is not the provider's format, ``slow``: the answer after :attr:`slow_seconds`), or a
magic word anywhere in the query string for every provider at once (``__empty__``,
``__429__``, ``__500__``, ``__slow__``). Full text: ``PMC9000001`` has a body,
``PMC9000002`` has none, any other PMCID is HTTP 404.

Requests are handled on parallel threads (HTTP/1.0, one request per connection), so a client
that overlaps requests is *seen* overlapping; arrival is stamped at the accept and
``answered`` just before the one write of the response, as in
:mod:`readingroom.ndl.fake_sru`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from importlib import resources
from itertools import pairwise
from urllib.parse import parse_qsl, unquote, urlsplit

from ..core.loopback import LoopbackServer

__all__ = ["PREFIXES", "FakeProviders", "RequestRecord", "canned"]

PREFIXES: dict[str, str] = {
    "pubmed": "PUBMED_EUTILS_URL",
    "europepmc": "EUROPEPMC_URL",
    "biorxiv": "BIORXIV_URL",
    "crossref": "CROSSREF_URL",
    "openalex": "OPENALEX_URL",
    "semantic-scholar": "SEMANTIC_SCHOLAR_URL",
    "arxiv": "ARXIV_URL",
}
"""Provider id (= path prefix) → the variable of its base URL."""

_JSON = {"Content-Type": "application/json;charset=UTF-8"}
_XML = {"Content-Type": "application/xml;charset=UTF-8"}
_ATOM = {"Content-Type": "application/atom+xml; charset=utf-8"}
_FULLTEXT = {"PMC9000001": "fulltext_PMC9000001.xml", "PMC9000002": "fulltext_PMC9000002.xml"}


@dataclass(frozen=True)
class RequestRecord:
    """One request as the fake saw it (monotonic seconds, the same clock in every process)."""

    provider: str
    path: str
    params: dict[str, str]
    arrived: float
    answered: float
    finished: float
    status: int


def canned(name: str) -> bytes:
    """A canned response body shipped with the package."""
    return resources.files("readingroom.literature").joinpath("canned", name).read_bytes()


class FakeProviders(LoopbackServer):
    """Run with ``with FakeProviders(latency=0.01) as fake: fake.env()``.

    Args:
        latency: seconds every answer waits before it is written (the upstream's work).
        slow_seconds: how long a ``slow`` answer waits.
    """

    def __init__(self, latency: float = 0.0, *, slow_seconds: float = 30.0) -> None:
        super().__init__()
        self.latency = latency
        self.slow_seconds = slow_seconds
        self.modes: dict[str, str] = {}
        self._log: list[RequestRecord] = []

    def env(self) -> dict[str, str]:
        """The seven base-URL variables pointing at this fake."""
        return {var: f"{self.url}/{prefix}" for prefix, var in PREFIXES.items()}

    @property
    def log(self) -> list[RequestRecord]:
        """A copy of the request log, in order of arrival."""
        with self._lock:
            return sorted(self._log, key=lambda r: r.arrived)

    def requests(self, provider: str) -> list[RequestRecord]:
        """The requests one provider received, in order of arrival."""
        return [r for r in self.log if r.provider == provider]

    def start_gaps(self, provider: str) -> list[float]:
        """Seconds between consecutive arrivals at one provider."""
        return [b.arrived - a.arrived for a, b in pairwise(self.requests(provider))]

    def floor_gaps(self, provider: str) -> list[float]:
        """Seconds from each answer to the next arrival at one provider (serial pacing)."""
        return [b.arrived - a.answered for a, b in pairwise(self.requests(provider))]

    def overlaps(self, provider: str) -> int:
        """How many requests to one provider arrived before the previous one had finished."""
        return sum(1 for a, b in pairwise(self.requests(provider)) if b.arrived < a.finished)

    def clear(self) -> None:
        """Forget the log."""
        with self._lock:
            self._log.clear()

    # ---------------------------------------------------------------- serving
    def _handle(self, handler: BaseHTTPRequestHandler, method: str = "GET") -> None:
        arrived = self.arrival(handler.connection)
        split = urlsplit(handler.path)
        parts = split.path.strip("/").split("/", 1)
        provider = parts[0]
        rest = parts[1] if len(parts) > 1 else ""
        params = dict(parse_qsl(split.query, keep_blank_values=True))
        raw = unquote(split.query)
        status, headers, body, delay = self._answer(provider, rest, params, raw)
        time.sleep(self.latency + delay)
        answered = time.monotonic()
        head = [f"HTTP/1.0 {status} {'OK' if status == 200 else 'Error'}",
                f"Content-Length: {len(body)}", "Connection: close",
                *(f"{k}: {v}" for k, v in headers.items())]
        try:
            handler.wfile.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)
            handler.wfile.flush()
        except OSError:  # the client gave up (a cancelled call); the log still counts it
            pass
        finished = time.monotonic()
        with self._lock:
            self._log.append(RequestRecord(provider, rest, params, arrived, answered, finished,
                                           status))

    def _answer(
        self, provider: str, rest: str, params: dict[str, str], raw: str
    ) -> tuple[int, dict[str, str], bytes, float]:
        mode = self.modes.get(provider, "ok")
        for word, forced in (("__empty__", "empty"), ("__429__", "rate_limited"),
                             ("__500__", "error"), ("__slow__", "slow")):
            if word in raw:
                mode = forced
        if provider not in PREFIXES:
            return 404, {"Content-Type": "text/plain"}, b"not found", 0.0
        if mode == "rate_limited":
            return 429, {"Retry-After": "0", "Content-Type": "text/plain"}, b"slow down", 0.0
        if mode == "error":
            return 500, {"Content-Type": "text/html"}, b"<html>Internal error</html>", 0.0
        if mode == "malformed":
            return 200, {"Content-Type": "text/html"}, b"<html>maintenance</html>", 0.0
        delay = self.slow_seconds if mode == "slow" else 0.0
        empty = mode == "empty"
        if provider == "pubmed":
            if rest.endswith("esearch.fcgi"):
                name = "pubmed_esearch_empty.xml" if empty else "pubmed_esearch.xml"
                return 200, _XML, canned(name), delay
            return 200, _XML, canned("pubmed_efetch.xml"), delay
        if provider == "europepmc" and rest.endswith("/fullTextXML"):
            pmcid = rest.split("/", 1)[0].upper()
            if pmcid in _FULLTEXT:
                return 200, _XML, canned(_FULLTEXT[pmcid]), delay
            return 404, {"Content-Type": "text/plain"}, b"Not Found", delay
        if provider == "europepmc":
            query = params.get("query", "")
            if params.get("resultType") == "lite":
                hit = "90000001" in query or "10.5555/rr.2024.0001" in query.lower()
                return 200, _JSON, canned("europepmc_resolve.json" if hit
                                          else "europepmc_empty.json"), delay
            return 200, _JSON, canned("europepmc_empty.json" if empty
                                      else "europepmc_search.json"), delay
        table = {
            "biorxiv": ("biorxiv_search.json", "europepmc_empty.json", _JSON),
            "crossref": ("crossref_works.json", "crossref_empty.json", _JSON),
            "openalex": ("openalex_works.json", "openalex_empty.json", _JSON),
            "semantic-scholar": ("semantic_scholar_search.json", "semantic_scholar_empty.json",
                                 _JSON),
            "arxiv": ("arxiv_feed.xml", "arxiv_empty.xml", _ATOM),
        }
        full, none, kind = table[provider]
        return 200, kind, canned(none if empty else full), delay
