"""One loopback fake of every upstream of swiss-cultural-heritage-mcp, logging each request.

Serves the hand-written ``canned/`` responses. Each upstream lives under its own path prefix;
:meth:`FakeUpstreams.env` gives the variables that point the server at it:

==============  ======================  ==================================================
prefix          variable                paths
==============  ======================  ==================================================
``/ckan``       ``CKAN_API_URL``        ``datastore_search``, ``package_search``,
                                        ``resource_show``
``/sru``        ``HELVETICAT_SRU_URL``  SRU ``searchRetrieve``
``/oai``        ``HELVETICAT_OAI_URL``  ``ListSets``, ``GetRecord``, ``ListRecords``
``/memobase``   ``MEMOBASE_API_URL``    ``/?q=``, ``/record/<id>``
``/dodis``      ``DODIS_API_URL``       ``POST solr/query``, ``solr/full/<id>``
==============  ======================  ==================================================

Magic words anywhere in the query string or body: ``zzz`` (an empty answer, so a search of
two or more words loosens once), ``__500__`` (HTTP 500), ``__429__`` (HTTP 429,
``Retry-After: 0``), ``__slow__`` (the answer after :attr:`slow_seconds`), ``__redirect__``
(HTTP 302 to a host outside the allow-list). :attr:`modes` sets a mode per prefix
(``error``: HTTP 500, retried; ``broken``: an unreadable 200, not retried;
``rate_limited``). Resource ``11111111-…`` has a DataStore, ``66666666-…`` has none, any
other is CKAN's Not Found.

:attr:`script` lets a test put any answer on the wire (the regression tests' scripted faults):
a function ``(prefix, path, params, body) -> (status, headers, bytes) | None`` asked first
for every request; None falls through to the canned answers.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources

from ..core.loopback import Answer, RecordingServer, Request, RequestRecord

__all__ = ["ACTIVE", "INACTIVE", "PREFIXES", "Canned", "FakeUpstreams", "RequestRecord", "Script",
           "canned"]

PREFIXES: dict[str, str] = {
    "ckan": "CKAN_API_URL",
    "sru": "HELVETICAT_SRU_URL",
    "oai": "HELVETICAT_OAI_URL",
    "memobase": "MEMOBASE_API_URL",
    "dodis": "DODIS_API_URL",
}
_JSON = {"Content-Type": "application/json;charset=utf-8"}
_LD = {"Content-Type": "application/ld+json;charset=utf-8"}
_XML = {"Content-Type": "text/xml;charset=UTF-8"}
Canned = tuple[int, dict[str, str], bytes]
"""(status, headers, body) of one scripted answer."""
Script = Callable[[str, str, dict[str, str], str], "Canned | None"]
"""(prefix, path after the prefix, query parameters, request body) → an answer or None."""
ACTIVE = "11111111-2222-3333-4444-555555555555"
INACTIVE = "66666666-7777-8888-9999-000000000000"


def canned(name: str) -> bytes:
    """A canned response body shipped with the package."""
    return resources.files("readingroom.heritage").joinpath("canned", name).read_bytes()


class FakeUpstreams(RecordingServer):
    """Run with ``with FakeUpstreams() as fake: fake.env()``."""

    def __init__(self, *, slow_seconds: float = 30.0) -> None:
        super().__init__()
        self.slow_seconds = slow_seconds
        self.modes: dict[str, str] = {}
        self.script: Script | None = None

    def env(self) -> dict[str, str]:
        """The five base-URL variables pointing at this fake."""
        return {var: f"{self.url}/{prefix}" for prefix, var in PREFIXES.items()}

    def answer(self, request: Request) -> Answer:
        """The scripted answer if :attr:`script` gives one, else the canned one."""
        if self.script is not None:
            scripted = self.script(request.prefix, request.path, request.params, request.body)
            if scripted is not None:
                return Answer(*scripted)
        return Answer(*self._answer(request.prefix, request.path, request.params,
                                    request.words))

    def _answer(self, prefix: str, rest: str, params: dict[str, str],
                raw: str) -> tuple[int, dict[str, str], bytes, float]:
        mode = self.modes.get(prefix, "ok")
        for word, forced in (("__500__", "error"), ("__429__", "rate_limited"),
                             ("__slow__", "slow"), ("__redirect__", "redirect")):
            if word in raw:
                mode = forced
        if prefix not in PREFIXES:
            return 404, {"Content-Type": "text/plain"}, b"not found", 0.0
        if mode == "error":
            return 500, {"Content-Type": "text/html"}, b"<html>Internal error</html>", 0.0
        if mode == "broken":  # answered, but unreadable: an error without retries
            return 200, {"Content-Type": "application/json"}, b'{"success": tru', 0.0
        if mode == "rate_limited":
            return 429, {"Retry-After": "0", "Content-Type": "text/plain"}, b"slow down", 0.0
        if mode == "redirect":
            return 302, {"Location": "https://elsewhere.invalid/trap"}, b"", 0.0
        delay = self.slow_seconds if mode == "slow" else 0.0
        empty = "zzz" in raw.lower()
        if prefix == "ckan":
            return (*self._ckan(rest, params, empty), delay)
        if prefix == "sru":
            return 200, _XML, canned("helveticat_sru_empty.xml" if empty
                                     else "helveticat_sru.xml"), delay
        if prefix == "oai":
            return (*self._oai(params), delay)
        if prefix == "memobase":
            if rest.startswith("record/"):
                if rest.endswith("tst-001-1"):
                    return 200, _LD, canned("memobase_record.json"), delay
                return 404, {"Content-Type": "text/plain"}, b"Not Found", delay
            return 200, _LD, canned("memobase_empty.json" if empty
                                    else "memobase_search.json"), delay
        if rest.startswith("solr/full/"):
            if rest.endswith("G90001"):
                return 200, _JSON, canned("dodis_full.json"), delay
            return 404, {"Content-Type": "text/plain"}, b"Not Found", delay
        return 200, _JSON, canned("dodis_empty.json" if empty else "dodis_query.json"), delay

    def _ckan(self, rest: str, params: dict[str, str], empty: bool) -> Canned:
        if rest == "resource_show":
            rid = params.get("id", "")
            if rid == ACTIVE:
                return 200, _JSON, canned("resource_active.json")
            if rid == INACTIVE:
                return 200, _JSON, canned("resource_inactive.json")
            return 404, _JSON, canned("resource_missing.json")
        if rest == "package_search":
            return 200, _JSON, canned("snm_empty.json" if empty else "snm_packages.json")
        if params.get("resource_id") == ACTIVE:
            return 200, _JSON, canned("snm_rows.json")
        if "filters" in params:
            found = "9900001" in params["filters"]
            return 200, _JSON, canned("sikart_detail.json" if found
                                      else "sikart_detail_empty.json")
        return 200, _JSON, canned("sikart_empty.json" if empty else "sikart_search.json")

    def _oai(self, params: dict[str, str]) -> Canned:
        verb = params.get("verb")
        if verb == "ListSets":
            return 200, _XML, canned("helveticat_oai_listsets.xml")
        if verb == "GetRecord":
            if params.get("identifier", "").endswith("991090000000103976"):
                return 200, _XML, canned("helveticat_oai_getrecord.xml")
            return 200, _XML, canned("helveticat_oai_iddoesnotexist.xml")
        if params.get("resumptionToken"):
            return 200, _XML, canned("helveticat_oai_listrecords_last.xml")
        return 200, _XML, canned("helveticat_oai_listrecords.xml")


