"""OpenAlex: every real sample, the rebuilt abstract, exact requests, the key kept secret."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from readingroom.core.errors import Code, CoreError
from readingroom.literature.models import SearchRequest
from readingroom.literature.upstreams import openalex
from readingroom.literature.upstreams.base import ProviderSettings

from ...core.samples import sample_table_tests
from .helpers import Client, Recorder, load_json

FOLDER = "literature/openalex"

# file -> [(work id, doi, pmid, pmcid, arxiv id, OA flag)] in rank order
EXPECTED: dict[str, list[tuple[str, str, str | None, str | None, str | None, bool]]] = {
    "paperqa_works_title-search_chemistry-tools_2results.json": [
        ("W4396723768", "10.1038/s42256-024-00832-8", "38799228", None, None, True),
        ("W4365597205", "10.48550/arxiv.2304.05376", None, None, "2304.05376", True),
    ],
    "paperqa_works_title-search_native-oxide_1result.json": [
        ("W2277923667", "10.1063/1.4938384", None, None, None, False),
    ],
    "openalex-python_W2741809807.json": [
        ("W2741809807", "10.7717/peerj.4375", "29456894", "PMC5815332", None, True),
    ],
    # The same work recorded in 2026: ids.pmcid and primary_location.pdf_url are gone.
    "openscience_fetch_openalex.json": [
        ("W2741809807", "10.7717/peerj.4375", "29456894", None, None, True),
    ],
}


def _payload(path: Path) -> Any:
    data = load_json(path)
    return data.get("payload", data)


def _check(path: Path, expected: Any) -> None:
    """One real sample read as its row of EXPECTED says."""
    records = openalex.parse(_payload(path)).records
    got = [
        (r.provider_id, r.doi, r.pmid, r.pmcid, r.arxiv_id, r.open_access.is_open_access)
        for r in records
    ]
    assert got == expected
    for rank, record in enumerate(records, start=1):
        assert record.rank == rank and record.title and record.abstract and record.year


test_every_sample_has_an_expectation, test_every_sample_reads_as_expected = (
    sample_table_tests(FOLDER, EXPECTED, _check))


def test_abstract_rebuilt_in_order(samples: Path) -> None:
    [record] = (
        openalex.parse(_payload(samples / FOLDER / "openalex-python_W2741809807.json"))
    ).records
    assert (record.abstract or "").startswith(
        "Despite growing interest in Open Access (OA) to scholarly literature, there is an unmet"
    )
    assert record.pdf_url == "https://peerj.com/articles/4375.pdf"
    assert record.venue == "PeerJ" and record.year == 2018


def test_rebuild_abstract_edge_cases() -> None:
    assert openalex.rebuild_abstract({"b": [1], "a": [0, 2]}) == "a b a"
    assert openalex.rebuild_abstract(None) is None
    assert openalex.rebuild_abstract({}) is None
    assert openalex.rebuild_abstract({"x": ["1", True, -1]}) is None


def test_not_a_work_list_is_refused() -> None:
    with pytest.raises(CoreError) as caught:
        openalex.parse({"error": "Invalid query parameters error."})
    assert caught.value.code is Code.API_ERROR


def test_params() -> None:
    request = SearchRequest(query="title.search:chemistry, tools", limit=4, year_from=2020,
                            year_to=2024, open_access=True)
    values = {"OPENALEX_API_KEY": "oa-key", "OPENALEX_MAILTO": "me@example.org"}
    assert openalex.params_for(request, values) == {
        "search": "chemistry, tools",
        "per-page": "4",
        "select": openalex.SELECT,
        "filter": "from_publication_date:2020-01-01,to_publication_date:2024-12-31,is_oa:true",
        "api_key": "oa-key",
        "mailto": "me@example.org",
    }
    assert openalex.params_for(SearchRequest(query="x"), {}) == {
        "search": "x", "per-page": "10", "select": openalex.SELECT
    }


@pytest.mark.anyio
async def test_key_in_query_string_never_in_errors() -> None:
    recorder = Recorder(lambda r: httpx.Response(429, headers={"Retry-After": "0"}))
    settings = ProviderSettings(base_url="https://openalex.test",
                                values={"OPENALEX_API_KEY": "oa-secret-77"})
    async with Client(openalex.PROVIDER, settings, recorder.transport) as http:
        with pytest.raises(CoreError) as caught:
            await openalex.PROVIDER.search(http, settings, SearchRequest(query="x"))
    assert caught.value.code is Code.RATE_LIMITED
    assert len(recorder.requests) == 4  # the first attempt and three retries
    assert recorder.params()["api_key"] == "oa-secret-77"
    assert "oa-secret-77" not in f"{caught.value.message} {caught.value.details}"
