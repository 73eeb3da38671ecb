"""arXiv: every real recording (search, id lookups, zero hits, the HTTP 400 error feed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from readingroom.core.clock import FakeClock
from readingroom.core.errors import Code, CoreError
from readingroom.literature.models import SearchRequest
from readingroom.literature.upstreams import arxiv
from readingroom.literature.upstreams.base import ProviderSettings

from ...core.samples import sample_table_tests
from .helpers import Client, Recorder, arxiv_body

FOLDER = "literature/arxiv"

# file -> (HTTP status, [(arxiv id, version)] in order) or (status, error code)
EXPECTED: dict[str, tuple[int, list[tuple[str, str | None]] | Code]] = {
    # ids as the feed's <entry><id> elements give them (read from the recording)
    "arxivpy_q_testing_s0_m10_bc5a6c384fe9.json": (200, [
        ("2202.12139", "v1"), ("2405.13786", "v1"), ("2005.14124", "v2"), ("2204.08348", "v3"),
        ("2302.03287", "v3"), ("1202.4527", "v1"), ("2503.05378", "v2"), ("1205.1866", "v1"),
        ("2502.07719", "v2"), ("1812.11470", "v1"),
    ]),
    "arxivpy_id_1707.08567_s0_m100_6a1afebfc6a3.json": (200, [("1707.08567", "v1")]),
    "arxivpy_id_2104.12255v1_s0_m100_6ae69987ffe1.json": (200, [("2104.12255", "v1")]),
    "arxivpy_id_astro-ph_0601001_s0_m100_3150dca9dc76.json": (200, [("astro-ph/0601001", "v1")]),
    "arxivpy_id_0000.0000_s0_m100_8b51d9633a68.json": (200, []),
    "arxivpy_id_abc_s0_m100_b79c8dcf6bc3.json": (400, Code.API_ERROR),
}


def _check(path: Path, expected: Any) -> None:
    """One real sample read as its row of EXPECTED says."""
    status, body = arxiv_body(path)
    want_status, want = expected
    assert status == want_status
    if isinstance(want, Code):
        with pytest.raises(CoreError) as caught:
            arxiv.parse(body)
        assert caught.value.code is want
        return
    records = arxiv.parse(body).records
    assert [(r.arxiv_id, r.arxiv_version) for r in records] == want
    for rank, record in enumerate(records, start=1):
        assert record.rank == rank and record.title and record.abstract and record.year
        assert "\n" not in (record.abstract or "") and not (record.abstract or "").startswith(" ")
        assert record.open_access.is_open_access is True and record.pdf_url


test_every_sample_has_an_expectation, test_every_sample_reads_as_expected = (
    sample_table_tests(FOLDER, EXPECTED, _check))


def test_search_entry_fields(samples: Path) -> None:
    _, body = arxiv_body(samples / FOLDER / "arxivpy_q_testing_s0_m10_bc5a6c384fe9.json")
    first = arxiv.parse(body).records[0]
    assert first.title.startswith("Testing Deep Learning Models: A First Comparative Study")
    assert first.doi == "10.1109/icstw55395.2022.00035"
    assert first.year == 2022 and first.authors[0] == "Mohit Kumar Ahuja"
    assert first.url == "https://arxiv.org/abs/2202.12139v1"
    assert first.pdf_url == "https://arxiv.org/pdf/2202.12139v1"
    assert (first.venue or "").startswith("Artificial Intelligence in Software Testing")


def test_non_ascii_author_and_old_style_id(samples: Path) -> None:
    _, body = arxiv_body(samples / FOLDER / "arxivpy_id_1707.08567_s0_m100_6a1afebfc6a3.json")
    [record] = arxiv.parse(body).records
    assert len(record.authors) == 34
    assert any(not a.isascii() for a in record.authors)
    _, old = arxiv_body(samples / FOLDER / "arxivpy_id_astro-ph_0601001_s0_m100_3150dca9dc76.json")
    [record] = arxiv.parse(old).records
    assert record.url == "https://arxiv.org/abs/astro-ph/0601001v1"


def test_old_error_feed_with_http_200_is_refused() -> None:
    # Hand-made after OpenScience's note: older arXiv answered errors with HTTP 200 and an
    # entry id under http://arxiv.org/api/errors.
    body = (
        b'<feed xmlns="http://www.w3.org/2005/Atom"><entry>'
        b"<id>http://arxiv.org/api/errors#malformed_query</id><title>Error</title>"
        b"<summary>malformed</summary></entry></feed>"
    )
    with pytest.raises(CoreError) as caught:
        arxiv.parse(body)
    assert caught.value.code is Code.API_ERROR
    assert caught.value.details["reason"] == "malformed_query"


def test_html_instead_of_atom_is_refused() -> None:
    with pytest.raises(CoreError):
        arxiv.parse(b"<!DOCTYPE html><html><body>Rate exceeded</body></html>")


def test_params() -> None:
    assert arxiv.params_for(SearchRequest(query='deep "neural network" testing', limit=3)) == {
        "search_query": 'all:deep AND all:"neural network" AND all:testing',
        "sortBy": "relevance",
        "sortOrder": "descending",
        "start": "0",
        "max_results": "3",
    }
    native = SearchRequest(query="ti:transformer AND cat:cs.CL", year_from=2020, year_to=2021)
    assert arxiv.search_query(native) == (
        "(ti:transformer AND cat:cs.CL) AND submittedDate:[202001010000 TO 202112312359]"
    )


@pytest.mark.anyio
async def test_serial_three_seconds_from_end_to_start(samples: Path) -> None:
    _, body = arxiv_body(samples / FOLDER / "arxivpy_id_0000.0000_s0_m100_8b51d9633a68.json")
    clock = FakeClock()
    recorder = Recorder(lambda r: httpx.Response(200, content=body), clock)
    settings = ProviderSettings(base_url="https://arxiv.test", values={})
    http = Client(arxiv.PROVIDER, settings, recorder.transport, clock)
    assert http.pacing.serial and http.pacing.min_interval == 3.0
    async with http:
        for _ in range(3):
            page = await arxiv.PROVIDER.search(http, settings, SearchRequest(query="x"))
            assert page.records == ()
    assert recorder.requests[0].url.path == "/api/query"
    gaps = [b - a for a, b in zip(recorder.times, recorder.times[1:], strict=False)]
    assert all(g >= 3.0 for g in gaps)
