"""Dedup + fusion of 7 x 50 records (pure, in process). Target: <= 20 ms per fuse().

The lists overlap as real answers do: about half the papers are found by several providers
(by DOI, by PMID, by arXiv id or arXiv DOI, by title), the rest by one. Prints the median and
the worst of the runs, and the ratio of the median to the 20 ms target.

    .venv/bin/python bench/literature_fusion.py [--runs 200]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from readingroom.literature.fusion import fuse
from readingroom.literature.models import PROVIDER_ORDER, LiteratureRecord

TARGET_S = 0.020


def lists(seed: int = 7) -> dict[str, list[LiteratureRecord]]:
    rng = random.Random(seed)
    out: dict[str, list[LiteratureRecord]] = {}
    for p_index, provider in enumerate(PROVIDER_ORDER):
        records = []
        for rank in range(1, 51):
            paper = rng.randrange(120) if rng.random() < 0.5 else 1000 + p_index * 100 + rank
            kind = paper % 4
            records.append(LiteratureRecord(
                provider=provider, rank=rank,
                title=f"A study of topic {paper} in reading rooms, part {paper % 7}",
                doi=f"10.5555/p.{paper}" if kind in (0, 1) else None,
                pmid=str(90_000_000 + paper) if kind in (1, 2) else None,
                arxiv_id=f"2401.{paper:05d}" if kind == 3 else None,
                year=2000 + paper % 25, authors=("A. Author", "B. Author"),
                abstract="word " * 200,
            ))
        out[provider] = records
    return out


def main(runs: int) -> None:
    data = lists()
    fused = fuse(data, upstreams={"biorxiv": "europepmc"})
    times = []
    for _ in range(runs):
        began = time.perf_counter()
        fuse(data, upstreams={"biorxiv": "europepmc"})
        times.append(time.perf_counter() - began)
    median = statistics.median(times)
    print(f"7 x 50 records -> {len(fused)} papers; fuse() median {median * 1000:.2f} ms, "
          f"worst {max(times) * 1000:.2f} ms over {runs} runs")
    ratio = median / TARGET_S
    print(f"ratio to the 20 ms target {ratio:.3f}: {'PASS' if ratio <= 1 else 'FAIL'}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    main(parser.parse_args().runs)
