"""HeritageService over ``httpx.MockTransport`` serving the real samples, and ``FakeClock``.

Exact requests, the envelope's seed concepts, one loosening marked fuzzy, per-source
statuses, client-side filters, receipts.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from readingroom.core.clock import FakeClock
from readingroom.heritage.service import HeritageService
from readingroom.heritage.sources import SIKART_RESOURCE_ID

pytestmark = pytest.mark.anyio
ENV = {"MCP_RECEIPT_LOG": ""}


class Upstream:
    """Answers by path from a table of (status, body); records every request."""

    def __init__(self, table):
        self.table = table
        self.seen: list[httpx.Request] = []
        self.transport = httpx.MockTransport(self.handle)

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.seen.append(request)
        answer = self.table(request)
        status, body = answer if isinstance(answer, tuple) else (200, answer)
        return httpx.Response(status, content=body if isinstance(body, bytes)
                              else json.dumps(body).encode())


def _service(table, tmp_path: Path | None = None) -> tuple[HeritageService, Upstream]:
    up = Upstream(table)
    env = {"MCP_RECEIPT_LOG": str(tmp_path / "r.jsonl")} if tmp_path else ENV
    return HeritageService(env=env, transport=up.transport, clock=FakeClock(),
                           jitter=lambda: 0.5), up


def _sample(samples: Path, name: str) -> bytes:
    return (samples / "heritage" / name).read_bytes()


async def test_artist_search_envelope_and_exact_request(samples: Path, tmp_path: Path):
    body = _sample(samples, "sikart_ckan_datastore_search_giacometti.json")
    service, up = _service(lambda r: body, tmp_path)
    env = await service.search_artists("Giacometti", None, 3, 0, arguments={"query": "x"})
    params = dict(up.seen[0].url.params)
    assert up.seen[0].url.path == "/api/3/action/datastore_search"
    assert params == {"resource_id": SIKART_RESOURCE_ID, "q": "Giacometti", "limit": "3",
                      "offset": "0"}
    r = env.result
    assert r is not None
    assert (r.total, r.returned, r.start, r.has_more, r.match_type) == (12, 3, 1, True, "exact")
    assert env.data is not None and env.data["offset"] == 0 and env.data["next_offset"] == 3
    assert env.sources[0].id == "sik_isea" and "NC-SA" in env.sources[0].licence
    assert env.receipt is not None and env.receipt.deposited


async def test_zero_hits_loosen_once_to_the_longest_word(samples: Path):
    hits = _sample(samples, "sikart_ckan_datastore_search_giacometti.json")
    empty = {"success": True, "result": {"records": [], "total": 0}}

    def table(r: httpx.Request):
        return hits if r.url.params["q"] == "Giacometti" else empty

    service, up = _service(table)
    env = await service.search_artists("Diego Giacometti", None, 5, 0, arguments={})
    assert [r.url.params["q"] for r in up.seen] == ["Diego Giacometti", "Giacometti"]
    assert env.result is not None and env.result.match_type == "fuzzy"
    assert any("loosened" in d.message for d in env.diagnostics)
    service, up = _service(lambda r: empty)
    none = await service.search_artists("Nobody Here", None, 5, 0, arguments={})
    assert none.result is not None and none.result.match_type == "none" and len(up.seen) == 2


async def test_museum_search_keeps_the_organisation_in_fq(samples: Path):
    body = _sample(samples, "snm_ckan_package_search_museum.json")
    service, up = _service(lambda r: body)
    env = await service.search_museum("Museum", None, 5, 0, arguments={})
    assert dict(up.seen[0].url.params)["fq"] == "organization:schweizerisches-nationalmuseum-snm"
    assert env.result is not None and env.result.total == 10 and len(env.items) == 3


async def test_browse_refuses_a_resource_without_datastore(samples: Path):
    package = json.loads(_sample(samples, "snm_ckan_package_search_museum.json"))
    resource = package["result"]["results"][0]["resources"][0]
    service, up = _service(lambda r: {"success": True, "result": resource})
    env = await service.browse_collection(resource["id"], None, 5, 0, arguments={})
    assert env.error is not None and env.error.code == "CAPABILITY_UNAVAILABLE"
    assert env.error.details["download_url"].endswith("Spezialsammlungen.csv")
    assert [r.url.path for r in up.seen] == ["/api/3/action/resource_show"]  # no datastore call


async def test_memory_search_one_source_down_and_client_filters(samples: Path):
    memo = _sample(samples, "memobase_search_zuerich_3of51119.json")

    def table(r: httpx.Request):
        return memo if r.url.host == "api.memobase.ch" else (503, b"down")

    service, up = _service(table)
    env = await service.search_memory("Zürich", "all", 1910, 1950, None, 5, 0, arguments={})
    statuses = {s.id: s.status for s in env.sources}
    assert statuses == {"memobase": "ok", "dodis": "error"} and env.error is None
    assert [i["date"] for i in env.items] == ["1939", "1917"]  # 1909 removed client-side
    assert memo and up.seen[0].headers["accept"] == "application/ld+json"
    dodis_calls = [r for r in up.seen if r.url.host == "beta.dodis.ch"]
    assert len(dodis_calls) == 4 and json.loads(dodis_calls[0].content) == {
        "query": "Zürich", "start": 0, "rows": 5}


async def test_memory_search_total_outage_is_an_error():
    service, _ = _service(lambda r: (503, b"down"))
    env = await service.search_memory("Zürich", "all", None, None, None, 5, 0, arguments={})
    assert env.error is not None and env.error.code == "TRANSPORT_ERROR"
    assert {s.status for s in env.sources} == {"error"}


async def test_cross_search_without_nb_lane_says_so(samples: Path):
    artists = _sample(samples, "sikart_ckan_datastore_search_giacometti.json")
    museum = _sample(samples, "snm_ckan_package_search_museum.json")
    service, _ = _service(lambda r: artists if "datastore" in r.url.path else museum)
    service.publication_search = None  # a build without the National Library's lane
    env = await service.cross_search("Giacometti", ["sik_isea", "snm", "nb", "snm"], 3,
                                     arguments={})
    assert [(s.id, s.status) for s in env.sources] == [
        ("sik_isea", "ok"), ("snm", "ok"), ("helveticat", "skipped")]
    assert any(d.code == "CAPABILITY_UNAVAILABLE" for d in env.diagnostics)
    assert env.data is not None and set(env.data["meta"]["per_source"]) == {
        "sik_isea", "snm", "helveticat"}
