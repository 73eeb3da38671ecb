"""Issue 18 §3, as a property: a damaged answer is a valid result or a structured error.

Every canned answer (``literature/canned``) and every real sample answer
(``<samples>/literature/*``) of every provider is damaged in one place by
:mod:`tests.property.mutate` — a wrong type, a null, a huge or negative number, a very deep value,
a missing key, an emptied container, a dropped or renamed element, a truncated body — and
served to the provider as its upstream's answer (over ``httpx.MockTransport``, through the
provider's real request, budgeted client and off-the-loop parse). The answer must be

* a page of readable records (each with a title, ranks in order), or
* a structured error (a ``CoreError`` whose code is not ``INTERNAL_ERROR``);

and when the undamaged answer held records, never an empty page: a fabricated zero. Anything
else raised would reach the fan-out as ``INTERNAL_ERROR``. Full-text samples go through
``literature_get_fulltext`` the same way: ``ok`` within ``max_chars``, or a typed error.

Examples per sample: a quarter of ``READINGROOM_PROPERTY_EXAMPLES`` (:data:`PER_SAMPLE`, 10 by
default, derandomised; CI raises the variable).
Real samples that are not a whole answer are restored as the provider tests restore them (an
OpenScience ``payload`` put back in its envelope); the arXiv recordings are served with their
recorded status; the lists of a real JSON sample are cut to their first four elements
(:func:`_trimmed`), which keeps every shape and makes an example cost milliseconds.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given

from readingroom.core.clock import FakeClock
from readingroom.core.errors import Code, CoreError
from readingroom.core.xmlsafe import strip_doctype
from readingroom.literature.fake import canned
from readingroom.literature.history import History
from readingroom.literature.models import SearchRequest
from readingroom.literature.service import LiteratureService
from readingroom.literature.upstreams import PROVIDERS
from readingroom.literature.upstreams.base import Page, ProviderSettings

from ..conftest import samples_dir
from .mutate import PROPERTY_EXAMPLES, json_mutants, property_settings, xml_mutants

ASKED = 50
"""Records asked of each provider (the tool's maximum): big samples are read as far as asked."""
KEPT = 4
"""Elements kept of each list in a real JSON sample (see :func:`_trimmed`)."""
PER_SAMPLE = max(5, PROPERTY_EXAMPLES // 4)
"""Examples per sample: a quarter of ``READINGROOM_PROPERTY_EXAMPLES`` (10 by default; there
are about sixty samples, so about 600 damaged answers a run; CI raises the variable)."""


@dataclass(frozen=True)
class Sample:
    """One answer to damage: which provider, which of its requests it answers, the body."""

    provider: str
    role: str
    """``search`` (the one request), ``esearch``/``efetch`` (PubMed's two), ``fulltext``."""
    name: str
    body: bytes
    kind: str
    """``json`` or ``xml``."""
    status: int = 200


def _json_body(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode("utf-8")


def _trimmed(value: Any) -> Any:
    """``value`` with every list cut to its first :data:`KEPT` elements.

    A record (or an author, a location) is damaged the same way whether it is the 5th or the
    25th of its list, and the mutator draws list paths from the first three and the last
    element anyway; cutting keeps a 250 KB sample's examples at a few milliseconds each. The
    counts the sample states (``total-results`` 20 …) are left as they are.
    """
    if isinstance(value, list):
        return [_trimmed(v) for v in value[:KEPT]]
    if isinstance(value, dict):
        return {k: _trimmed(v) for k, v in value.items()}
    return value


def _restore(provider: str, data: Any) -> Any:
    """An OpenScience record (one level below its envelope) put back where it came from."""
    if not (isinstance(data, dict) and set(data) == {"id", "payload"}):
        return data
    payload = data["payload"]
    if provider == "crossref":
        return {"status": "ok", "message-type": "work", "message": payload}
    if provider in ("europepmc", "biorxiv"):
        return {"hitCount": 1, "resultList": {"result": [payload]}}
    return payload


def _canned_samples() -> list[Sample]:
    table = [
        ("pubmed", "esearch", "pubmed_esearch.xml"), ("pubmed", "esearch",
                                                      "pubmed_esearch_empty.xml"),
        ("pubmed", "efetch", "pubmed_efetch.xml"),
        ("europepmc", "search", "europepmc_search.json"),
        ("europepmc", "search", "europepmc_empty.json"),
        ("europepmc", "search", "europepmc_resolve.json"),
        ("biorxiv", "search", "biorxiv_search.json"),
        ("crossref", "search", "crossref_works.json"), ("crossref", "search",
                                                        "crossref_empty.json"),
        ("openalex", "search", "openalex_works.json"), ("openalex", "search",
                                                        "openalex_empty.json"),
        ("semantic-scholar", "search", "semantic_scholar_search.json"),
        ("semantic-scholar", "search", "semantic_scholar_empty.json"),
        ("arxiv", "search", "arxiv_feed.xml"), ("arxiv", "search", "arxiv_empty.xml"),
        ("europepmc", "fulltext", "fulltext_PMC9000001.xml"),
        ("europepmc", "fulltext", "fulltext_PMC9000002.xml"),
    ]
    out = []
    for provider, role, name in table:
        body = canned(name)
        kind = "xml" if name.endswith(".xml") else "json"
        if kind == "xml":
            body = strip_doctype(body.decode("utf-8")).encode("utf-8")
        out.append(Sample(provider, role, f"canned/{name}", body, kind))
    return out


def _real_samples() -> list[Sample]:
    root = samples_dir() / "literature"
    if not root.is_dir():
        return []
    folders = {"pubmed": "pubmed", "europepmc": "europepmc", "biorxiv": "biorxiv",
               "crossref": "crossref", "openalex": "openalex",
               "semantic-scholar": "semantic-scholar", "arxiv": "arxiv"}
    out = []
    for provider, folder in folders.items():
        for path in sorted((root / folder).glob("*")):
            if path.suffix == ".xml":
                body = strip_doctype(path.read_text("utf-8")).encode("utf-8")
                if provider == "pubmed":
                    role = "esearch" if b"<eSearchResult" in body else "efetch"
                else:
                    role = "fulltext"
                out.append(Sample(provider, role, f"real/{folder}/{path.name}", body, "xml"))
            elif path.suffix == ".json":
                data = json.loads(path.read_text("utf-8"))
                if provider == "arxiv":  # arxiv.py's recorder: {url, status_code, body}
                    out.append(Sample(provider, "search", f"real/{folder}/{path.name}",
                                      data["body"].encode("latin-1"), "xml",
                                      int(data["status_code"])))
                elif provider == "pubmed":  # an esummary JSON record: served as an esearch
                    out.append(Sample(provider, "esearch", f"real/{folder}/{path.name}",
                                      _json_body(data), "json"))
                else:
                    out.append(Sample(provider, "search", f"real/{folder}/{path.name}",
                                      _json_body(_trimmed(_restore(provider, data))), "json"))
    return out


SAMPLES = _canned_samples() + _real_samples()
SEARCH = [pytest.param(s, id=s.name) for s in SAMPLES if s.role != "fulltext"]
FULLTEXT = [pytest.param(s, id=s.name) for s in SAMPLES if s.role == "fulltext"]


def test_every_provider_and_the_real_samples_are_covered():
    assert {s.provider for s in SAMPLES} == set(PROVIDERS)
    if samples_dir().is_dir():
        real = [s for s in SAMPLES if s.name.startswith("real/")]
        on_disk = [p for p in (samples_dir() / "literature").glob("*/*")
                   if p.suffix in (".json", ".xml")]
        assert len(real) == len(on_disk) > 0


def _mutants(sample: Sample) -> Any:
    if sample.kind == "json":
        original = json.loads(sample.body)
        return json_mutants(original).map(lambda m: (m[0], _json_body(m[1])))
    return xml_mutants(sample.body)


class Upstream:
    """One provider's upstream for a whole property run: one event loop, one host client.

    Each example serves its damaged body for the sample's request (canned answers for
    PubMed's other request) and searches through a fresh budget, so the examples cost a few
    milliseconds each.
    """

    def __init__(self, sample: Sample) -> None:
        from readingroom.literature.host_clients import HostClients

        self.sample = sample
        self.body = sample.body
        self.provider = PROVIDERS[sample.provider]
        self.settings = ProviderSettings(base_url=f"https://{sample.provider}.test/api",
                                         values={})
        self.clock = FakeClock()
        self.hosts = HostClients([(sample.provider, self.settings.base_url,
                                   self.provider.pacing(self.settings))],
                                 clock=self.clock, transport=httpx.MockTransport(self.answer))
        self.runner = asyncio.Runner()

    def answer(self, request: httpx.Request) -> httpx.Response:
        sample = self.sample
        if sample.provider == "pubmed":
            mine = request.url.path.endswith(f"{sample.role}.fcgi")
            other = canned("pubmed_efetch.xml" if sample.role == "esearch"
                           else "pubmed_esearch.xml")
            return httpx.Response(sample.status if mine else 200,
                                  content=self.body if mine else other)
        return httpx.Response(sample.status, content=self.body)

    async def _search(self) -> Page:
        from readingroom.literature.budget import Budget
        from readingroom.literature.host_clients import ProviderHttp

        http = ProviderHttp(self.sample.provider, self.hosts.for_url(self.settings.base_url),
                            Budget(self.clock, 30.0, 10.0), self.clock,
                            self.provider.headers(self.settings))
        return await self.provider.search(http, self.settings,
                                          SearchRequest(query="reading rooms", limit=ASKED))

    def outcome(self, body: bytes) -> Page | CoreError:
        """The provider's page for ``body``, or the typed error it raised."""
        self.body = body
        try:
            return self.runner.run(self._search())
        except CoreError as exc:
            return exc

    def close(self) -> None:
        self.runner.run(self.hosts.aclose())
        self.runner.close()


def _check_page(page: Page, where: str) -> None:
    assert isinstance(page, Page), where
    ranks = [r.rank for r in page.records]
    assert ranks == sorted(ranks) and len(set(ranks)) == len(ranks), where
    for record in page.records:
        assert isinstance(record.title, str) and record.title.strip(), where
        assert record.provider in PROVIDERS, where


@pytest.mark.parametrize("sample", SEARCH)
def test_a_damaged_answer_is_a_page_or_a_structured_error(sample: Sample):
    upstream = Upstream(sample)
    original = upstream.outcome(sample.body)
    held_records = isinstance(original, Page) and bool(original.records)

    @property_settings(PER_SAMPLE)
    @given(_mutants(sample))
    def check(mutant: tuple[str, bytes]) -> None:
        what, body = mutant
        where = f"{sample.name}: {what}"
        got = upstream.outcome(body)
        if isinstance(got, CoreError):
            assert got.code is not Code.INTERNAL_ERROR, where
            assert got.message and isinstance(got.details, dict), where
            return
        _check_page(got, where)
        if held_records:
            assert got.records, f"fabricated zero: {where}"

    try:
        check()
    finally:
        upstream.close()


@pytest.mark.parametrize("sample", FULLTEXT)
def test_a_damaged_article_is_a_bounded_part_or_a_typed_error(sample: Sample):
    served = {"body": sample.body}
    service = LiteratureService(
        env={"EUROPEPMC_URL": "https://epmc.test/rest"}, clock=FakeClock(),
        transport=httpx.MockTransport(lambda r: httpx.Response(200, content=served["body"])),
        secret_lookup=lambda n: None, history=History(Path("/nonexistent/never-written")))
    runner = asyncio.Runner()

    @property_settings(PER_SAMPLE)
    @given(_mutants(sample))
    def check(mutant: tuple[str, bytes]) -> None:
        what, body = mutant
        served["body"] = body
        env = runner.run(service.fulltext(pmcid="PMC9000001", max_chars=2000))
        where = f"{sample.name}: {what}"
        if env.error is not None:
            assert env.error.code in (Code.API_ERROR, Code.NOT_FOUND), where
            return
        data = env.data
        assert data["status"] == "ok" and data["full_text"], where
        assert len(data["full_text"]) <= 2000, where

    try:
        check()
    finally:
        runner.run(service.aclose())
        runner.close()
