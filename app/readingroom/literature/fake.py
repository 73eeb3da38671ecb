"""A loopback fake of all seven literature providers: one port per real host, logging every request.

Serves the project's own canned responses (``canned/``, written by hand in the shape of the
real recordings). Like the real services, the providers sit on six hosts — Europe PMC and
bioRxiv share one, as both are Europe PMC's REST service at EBI — each its own loopback port;
each provider keeps its own path prefix there. :meth:`FakeProviders.env` gives the base-URL
variables that point the server at it:

===================  =========  ==========================  ================================
prefix               host       variable                    paths
===================  =========  ==========================  ================================
``/pubmed``          ``ncbi``   ``PUBMED_EUTILS_URL``       ``esearch.fcgi``, ``efetch.fcgi``
``/europepmc``       ``ebi``    ``EUROPEPMC_URL``           ``search``, ``{PMCID}/fullTextXML``
``/biorxiv``         ``ebi``    ``BIORXIV_URL``             ``search``
``/crossref``        ``crossref``  ``CROSSREF_URL``         ``works``
``/openalex``        ``openalex``  ``OPENALEX_URL``         ``works``
``/semantic-scholar``  ``s2``   ``SEMANTIC_SCHOLAR_URL``    ``graph/v1/paper/search``
``/arxiv``           ``arxiv``  ``ARXIV_URL``               ``api/query``
===================  =========  ==========================  ================================

Behaviour per provider is :attr:`FakeProviders.modes`:

* ``ok``, ``empty``;
* ``rate_limited``: HTTP 429 with ``Retry-After`` from :attr:`FakeProviders.retry_after`
  (``"0"`` unless set) every time;
* ``error``: HTTP 500; ``malformed``: 200 with a body that is not the provider's format;
* ``slow``: the answer after :attr:`slow_seconds`; ``hang``: the connection is accepted and
  never answered (until the fake stops);

or a magic word anywhere in the query string for every provider at once (``__empty__``,
``__429__``, ``__500__``, ``__slow__``). :attr:`FakeProviders.bodies` scripts one answer per
``(provider, path suffix)``: ``(status, headers, body)`` served instead of the canned one
(hand-made faults for the regression tests). Full text: ``PMC9000001`` has a body,
``PMC9000002`` has none, any other PMCID is HTTP 404. Canned answers honour each provider's
paging parameters (``retstart``/``retmax`` and the ``id`` list, ``offset``/``rows``,
``page``/``per-page``, ``offset``/``limit``, ``pageSize``, ``start``/``max_results``), so paging
can be followed end to end.

Each host is a :class:`~readingroom.core.loopback.RecordingServer` writing to one shared
:class:`~readingroom.core.loopback.Journal`: requests are handled on parallel threads (HTTP/1.0,
one request per connection), so a client that overlaps requests is *seen* overlapping;
arrival is stamped at the accept and ``answered`` just before the one write of the response.
"""

from __future__ import annotations

import json
import re
import threading
from importlib import resources

from ..core import loopback
from ..core.loopback import Answer, Journal, RecordingServer, Request, RequestRecord

__all__ = ["HOSTS", "PREFIXES", "FakeProviders", "RequestRecord", "canned"]

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

HOSTS: dict[str, str] = {
    "pubmed": "ncbi",
    "europepmc": "ebi",
    "biorxiv": "ebi",
    "crossref": "crossref",
    "openalex": "openalex",
    "semantic-scholar": "s2",
    "arxiv": "arxiv",
}
"""Provider id → the fake host (one loopback port each) it is served from, as in reality."""

_JSON = {"Content-Type": "application/json;charset=UTF-8"}
_XML = {"Content-Type": "application/xml;charset=UTF-8"}
_ATOM = {"Content-Type": "application/atom+xml; charset=utf-8"}
_FULLTEXT = {"PMC9000001": "fulltext_PMC9000001.xml", "PMC9000002": "fulltext_PMC9000002.xml"}

Canned = tuple[int, dict[str, str], bytes]


def canned(name: str) -> bytes:
    """A canned response body shipped with the package."""
    return resources.files("readingroom.literature").joinpath("canned", name).read_bytes()


class _Host(RecordingServer):
    """One fake host: a loopback port whose requests the :class:`FakeProviders` answers."""

    def __init__(self, owner: FakeProviders, name: str) -> None:
        super().__init__(name=name, journal=owner.journal)
        self.owner = owner

    def answer(self, request: Request) -> Answer:
        """The owner's answer for this request."""
        return self.owner.answer(request)


class FakeProviders:
    """Run with ``with FakeProviders(latency=0.01) as fake: fake.env()``.

    Args:
        latency: seconds every answer waits before it is written (the upstream's work).
        slow_seconds: how long a ``slow`` answer waits.
    """

    def __init__(self, latency: float = 0.0, *, slow_seconds: float = 30.0) -> None:
        self.latency = latency
        self.slow_seconds = slow_seconds
        self.modes: dict[str, str] = {}
        self.retry_after: dict[str, str] = {}
        """Provider → the ``Retry-After`` value its ``rate_limited`` answers carry."""
        self.bodies: dict[tuple[str, str], Canned] = {}
        """``(provider, path suffix)`` → the answer served instead of the canned one."""
        self.journal = Journal()
        self._hosts = {name: _Host(self, name) for name in dict.fromkeys(HOSTS.values())}

    def __enter__(self) -> FakeProviders:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> str:
        """Start every host; returns :attr:`url` (the first host's origin)."""
        for host in self._hosts.values():
            host.start()
        return self.url

    def stop(self) -> None:
        """Stop every host (a ``hang`` answer is released first)."""
        # In parallel: each host's serve loop notices a shutdown only at its next poll.
        stoppers = [threading.Thread(target=host.stop) for host in self._hosts.values()]
        for thread in stoppers:
            thread.start()
        for thread in stoppers:
            thread.join()

    @property
    def url(self) -> str:
        """The origin of the first host (PubMed's)."""
        return next(iter(self._hosts.values())).origin

    def origin(self, provider: str) -> str:
        """``http://127.0.0.1:<port>`` of the host that serves ``provider``."""
        return self._hosts[HOSTS[provider]].origin

    def env(self) -> dict[str, str]:
        """The seven base-URL variables pointing at this fake."""
        return {var: f"{self.origin(prefix)}/{prefix}" for prefix, var in PREFIXES.items()}

    @property
    def log(self) -> list[RequestRecord]:
        """A copy of the request log, in order of arrival."""
        return self.journal.records()

    def requests(self, provider: str) -> list[RequestRecord]:
        """The requests one provider received, in order of arrival."""
        return [r for r in self.log if r.prefix == provider]

    def host_requests(self, host: str) -> list[RequestRecord]:
        """The requests one fake host received (every provider on it), in order of arrival."""
        return [r for r in self.log if r.host == host]

    def start_gaps(self, provider: str) -> list[float]:
        """Seconds between consecutive arrivals at one provider."""
        return loopback.start_gaps(self.requests(provider))

    def floor_gaps(self, provider: str) -> list[float]:
        """Seconds from each answer to the next arrival at one provider (serial pacing)."""
        return loopback.floor_gaps(self.requests(provider))

    def host_start_gaps(self, host: str) -> list[float]:
        """Seconds between consecutive arrivals at one host (every provider on it)."""
        return loopback.start_gaps(self.host_requests(host))

    def host_in_flight(self, host: str) -> int:
        """The most requests one host was serving at once."""
        spans = [(r.arrived, r.finished) for r in self.host_requests(host)]
        return max((sum(1 for s, e in spans if s <= t < e) for t, _ in spans), default=0)

    def host_floor_gaps(self, host: str) -> list[float]:
        """Seconds from each answer to the next arrival at one host."""
        return loopback.floor_gaps(self.host_requests(host))

    def overlaps(self, provider: str) -> int:
        """How many requests to one provider arrived before the previous one had finished."""
        return loopback.overlaps(self.requests(provider))

    def host_overlaps(self, host: str) -> int:
        """How many requests to one host arrived before the previous one had finished."""
        return loopback.overlaps(self.host_requests(host))

    def clear(self) -> None:
        """Forget the log."""
        self.journal.clear()

    # ---------------------------------------------------------------- serving
    def answer(self, request: Request) -> Answer:
        """The answer to one request at any host: scripted, by mode, or canned and paged."""
        status, headers, body, delay = self._answer(request.prefix, request.path,
                                                    request.params, request.query)
        return Answer(status, headers, body, delay if delay == float("inf")
                      else self.latency + delay)

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
        if mode == "hang":
            return 0, {}, b"", float("inf")
        if mode == "rate_limited":
            return 429, {"Retry-After": self.retry_after.get(provider, "0"),
                         "Content-Type": "text/plain"}, b"slow down", 0.0
        if mode == "error":
            return 500, {"Content-Type": "text/html"}, b"<html>Internal error</html>", 0.0
        if mode == "malformed":
            return 200, {"Content-Type": "text/html"}, b"<html>maintenance</html>", 0.0
        delay = self.slow_seconds if mode == "slow" else 0.0
        for (scripted, suffix), answer in self.bodies.items():
            if scripted == provider and rest.endswith(suffix):
                return (*answer, delay)
        status, headers, body = self._canned(provider, rest, params, mode == "empty")
        if status == 200:
            body = _paged(provider, rest, params, body)
        return status, headers, body, delay

    def _canned(self, provider: str, rest: str, params: dict[str, str], empty: bool) -> Canned:
        if provider == "pubmed":
            if rest.endswith("esearch.fcgi"):
                name = "pubmed_esearch_empty.xml" if empty else "pubmed_esearch.xml"
                return 200, _XML, canned(name)
            return 200, _XML, canned("pubmed_efetch.xml")
        if provider == "europepmc" and rest.endswith("/fullTextXML"):
            pmcid = rest.split("/", 1)[0].upper()
            if pmcid in _FULLTEXT:
                return 200, _XML, canned(_FULLTEXT[pmcid])
            return 404, {"Content-Type": "text/plain"}, b"Not Found"
        if provider == "europepmc":
            query = params.get("query", "")
            if params.get("resultType") == "lite":
                hit = "90000001" in query or "10.5555/rr.2024.0001" in query.lower()
                return 200, _JSON, canned("europepmc_resolve.json" if hit
                                          else "europepmc_empty.json")
            return 200, _JSON, canned("europepmc_empty.json" if empty
                                      else "europepmc_search.json")
        table = {
            "biorxiv": ("biorxiv_search.json", "europepmc_empty.json", _JSON),
            "crossref": ("crossref_works.json", "crossref_empty.json", _JSON),
            "openalex": ("openalex_works.json", "openalex_empty.json", _JSON),
            "semantic-scholar": ("semantic_scholar_search.json", "semantic_scholar_empty.json",
                                 _JSON),
            "arxiv": ("arxiv_feed.xml", "arxiv_empty.xml", _ATOM),
        }
        full, none, kind = table[provider]
        return 200, kind, canned(none if empty else full)


def _number(params: dict[str, str], name: str, default: int) -> int:
    value = params.get(name, "")
    return int(value) if value.isdigit() else default


def _paged(provider: str, rest: str, params: dict[str, str], body: bytes) -> bytes:
    """A canned answer cut to the page the request asked for (the fake's own bodies only)."""
    if provider == "pubmed" and rest.endswith("esearch.fcgi"):
        start, size = _number(params, "retstart", 0), _number(params, "retmax", 20)
        ids = re.findall(rb"<Id>[^<]*</Id>\s*", body)
        kept = b"".join(ids[start:start + size])
        return re.sub(rb"<IdList>.*</IdList>", b"<IdList>\n" + kept + b"</IdList>", body,
                      flags=re.S)
    if provider == "pubmed":
        wanted = set(params.get("id", "").split(","))
        def keep(match: re.Match[bytes]) -> bytes:
            pmid = re.search(rb"<PMID[^>]*>([^<]*)</PMID>", match.group(0))
            return match.group(0) if pmid and pmid.group(1).decode() in wanted else b""
        return re.sub(rb"<PubmedArticle>.*?</PubmedArticle>\s*", keep, body, flags=re.S)
    if provider == "arxiv":
        start, size = _number(params, "start", 0), _number(params, "max_results", 10)
        entries = re.findall(rb"<entry>.*?</entry>\s*", body, flags=re.S)
        head = re.split(rb"<entry>|</feed>", body, maxsplit=1)[0]
        return head + b"".join(entries[start:start + size]) + b"</feed>\n"
    if not rest.endswith(("works", "search")):
        return body
    payload = json.loads(body)
    if provider == "crossref":
        start, size = _number(params, "offset", 0), _number(params, "rows", 20)
        items = payload["message"]["items"]
        payload["message"]["items"] = items[start:start + size]
    elif provider == "openalex":
        size = _number(params, "per-page", 25)
        start = (_number(params, "page", 1) - 1) * size
        payload["results"] = payload["results"][start:start + size]
    elif provider == "semantic-scholar":
        start, size = _number(params, "offset", 0), _number(params, "limit", 100)
        payload["data"] = payload.get("data", [])[start:start + size] if "data" in payload \
            else None
        if payload["data"] is None:
            del payload["data"]
    elif provider in ("europepmc", "biorxiv") and "resultList" in payload:
        size = _number(params, "pageSize", 25)
        start = (_number(params, "page", 1) - 1) * size
        result = payload["resultList"]["result"]
        payload["resultList"]["result"] = result[start:start + size]
    return json.dumps(payload, ensure_ascii=False).encode("utf-8")

