"""Issue 18 §2: bounded memory and work, not only bytes.

Before: the GET cache held whole responses, 256 entries of up to 20 MiB each (5 distinct
queries took the server from 347 to 917 MB); a valid 19 MiB body of millions of tiny JSON
containers became ~420 MB of objects, parsed on the event loop (the server answered nothing,
not even ``ping``, for seconds). Now the cache holds parsed pages under a byte budget and
skips large ones; bodies are decoded and parsed off the event loop; and a page may hold only
as much as a page of what was asked for could.
"""

from __future__ import annotations

import time

import anyio
import httpx
import pytest
from tests.literature import conftest as literature_fixtures

from readingroom.core.clock import FakeClock
from readingroom.core.errors import Code
from readingroom.literature.cache import MAX_BYTES, ResultCache
from readingroom.literature.fake import canned
from readingroom.literature.history import History
from readingroom.literature.models import SearchRequest
from readingroom.literature.service import LiteratureService
from readingroom.literature.upstreams.base import Page

fake = literature_fixtures.fake
make_service = literature_fixtures.make_service

pytestmark = pytest.mark.anyio


def test_the_cache_has_a_byte_budget_and_skips_large_pages():
    assert MAX_BYTES <= 32 * 1024 * 1024
    cache = ResultCache(max_bytes=10_000, clock=FakeClock())
    small = Page(records=(), total=0)
    for n in range(50):
        cache.put(("p", str(n)), small, size=900)
    assert cache.bytes <= 10_000 and len(cache) <= 11
    cache.put(("p", "big"), small, size=cache.max_entry_bytes + 1)
    assert cache.get(("p", "big")) is None  # never stored


async def test_five_distinct_searches_stay_under_the_budget(make_service, fake):
    service = make_service()
    for n in range(5):
        await service.search(SearchRequest(query=f"readingroom {n}"))
    assert 0 < service.cache.bytes <= service.cache.max_bytes
    assert all(isinstance(v, Page) for v in service.cache.values())  # parsed, not responses


def _tiny_containers(megabytes: int) -> bytes:
    inner = b"[]," * (megabytes * 1024 * 1024 // 3)
    return b'{"status":"ok","message":{"items":[' + inner + b'[]]}}'


async def test_a_body_of_tiny_containers_is_refused_without_stalling_the_loop(tmp_path):
    body = _tiny_containers(8)

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=body, headers={"Content-Type": "application/json"})

    service = LiteratureService(env={"CROSSREF_URL": "https://crossref.test"}, clock=FakeClock(),
                                transport=httpx.MockTransport(handler),
                                secret_lookup=lambda n: None, history=History(tmp_path))
    gaps: list[float] = []
    done = anyio.Event()

    async def heartbeat() -> None:
        last = time.monotonic()
        while not done.is_set():
            await anyio.sleep(0.01)
            now = time.monotonic()
            gaps.append(now - last)
            last = now

    began = time.monotonic()
    async with anyio.create_task_group() as group:
        group.start_soon(heartbeat)
        env = await service.search(SearchRequest(query="x"), ["crossref"])
        done.set()
    took = time.monotonic() - began
    assert env.error is not None and env.error.code == Code.API_ERROR
    assert "containers" in env.error.message or any(
        "containers" in d.message for d in env.diagnostics)
    assert took < 5.0
    assert max(gaps) < 0.5, f"the event loop stalled {max(gaps):.2f} s"


async def test_an_over_delivering_page_is_read_only_as_far_as_asked(make_service, fake):
    import json

    payload = json.loads(canned("crossref_works.json"))
    items = payload["message"]["items"]
    payload["message"]["items"] = [dict(items[0], DOI=f"10.5555/over.{n}") for n in range(500)]
    fake.bodies[("crossref", "works")] = (200, {"Content-Type": "application/json"},
                                          json.dumps(payload).encode())
    env = await make_service().search(SearchRequest(query="readingroom", limit=5), ["crossref"])
    assert env.error is None and len(env.items) == 5
    assert env.result.by_provider["crossref"] == 5
