"""Europe PMC and the bioRxiv provider built on it: every real search sample, requests, one vote."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from readingroom.core.clock import FakeClock
from readingroom.core.errors import Code, CoreError
from readingroom.literature.models import SearchRequest
from readingroom.literature.upstreams import biorxiv, europepmc
from readingroom.literature.upstreams.base import ProviderSettings

from ...core.samples import sample_table_tests
from .helpers import Client, Recorder, load_json

FOLDER = "literature/europepmc"

# file -> (records, with abstract, OA evidence True, with PDF URL), or the error code parse()
# raises. Search answers only: the fullTextXML JATS files (*.xml) in the same folder belong to
# literature_get_fulltext's tests.
EXPECTED: dict[str, tuple[int, int, int, int] | Code] = {
    "pyeuropepmc_search_cancer_core.json": (25, 21, 9, 9),
    "pyeuropepmc_search_cancer.json": (25, 0, 8, 0),  # lite: no abstracts, licences or links
    "pyeuropepmc_search_cancer_page2.json": (5, 0, 0, 0),
    # idlist: ids only, no title to show: 25 hits and no readable record is an error, not a zero
    "pyeuropepmc_search_cancer_idlist.json": Code.API_ERROR,
    "pyeuropepmc_search_no_results.json": (0, 0, 0, 0),
    "openscience_fetch_europepmc.json": (1, 1, 1, 1),  # one core record, envelope restored
}


def _payload(path: Path) -> Any:
    data = load_json(path)
    if "payload" in data:  # OpenScience keeps the one result, one level below the envelope
        return {"hitCount": 1, "resultList": {"result": [data["payload"]]}}
    return data


def _check(path: Path, expected: Any) -> None:
    """One real sample read as its row of EXPECTED says."""
    if isinstance(expected, Code):
        with pytest.raises(CoreError) as caught:
            europepmc.parse(_payload(path))
        assert caught.value.code is expected
        return
    records = europepmc.parse(_payload(path)).records
    counts = (
        len(records),
        sum(1 for r in records if r.abstract),
        sum(1 for r in records if r.open_access.is_open_access),
        sum(1 for r in records if r.pdf_url),
    )
    assert counts == expected
    for rank, record in enumerate(records, start=1):
        assert record.rank == rank and record.provider == "europepmc" and record.title
        assert record.abstract is None or "<h4>" not in record.abstract


test_every_search_sample_has_an_expectation, test_every_search_sample_reads_as_expected = (
    sample_table_tests(FOLDER, EXPECTED, _check, pattern="*.json"))


def test_core_record_fields(samples: Path) -> None:
    records = (
        europepmc.parse(load_json(samples / FOLDER / "pyeuropepmc_search_cancer_core.json"))
    ).records
    first = records[0]
    assert (first.provider_id, first.pmid, first.doi, first.year) == (
        "MED:39709209", "39709209", "10.1016/s0140-6736(24)02600-x", 2025
    )
    assert first.venue == "Lancet (London, England)"
    assert first.authors == ("Jonathan D Schoenfeld", "Daphne A Haas-Kogan", "Allison F O'Neill")
    assert first.open_access.is_open_access is False
    # Free to read (inEPMC Y, availability F) is not open access.
    free = records[1]
    assert free.pmcid == "PMC12124214" and free.open_access.is_open_access is False
    # A licence without the OA flag is evidence, by the seed's rule.
    licensed = records[2]
    assert licensed.open_access.is_open_access is True
    assert (licensed.open_access.licence, licensed.open_access.source) == ("cc by", "licence")
    headed = next(r for r in records if r.abstract and r.abstract.startswith("Objective: "))
    assert "\nDesign: " in (headed.abstract or "")


def test_pdf_prefers_europe_pmc(samples: Path) -> None:
    [record] = (
        europepmc.parse(_payload(samples / FOLDER / "openscience_fetch_europepmc.json"))
    ).records
    assert record.pdf_url == "https://europepmc.org/articles/PMC10508479?pdf=render"
    assert record.pmcid == "PMC10508479"


def test_not_a_search_result_is_refused() -> None:
    with pytest.raises(CoreError) as caught:
        europepmc.parse({"errCode": 500})
    assert caught.value.code is Code.API_ERROR


def test_europepmc_params() -> None:
    request = SearchRequest(query='TITLE:"gene therapy" AND AUTH:smith', limit=7,
                            year_from=2019, year_to=2021, open_access=True)
    assert europepmc.search_params(request) == {
        "query": '(TITLE:"gene therapy" AND AUTH:smith) AND PUB_YEAR:[2019 TO 2021] AND '
        'OPEN_ACCESS:y NOT (SRC:PPR AND (PUBLISHER:"bioRxiv" OR PUBLISHER:"medRxiv"))',
        "format": "json",
        "resultType": "core",
        "pageSize": "7",
    }


def test_biorxiv_params_are_the_complement() -> None:
    request = SearchRequest(query="TITLE:crispr* [tiab]", year_to=2020)
    assert biorxiv.params_for(request) == {
        "query": '(crispr) AND PUB_YEAR:[1000 TO 2020] AND SRC:PPR AND '
        '(PUBLISHER:"bioRxiv" OR PUBLISHER:"medRxiv")',
        "format": "json",
        "resultType": "core",
        "pageSize": "10",
    }
    doi = biorxiv.params_for(SearchRequest(query="https://doi.org/10.1101/2020.01.30.927871"))
    assert doi["query"].startswith('(DOI:"10.1101/2020.01.30.927871") AND SRC:PPR')


def test_one_upstream_one_vote() -> None:
    assert biorxiv.PROVIDER.info.upstream == "europepmc"
    assert europepmc.PROVIDER.info.upstream is None
    assert f"NOT ({biorxiv.SCOPE})" == europepmc.EXCLUDE_BIORXIV


@pytest.mark.anyio
async def test_biorxiv_search_credits_biorxiv(samples: Path) -> None:
    body = (samples / FOLDER / "pyeuropepmc_search_cancer_page2.json").read_bytes()
    recorder = Recorder(lambda r: httpx.Response(200, content=body))
    settings = ProviderSettings(base_url="https://epmc.test/rest/", values={})
    async with Client(biorxiv.PROVIDER, settings, recorder.transport) as http:
        records = (
            await biorxiv.PROVIDER.search(http, settings, SearchRequest(query="cancer"))
        ).records
    assert recorder.requests[0].url.path == "/rest/search"
    assert {r.provider for r in records} == {"biorxiv"} and len(records) == 5


@pytest.mark.anyio
async def test_europepmc_search_and_pacing(samples: Path) -> None:
    body = (samples / FOLDER / "pyeuropepmc_search_no_results.json").read_bytes()
    clock = FakeClock()
    recorder = Recorder(lambda r: httpx.Response(200, content=body), clock)
    settings = ProviderSettings(base_url="https://epmc.test/rest", values={})
    http = Client(europepmc.PROVIDER, settings, recorder.transport, clock)
    async with http:
        for _ in range(3):
            page = await europepmc.PROVIDER.search(http, settings, SearchRequest(query="x"))
            assert page.records == ()
    assert recorder.params()["resultType"] == "core"
    gaps = [b - a for a, b in zip(recorder.times, recorder.times[1:], strict=False)]
    assert all(g >= europepmc.MIN_INTERVAL for g in gaps)
