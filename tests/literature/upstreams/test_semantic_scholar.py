"""Semantic Scholar: every real sample (zero hits without `data`, 404s), requests, the key."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from readingroom.core.clock import FakeClock
from readingroom.core.errors import Code, CoreError
from readingroom.core.http import redact_headers
from readingroom.literature.models import SearchRequest
from readingroom.literature.upstreams import semantic_scholar as s2
from readingroom.literature.upstreams.base import ProviderSettings

from ...core.samples import sample_table_tests
from .helpers import Client, Recorder, load_json

FOLDER = "literature/semantic-scholar"

# file -> number of records, or the error code parse() raises. The s2py search cassettes ask
# for one or two fields only: without `title` a paper is not a record, and a page of 100 hits
# none of which can be read is an error, never a zero (this provider always asks for titles).
EXPECTED: dict[str, int | Code] = {
    "semanticscholar-py_test_search_paper.json": 100,
    "semanticscholar-py_test_search_paper_open_access_pdf.json": Code.API_ERROR,  # no titles
    "semanticscholar-py_test_search_paper_year_range.json": Code.API_ERROR,  # fields=year
    "semanticscholar-py_test_empty_paginated_results.json": 0,  # {"total": 0, "offset": 0}
    "semanticscholar-py_test_search_paper_match_title.json": 1,
    "semanticscholar-py_test_get_papers_return_not_found.json": 3,  # batch, first entry null
    "semanticscholar-py_test_not_found__0.json": Code.NOT_FOUND,
    "semanticscholar-py_test_not_found__1.json": Code.NOT_FOUND,
}


def _check(path: Path, expected: Any) -> None:
    """One real sample read as its row of EXPECTED says."""
    payload = load_json(path)
    if isinstance(expected, Code):
        with pytest.raises(CoreError) as caught:
            s2.parse(payload)
        assert caught.value.code is expected
        return
    records = s2.parse(payload).records
    assert len(records) == expected
    assert [r.rank for r in records] == list(range(1, expected + 1))
    assert all(r.provider == "semantic-scholar" and r.title and r.provider_id for r in records)


test_every_sample_has_an_expectation, test_every_sample_reads_as_expected = (
    sample_table_tests(FOLDER, EXPECTED, _check))


def test_closed_status_with_url_is_not_evidence(samples: Path) -> None:
    data = load_json(samples / FOLDER / "semanticscholar-py_test_search_paper_open_access_pdf.json")
    verdicts = [s2.open_access_evidence(p).is_open_access for p in data["data"]]
    closed = [p for p in data["data"] if (p.get("openAccessPdf") or {}).get("status") == "CLOSED"]
    assert closed and all(p["openAccessPdf"]["url"] for p in closed)
    assert all(s2.open_access_evidence(p).is_open_access is None for p in closed)
    assert verdicts.count(True) == len(data["data"]) - len(closed)


def test_batch_records_full_fields(samples: Path) -> None:
    records = s2.parse(load_json(samples / FOLDER /
                                 "semanticscholar-py_test_get_papers_return_not_found.json")).records
    first = records[0]
    assert first.title == "How Much Should We Trust Differences-in-Differences Estimates?"
    assert (first.doi, first.year) == ("10.2139/ssrn.288970", 2001)
    assert first.authors == ("Marianne Bertrand", "E. Duflo", "S. Mullainathan")
    assert first.venue == "Experimental & Empirical Studies eJournal"  # venue "" falls back
    assert first.pdf_url == "http://papers.nber.org/papers/w8841.pdf"
    assert first.open_access.source == "oa_pdf"
    third = records[2]
    assert third.pdf_url is None and third.open_access.source == "oa_flag"


def test_upper_case_doi_normalised() -> None:
    [record] = s2.parse({"total": 1, "offset": 0, "data": [{
        "paperId": "p", "title": "T", "externalIds": {"DOI": "10.1093/MIND/LIX.236.433",
                                                      "ArXiv": "2104.12255",
                                                      "PubMedCentral": "5815332"}}]}).records
    assert (record.doi, record.arxiv_id, record.pmcid) == (
        "10.1093/mind/lix.236.433", "2104.12255", "PMC5815332"
    )


def test_params() -> None:
    request = SearchRequest(query="ti:non-linear [tiab] dynamics", limit=5, year_from=1936,
                            open_access=True)
    assert s2.params_for(request) == {
        "query": "non linear dynamics",
        "limit": "5",
        "fields": s2.FIELDS,
        "year": "1936-",
        "openAccessPdf": "",
    }
    assert s2.params_for(SearchRequest(query="x", year_to=1937))["year"] == "-1937"
    assert "year" not in s2.params_for(SearchRequest(query="x"))


@pytest.mark.anyio
async def test_key_header_pacing_and_redaction(samples: Path) -> None:
    body = (samples / FOLDER / "semanticscholar-py_test_empty_paginated_results.json").read_bytes()
    clock = FakeClock()
    recorder = Recorder(lambda r: httpx.Response(200, content=body), clock)
    settings = ProviderSettings(base_url="https://s2.test",
                                values={"SEMANTIC_SCHOLAR_API_KEY": "s2-secret"})
    http = Client(s2.PROVIDER, settings, recorder.transport, clock)
    async with http:
        for _ in range(3):
            page = await s2.PROVIDER.search(http, settings, SearchRequest(query="x"))
            assert page.records == ()
    sent = recorder.requests[0]
    assert sent.url.path == "/graph/v1/paper/search"
    assert sent.headers["x-api-key"] == "s2-secret"
    assert redact_headers(dict(sent.headers))["x-api-key"] != "s2-secret"
    assert http.pacing.serial
    gaps = [b - a for a, b in zip(recorder.times, recorder.times[1:], strict=False)]
    assert all(g >= 1.0 for g in gaps)
    assert "s2-secret" not in repr(http)
