"""Issue 17 §5: one host, one pace.

Europe PMC and bioRxiv (searched in Europe PMC's preprint index) reach the same host, each
with its own floor; each had its own client, so four concurrent searches put 5 request starts
within 1 s (three a second between them) on that host. Now pacing and concurrency are per
host, shared by every provider that reaches it: EBI's request starts at least 0.5 s apart
(two a second) and at most two in flight, whichever provider sends them.

Timed on a fake clock: the mock upstream takes 0.3 s (fake) to answer, so overlapping requests
would be seen overlapping, and no real time passes.
"""

from __future__ import annotations

from itertools import pairwise

import anyio
import httpx
import pytest

from readingroom.core.clock import FakeClock
from readingroom.literature.fake import canned
from readingroom.literature.history import History
from readingroom.literature.models import SearchRequest
from readingroom.literature.service import LiteratureService
from readingroom.literature.upstreams import biorxiv, europepmc

pytestmark = pytest.mark.anyio

EBI = "https://www.ebi.ac.uk/europepmc/webservices/rest"
ANSWER_S = 0.3


async def test_four_concurrent_searches_keep_one_pace_at_the_shared_host(tmp_path):
    clock = FakeClock()
    spans: list[tuple[float, float]] = []

    async def handler(request: httpx.Request) -> httpx.Response:
        began = clock.monotonic()
        await clock.sleep(ANSWER_S)
        spans.append((began, clock.monotonic()))
        name = "biorxiv_search.json" if "SRC:PPR AND" in request.url.params["query"] \
            else "europepmc_search.json"
        return httpx.Response(200, content=canned(name),
                              headers={"Content-Type": "application/json"})

    service = LiteratureService(env={"EUROPEPMC_URL": EBI, "BIORXIV_URL": EBI}, clock=clock,
                                transport=httpx.MockTransport(handler),
                                secret_lookup=lambda n: None, history=History(tmp_path))

    async def one(query: str) -> None:
        env = await service.search(SearchRequest(query=query), ["europepmc", "biorxiv"])
        assert {str(s.status) for s in env.sources if s.id in ("europepmc", "biorxiv")} \
            == {"ok"}

    async with anyio.create_task_group() as group:
        for n in range(4):
            group.start_soon(one, f"readingroom {n}")
    spans.sort()
    assert len(spans) == 8
    in_flight = max(sum(1 for s, e in spans if s <= t < e) for t, _ in spans)
    assert in_flight <= europepmc.IN_FLIGHT, f"{in_flight} requests at once at one host"
    floor = max(europepmc.MIN_INTERVAL, biorxiv.MIN_INTERVAL)
    starts = [s for s, _ in spans]
    assert min(b - a for a, b in pairwise(starts)) >= floor - 1e-9, starts
    in_one_second = max(sum(1 for t in starts if s <= t < s + 1.0) for s in starts)
    assert in_one_second <= round(1 / floor)


async def test_the_shared_pace_is_shown_by_literature_sources(tmp_path):
    service = LiteratureService(env={"EUROPEPMC_URL": EBI, "BIORXIV_URL": EBI},
                                secret_lookup=lambda n: None, history=History(tmp_path))
    hosts = service.sources().data["hosts"]
    (ebi,) = [h for h in hosts if h["host"] == "www.ebi.ac.uk:443"]
    assert ebi["providers"] == ["europepmc", "biorxiv"]
    assert ebi["min_interval_s"] == 0.5 and ebi["in_flight"] == 2
