"""Issue 17 §4: paging a fused search.

Before, ``has_more: true`` had no way to fetch page 2. Now ``literature_search`` answers with a
``next_cursor`` whenever ``has_more`` is true; the cursor carries each provider's offset and the
identifiers already returned, so page 2 continues the fusion (never a record already returned),
a page sends at most one request per provider (no auto-pagination), and paging stops at a
stated depth.

The upstreams are generated here (hand-made answers in each provider's documented shape):
Crossref ranks papers 0-59, Semantic Scholar 30-89, OpenAlex 59 down to 0, so most papers
are found by two providers at different depths, and a paper returned on page 1 through one
provider turns up again on later pages through another.
"""

from __future__ import annotations

import json
from collections import Counter

import httpx
import pytest

from readingroom.core.clock import FakeClock
from readingroom.core.errors import Code
from readingroom.literature.history import History
from readingroom.literature.models import SearchRequest
from readingroom.literature.service import LiteratureService

pytestmark = pytest.mark.anyio

SOURCES = ["crossref", "openalex", "semantic-scholar"]
RANKED = {
    "crossref": list(range(0, 60)),
    "semantic-scholar": list(range(30, 90)),
    "openalex": list(range(59, -1, -1)),
}


def doi(k: int) -> str:
    return f"10.5555/paging.{k}"


def title(k: int) -> str:
    return f"Paging paper number {k} on reading rooms"


class Upstreams:
    def __init__(self, ranked: dict[str, list[int]] | None = None) -> None:
        self.requests: list[httpx.Request] = []
        self.ranked = ranked or RANKED

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        params = request.url.params
        host = request.url.host
        if host == "crossref.test":
            offset, rows = int(params.get("offset", "0")), int(params["rows"])
            papers = self.ranked["crossref"][offset:offset + rows]
            body = {"status": "ok", "message-type": "work-list", "message": {
                "total-results": len(self.ranked["crossref"]),
                "items": [{"DOI": doi(k), "title": [title(k)],
                           "issued": {"date-parts": [[2020]]}} for k in papers]}}
        elif host == "s2.test":
            offset, limit = int(params.get("offset", "0")), int(params["limit"])
            papers = self.ranked["semantic-scholar"][offset:offset + limit]
            body = {"total": len(self.ranked["semantic-scholar"]), "offset": offset,
                    "data": [{"paperId": f"p{k}", "title": title(k), "year": 2020,
                              "externalIds": {"DOI": doi(k).upper()}} for k in papers]}
        else:
            size, page = int(params["per-page"]), int(params.get("page", "1"))
            papers = self.ranked["openalex"][(page - 1) * size:page * size]
            body = {"meta": {"count": len(self.ranked["openalex"])},
                    "results": [{"id": f"https://openalex.org/W{k}",
                                 "doi": f"https://doi.org/{doi(k)}", "title": title(k),
                                 "publication_year": 2020} for k in papers]}
        return httpx.Response(200, json=body)


@pytest.fixture
def upstreams() -> Upstreams:
    return Upstreams()


def make(upstreams: Upstreams, folder) -> LiteratureService:
    env = {"CROSSREF_URL": "https://crossref.test", "OPENALEX_URL": "https://openalex.test",
           "SEMANTIC_SCHOLAR_URL": "https://s2.test"}
    return LiteratureService(env=env, clock=FakeClock(), transport=httpx.MockTransport(upstreams),
                             secret_lookup=lambda n: None, history=History(folder))


@pytest.fixture
def service(upstreams, tmp_path) -> LiteratureService:
    return make(upstreams, tmp_path)


async def page(service, cursor=None, query="reading rooms", limit=10):
    return await service.search(SearchRequest(query=query, limit=limit), SOURCES,
                                cursor=cursor)


async def test_pages_continue_the_fusion_and_never_repeat_a_record(service, upstreams):
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        before = len(upstreams.requests)
        env = await page(service, cursor)
        pages += 1
        assert env.error is None
        sent = Counter(r.url.host for r in upstreams.requests[before:])
        assert all(n == 1 for n in sent.values()), f"page {pages} sent {sent}"  # no auto-paging
        seen += [i["doi"] for i in env.items]
        cursor = (env.data or {}).get("next_cursor")
        assert env.result.has_more is (cursor is not None)
        assert env.result.start == len(seen) - len(env.items) + 1
        if cursor is None:
            break
        assert pages < 30, "paging never ended"
    assert len(seen) == len(set(seen)), "a record was returned twice"
    assert set(seen) == {doi(k) for k in range(90)}  # every paper, under the depth cap
    assert env.data["paging"]["max_records"] >= 90


async def test_page_one_is_the_unpaged_search(service):
    env = await page(service)
    again = await service.search(SearchRequest(query="reading rooms", limit=10), SOURCES)
    assert [i["doi"] for i in env.items] == [i["doi"] for i in again.items]
    assert env.data["paging"]["page"] == 1 and env.data["next_cursor"]


async def test_the_depth_cap_is_stated_and_ends_paging(tmp_path):
    deep = Upstreams({"crossref": list(range(0, 150)), "semantic-scholar": list(range(100, 250)),
                      "openalex": list(range(149, -1, -1))})
    service = make(deep, tmp_path)
    cursor = None
    returned: list[str] = []
    for _ in range(10):
        env = await page(service, cursor, limit=50)
        returned += [i["doi"] for i in env.items]
        cursor = env.data.get("next_cursor")
        if cursor is None:
            break
    cap = env.data["paging"]["max_records"]
    assert len(returned) == cap == len(set(returned))
    assert env.result.has_more is False
    (note,) = [d for d in env.diagnostics if d.code == Code.RESULT_WINDOW_CAPPED]
    assert str(cap) in note.message


async def test_a_cursor_is_refused_for_another_search_and_when_crafted(service, upstreams):
    first = await page(service)
    cursor = first.data["next_cursor"]
    sent = len(upstreams.requests)
    other = await page(service, cursor, query="something else")
    assert other.error is not None and other.error.code == Code.INVALID_INPUT
    for crafted in ("garbage", cursor[:-4] + "AAAA", "eyJ2IjoxfQ", "x" * 300):
        env = await page(service, crafted)
        assert env.error is not None and env.error.code == Code.INVALID_INPUT, crafted
    assert len(upstreams.requests) == sent  # nothing was sent for any of them


async def test_offsets_beyond_the_cap_in_a_crafted_cursor_are_refused(service, upstreams):
    import base64

    first = await page(service)
    raw = first.data["next_cursor"]
    padded = raw + "=" * (-len(raw) % 4)
    state = json.loads(base64.urlsafe_b64decode(padded))
    state["o"] = {p: 10**9 for p in state["o"]}
    forged = base64.urlsafe_b64encode(json.dumps(state).encode()).decode().rstrip("=")
    sent = len(upstreams.requests)
    env = await page(service, forged)
    assert env.error is not None and env.error.code == Code.INVALID_INPUT
    assert len(upstreams.requests) == sent
