"""PubMed: esearch/efetch readers on every real sample, the exact requests, pacing, redaction."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from readingroom.core.clock import FakeClock
from readingroom.core.errors import Code, CoreError
from readingroom.literature.identifiers import normalize_doi, normalize_pmid
from readingroom.literature.models import SearchRequest
from readingroom.literature.upstreams import pubmed
from readingroom.literature.upstreams.base import ProviderSettings

from ...core.samples import sample_table_tests
from .helpers import Client, Recorder, load_json

FOLDER = "literature/pubmed"

# file -> what it is and what the reader must make of it:
#   ("esearch", count, number of ids, first id)
#   ("efetch", number of records)
#   ("refused", why) — a real NCBI document this provider never requests; the efetch reader
#   refuses it (API_ERROR) rather than reading nothing from it.
#   ("esummary-json", pmid) — OpenScience's record of one esummary JSON record (no abstract).
EXPECTED: dict[str, tuple[object, ...]] = {
    "biopython_esearch1.xml": ("esearch", 63, 20, "41282813"),
    "biopython_esearch2.xml": ("esearch", 42249, 100, "41297076"),
    "biopython_esearch8.xml": ("esearch", 0, 0, None),
    "biopython_esummary1.xml": ("refused", "esummary has no abstracts; not requested"),
    "biopython_efetch_pmc.xml": ("refused", "PMC JATS: the full-text tool's format"),
    "biopython_pubmed2.xml": ("efetch", 2),
    "biopython_pubmed4.xml": ("efetch", 1),
    "biopython_pubmed6.xml": ("efetch", 1),
    "biopython_pubmed7.xml": ("efetch", 1),
    "openscience_fetch_pubmed.json": ("esummary-json", "10508479"),
}


def _sample(samples: Path, name: str) -> bytes:
    return (samples / FOLDER / name).read_bytes()


def _check(path: Path, expected: Any) -> None:
    """One real sample read as its row of EXPECTED says."""
    kind = expected[0]
    body = path.read_bytes()
    if kind == "esearch":
        result = pubmed.parse_esearch(body)
        assert (result.count, len(result.ids)) == expected[1:3]
        assert (result.ids[0] if result.ids else None) == expected[3]
        assert all(i.isdigit() for i in result.ids)
    elif kind == "efetch":
        records = pubmed.parse(body).records
        assert len(records) == expected[1]
        for rank, record in enumerate(records, start=1):
            assert record.provider == "pubmed" and record.rank == rank
            assert record.title and record.pmid and record.abstract and record.year
            assert record.url == f"https://pubmed.ncbi.nlm.nih.gov/{record.pmid}/"
            assert not re.search(r"</?[A-Za-z]", record.abstract + record.title)
            assert "  " not in record.title
    elif kind == "refused":
        with pytest.raises(CoreError) as caught:
            pubmed.parse(body)
        assert caught.value.code is Code.API_ERROR
    else:
        summary = load_json(path)["payload"]["summary"]
        assert "abstract" not in summary  # why the provider uses efetch, not esummary
        ids = {a["idtype"]: a["value"] for a in summary["articleids"]}
        assert normalize_pmid(ids["pubmed"]) == expected[1]
        # A SICI DOI with angle brackets survives normalisation whole.
        assert normalize_doi(ids["doi"]) == (
            "10.1002/(sici)1097-0215(19991112)83:4<456::aid-ijc4>3.0.co;2-5"
        )


test_every_sample_has_an_expectation, test_every_sample_reads_as_expected = (
    sample_table_tests(FOLDER, EXPECTED, _check))


def test_zero_hits_reports_the_phrase(samples: Path) -> None:
    result = pubmed.parse_esearch(_sample(samples, "biopython_esearch8.xml"))
    assert result.count == 0 and result.ids == ()
    assert result.phrases_not_found == ("abcXYZ",)


def test_two_plain_articles(samples: Path) -> None:
    first, second = pubmed.parse(_sample(samples, "biopython_pubmed2.xml")).records
    assert first.pmid == "11748933" and first.doi == "10.1006/cryo.2001.2328"
    assert first.venue == "Cryobiology" and first.year == 2001
    assert first.title.startswith("Is cryopreservation a homogeneous process?")
    assert "(P < 0.001)" in (first.abstract or "")  # entity decoded
    assert second.pmid == "11700088" and second.pmcid is None


def test_structured_abstract_keeps_labels(samples: Path) -> None:
    [record] = pubmed.parse(_sample(samples, "biopython_pubmed4.xml")).records
    assert record.pmid == "27797938" and record.pmcid == "PMC5442267"
    assert record.doi == "10.1136/gutjnl-2016-312510" and record.year == 2017
    assert record.title == (
        "Leucocyte telomere length, genetic variants at the TERT gene region and risk of "
        "pancreatic cancer."
    )
    lines = (record.abstract or "").split("\n")
    assert lines[0].startswith("OBJECTIVE: Telomere shortening")
    assert any(line.startswith("DESIGN: ") for line in lines)
    assert "r2<0.25" in (record.abstract or "").replace(" ", "")
    assert record.authors[:2] == ("Ying Bao", "Jennifer Prescott")


def test_html_and_mathml_in_title_and_abstract(samples: Path) -> None:
    [record] = pubmed.parse(_sample(samples, "biopython_pubmed6.xml")).records
    assert record.title.startswith('A "Blood Relationship" Between the Overlooked')
    assert "(LEmin)" in (record.abstract or "")


def test_reference_list_ids_are_not_the_articles(samples: Path) -> None:
    body = _sample(samples, "biopython_pubmed7.xml")
    assert body.count(b'IdType="pubmed"') > 10  # the trap is real
    [record] = pubmed.parse(body).records
    assert record.pmid == "29963580"
    assert record.doi == "10.1117/1.jmi.5.2.026002"
    assert record.pmcid == "PMC6022861"


def test_oa_filter_makes_records_oa_evidence(samples: Path) -> None:
    [record] = (
        pubmed.parse(_sample(samples, "biopython_pubmed6.xml"), open_access_filtered=True)
    ).records
    assert record.open_access.is_open_access is True
    [plain] = pubmed.parse(_sample(samples, "biopython_pubmed6.xml")).records
    assert plain.open_access.is_open_access is None


def test_esearch_error_element_is_refused() -> None:
    # Hand-made, after the eSearchResult DTD's ERROR element (no real sample has one).
    body = b"<eSearchResult><ERROR>Invalid query</ERROR></eSearchResult>"
    with pytest.raises(CoreError) as caught:
        pubmed.parse_esearch(body)
    assert caught.value.code is Code.API_ERROR
    assert "Invalid query" not in caught.value.message


# --- requests ---------------------------------------------------------------------------------


def test_esearch_params_minimal() -> None:
    assert pubmed.esearch_params(SearchRequest(query="biopython"), {}) == {
        "db": "pubmed",
        "term": "biopython",
        "retmode": "xml",
        "retmax": "10",
        "sort": "relevance",
        "tool": "literature-search-mcp",
    }


def test_esearch_params_full() -> None:
    request = SearchRequest(
        query="cancer[tiab] AND smith[au]", limit=5, year_from=2019, open_access=True
    )
    values = {"NCBI_TOOL": "mytool", "NCBI_EMAIL": "me@example.org", "NCBI_API_KEY": "k123"}
    assert pubmed.esearch_params(request, values) == {
        "db": "pubmed",
        "term": "(cancer[tiab] AND smith[au]) AND pubmed pmc open access[filter]",
        "retmode": "xml",
        "retmax": "5",
        "sort": "relevance",
        "datetype": "pdat",
        "mindate": "2019",
        "maxdate": "3000",
        "tool": "mytool",
        "email": "me@example.org",
        "api_key": "k123",
    }


def test_blank_settings_are_omitted() -> None:
    params = pubmed.esearch_params(SearchRequest(query="x"), {"NCBI_EMAIL": " ", "NCBI_TOOL": ""})
    assert params["tool"] == "literature-search-mcp" and "email" not in params
    assert "mindate" not in params and "maxdate" not in params


def _settings(**values: str) -> ProviderSettings:
    return ProviderSettings(base_url="https://eutils.test/entrez/eutils", values=values)


@pytest.mark.anyio
async def test_search_is_esearch_then_one_efetch_in_relevance_order(samples: Path) -> None:
    efetch = _sample(samples, "biopython_pubmed2.xml")
    esearch = (
        b"<eSearchResult><Count>2</Count><RetMax>2</RetMax><RetStart>0</RetStart><IdList>"
        b"<Id>11700088</Id><Id>11748933</Id></IdList></eSearchResult>"
    )  # hand-made esearch naming the two PMIDs of the real efetch sample, reversed

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=esearch if "esearch" in request.url.path else efetch)

    clock = FakeClock()
    recorder = Recorder(answer, clock)
    settings = _settings()
    http = Client(pubmed.PROVIDER, settings, recorder.transport, clock)
    async with http:
        records = (
            await pubmed.PROVIDER.search(http, settings, SearchRequest(query="q", limit=2))
        ).records
    assert [r.url.path for r in recorder.requests] == [
        "/entrez/eutils/esearch.fcgi", "/entrez/eutils/efetch.fcgi"
    ]
    assert recorder.params(1) == {
        "db": "pubmed", "id": "11700088,11748933", "retmode": "xml",
        "tool": "literature-search-mcp",
    }
    assert [(r.rank, r.pmid) for r in records] == [(1, "11700088"), (2, "11748933")]
    assert recorder.times[1] - recorder.times[0] >= pubmed.MIN_INTERVAL


@pytest.mark.anyio
async def test_zero_hits_sends_no_efetch(samples: Path) -> None:
    body = _sample(samples, "biopython_esearch8.xml")
    recorder = Recorder(lambda r: httpx.Response(200, content=body))
    settings = _settings()
    async with Client(pubmed.PROVIDER, settings, recorder.transport) as http:
        page = await pubmed.PROVIDER.search(http, settings, SearchRequest(query="q"))
        assert page.records == ()
    assert len(recorder.requests) == 1


@pytest.mark.anyio
@pytest.mark.parametrize(("values", "floor"), [({}, 0.34), ({"NCBI_API_KEY": "k"}, 0.1)])
async def test_pacing_three_or_ten_a_second(values: dict[str, str], floor: float) -> None:
    clock = FakeClock()
    recorder = Recorder(lambda r: httpx.Response(200, content=b"<x/>"), clock)
    http = Client(pubmed.PROVIDER, _settings(**values), recorder.transport, clock)
    async with http:
        for _ in range(4):
            await http.get("https://eutils.test/entrez/eutils/einfo.fcgi")
    gaps = [b - a for a, b in zip(recorder.times, recorder.times[1:], strict=False)]
    assert all(g >= floor - 1e-9 for g in gaps) and min(gaps) < floor + 0.01


@pytest.mark.anyio
async def test_api_key_never_in_an_error() -> None:
    recorder = Recorder(lambda r: httpx.Response(400, content=b"bad"))
    settings = _settings(NCBI_API_KEY="sekret-key-123", NCBI_EMAIL="me@example.org")
    async with Client(pubmed.PROVIDER, settings, recorder.transport) as http:
        with pytest.raises(CoreError) as caught:
            await pubmed.PROVIDER.search(http, settings, SearchRequest(query="q"))
    assert recorder.params()["api_key"] == "sekret-key-123"
    shown = f"{caught.value.message} {caught.value.details}"
    assert "sekret-key-123" not in shown and "me@example.org" not in shown


def test_info() -> None:
    info = pubmed.PROVIDER.info
    assert info.id == "pubmed" and info.url_setting == "PUBMED_EUTILS_URL"
    assert info.native_syntax and info.upstream is None
    assert set(info.optional_settings) == {"NCBI_TOOL", "NCBI_EMAIL", "NCBI_API_KEY"}
