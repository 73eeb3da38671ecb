"""Crossref: every real sample, the two pools, exact requests, the plain-text 404."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from readingroom.core.clock import FakeClock
from readingroom.core.errors import Code, CoreError
from readingroom.literature.models import SearchRequest
from readingroom.literature.upstreams import crossref
from readingroom.literature.upstreams.base import ProviderSettings

from ...core.samples import sample_table_tests
from .helpers import Client, Recorder, load_json

FOLDER = "literature/crossref"

# file -> (records, with abstract, with CC-licence OA evidence)
EXPECTED: dict[str, tuple[int, int, int]] = {
    "habanero_test_works_field_queries.json": (20, 15, 7),
    "habanero_test_works_query.json": (2, 2, 0),
    "habanero_test_works_with_one_id.json": (1, 0, 1),  # single work
    "habanero_test_worksquery_execute.json": (3, 0, 0),  # select=DOI,title,author,published
    "openscience_fetch_crossref.json": (1, 0, 0),  # the `message` of a single work
}


def _payload(path: Path) -> Any:
    data = load_json(path)
    if "payload" in data:
        return {"status": "ok", "message-type": "work", "message": data["payload"]}
    return data


def _check(path: Path, expected: Any) -> None:
    """One real sample read as its row of EXPECTED says."""
    records = crossref.parse(_payload(path)).records
    counts = (
        len(records),
        sum(1 for r in records if r.abstract),
        sum(1 for r in records if r.open_access.is_open_access),
    )
    assert counts == expected
    for rank, record in enumerate(records, start=1):
        assert record.rank == rank and record.doi and record.url == f"https://doi.org/{record.doi}"
        assert record.pdf_url is None  # Crossref links are text-mining links, never trusted
        assert "<" not in record.title and "\n" not in record.title


test_every_sample_has_an_expectation, test_every_sample_reads_as_expected = (
    sample_table_tests(FOLDER, EXPECTED, _check))


def test_field_query_details(samples: Path) -> None:
    records = (
        crossref.parse(load_json(samples / FOLDER / "habanero_test_works_field_queries.json"))
    ).records
    first = records[0]
    assert (first.doi, first.year, first.venue, first.title) == (
        "10.1111/ele.14024", 2022, "Ecology Letters", "The forecast trap"
    )
    assert first.authors[0] == "Carl Boettiger"
    assert (first.abstract or "").startswith("Encouraged by decision makers")  # JATS cleaned
    assert first.open_access.is_open_access is None  # publisher terms are not a licence
    by_doi = {r.doi: r for r in records}
    assert by_doi["10.1101/055319"].open_access.licence == (
        "http://creativecommons.org/licenses/by/4.0/"
    )
    assert by_doi["10.1177/2053951719836258"].venue == "Big Data & Society"
    assert by_doi["10.1111/j.2041-210x.2012.00247.x"].title.startswith("Treebase:")


def test_published_date_when_issued_missing(samples: Path) -> None:
    records = (
        crossref.parse(load_json(samples / FOLDER / "habanero_test_worksquery_execute.json"))
    ).records
    assert [r.year for r in records] == [2022, 2012, 2018]


def test_not_a_message_is_refused() -> None:
    with pytest.raises(CoreError) as caught:
        crossref.parse({"status": "failed", "message-type": "validation-failure", "message": []})
    assert caught.value.code is Code.API_ERROR


def test_params() -> None:
    request = SearchRequest(query="TITLE:ecolog* AND (forecast)", limit=3, year_from=2019,
                            year_to=2021, open_access=True)
    assert crossref.params_for(request, {"CROSSREF_MAILTO": "me@example.org"}) == {
        "query": "ecolog forecast",
        "rows": "3",
        "select": crossref.SELECT,
        "filter": "from-pub-date:2019,until-pub-date:2021-12-31",
        "mailto": "me@example.org",
    }
    assert crossref.params_for(SearchRequest(query="x"), {}) == {
        "query": "x", "rows": "10", "select": crossref.SELECT
    }


def test_query_without_words_is_skipped() -> None:
    with pytest.raises(CoreError) as caught:
        crossref.params_for(SearchRequest(query='"*" AND ()'), {})
    assert caught.value.code is Code.INVALID_INPUT


def _settings(**values: str) -> ProviderSettings:
    return ProviderSettings(base_url="https://crossref.test", values=values)


@pytest.mark.anyio
async def test_public_pool_is_serial_one_a_second(samples: Path) -> None:
    public = crossref.PROVIDER.pacing(_settings())
    assert public.serial and public.min_interval == 1.0 and public.in_flight == 1
    polite = crossref.PROVIDER.pacing(_settings(CROSSREF_MAILTO="me@example.org"))
    assert not polite.serial and polite.min_interval == 0.34 and polite.in_flight == 3
    body = (samples / FOLDER / "habanero_test_works_query.json").read_bytes()
    clock = FakeClock()
    recorder = Recorder(lambda r: httpx.Response(200, content=body), clock)
    settings = _settings()
    async with Client(crossref.PROVIDER, settings, recorder.transport, clock) as h:
        for _ in range(3):
            await crossref.PROVIDER.search(h, settings, SearchRequest(query="ecology"))
    assert recorder.requests[0].url.path == "/works"
    gaps = [b - a for a, b in zip(recorder.times, recorder.times[1:], strict=False)]
    assert all(g >= 1.0 for g in gaps)


@pytest.mark.anyio
async def test_plain_text_404_is_an_api_error() -> None:
    # Crossref's documented 404 body (habanero cassette test_works_bad_id_warn, not copied).
    recorder = Recorder(lambda r: httpx.Response(404, text="Resource not found."))
    settings = _settings()
    async with Client(crossref.PROVIDER, settings, recorder.transport) as http:
        with pytest.raises(CoreError) as caught:
            await crossref.PROVIDER.search(http, settings, SearchRequest(query="x"))
    assert caught.value.code is Code.API_ERROR
