"""Fan-out: one literature search over seven fake providers each answering in 300 ms.

Measures, in one run, each provider searched alone (its own wall time, its own fresh service
so nothing is cached) and then all seven at once; prints the all-seven wall time against the
slowest single provider. Target: ratio <= 1.3 (rate floors aside: PubMed's two requests are
the slowest provider at ~600 ms).

    .venv/bin/python bench/literature_fanout.py [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import anyio

from readingroom.literature.fake import FakeProviders
from readingroom.literature.history import History
from readingroom.literature.models import PROVIDER_ORDER, SearchRequest
from readingroom.literature.service import LiteratureService

LATENCY_S = 0.3


async def timed(fake: FakeProviders, folder: Path, sources: list[str], query: str) -> float:
    service = LiteratureService(env=fake.env(), secret_lookup=lambda n: None,
                                history=History(folder))
    began = time.perf_counter()
    env = await service.search(SearchRequest(query=query), sources)
    took = time.perf_counter() - began
    await service.aclose()
    bad = [s.id for s in env.sources if s.id in sources and str(s.status) != "ok"]
    assert not bad, f"not ok: {bad}"
    return took


async def main(runs: int) -> None:
    with FakeProviders(latency=LATENCY_S) as fake, tempfile.TemporaryDirectory() as tmp:
        solo: dict[str, list[float]] = {p: [] for p in PROVIDER_ORDER}
        together: list[float] = []
        for run in range(runs):
            for provider in PROVIDER_ORDER:
                solo[provider].append(await timed(fake, Path(tmp), [provider], f"q{run}"))
            together.append(await timed(fake, Path(tmp), list(PROVIDER_ORDER), f"all{run}"))
    medians = {p: statistics.median(v) for p, v in solo.items()}
    slowest = max(medians, key=lambda p: medians[p])
    all_seven = statistics.median(together)
    for provider, seconds in medians.items():
        print(f"  {provider:18s} alone {seconds * 1000:7.1f} ms")
    print(f"all seven at once   {all_seven * 1000:7.1f} ms (median of {runs})")
    print(f"slowest alone       {medians[slowest] * 1000:7.1f} ms ({slowest})")
    ratio = all_seven / medians[slowest]
    print(f"ratio {ratio:.3f} (target <= 1.3): {'PASS' if ratio <= 1.3 else 'FAIL'}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    anyio.run(main, parser.parse_args().runs)
