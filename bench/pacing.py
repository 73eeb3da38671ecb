"""Pacing efficiency: how close ndl-mcp's request gaps come to the 1.0 s floor.

Issues N searches at once to a real ndl-mcp subprocess pointed at the loopback fake SRU server
(50 ms latency) and reads the arrivals and answers from the fake's own log. ndl-mcp keeps the
floor from the end of each exchange, so the gap between arrivals is the floor plus one exchange
(latency and overhead). Baseline: the floor itself (1.0 s) and the ideal wall time (N-1 floors
+ N latencies).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

from readingroom.core.rawstdio import RawStdioClient
from readingroom.ndl.fake import FakeSru

FLOOR = 1.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("-n", type=int, default=20, help="searches (default 20)")
    parser.add_argument("--latency", type=float, default=0.05, help="fake latency, seconds")
    args = parser.parse_args()
    with FakeSru(latency=args.latency) as fake:
        env = dict(os.environ, NDL_SRU_URL=fake.url)
        env.pop("MCP_RECEIPT_LOG", None)
        with RawStdioClient([sys.executable, "-m", "readingroom.ndl"], env=env) as client:
            client.initialize()
            began = time.monotonic()
            ids = [client.send_request("tools/call", {"name": "ndl_search_books",
                                                      "arguments": {"title": f"漱石 {i}"}})
                   for i in range(args.n)]
            for rid in ids:
                client.wait(rid, timeout=args.n * 5)
            wall = time.monotonic() - began
            client.close()
        gaps = fake.gaps()
        rests = fake.floor_gaps()
        overlaps = fake.overlaps()
    ideal = (args.n - 1) * FLOOR + args.n * args.latency
    mean_rest = statistics.fmean(rests)
    print(f"searches: {args.n}, fake latency {args.latency * 1000:.0f} ms, overlaps {overlaps}")
    print(f"answer to next arrival (the floor as kept): min {min(rests):.3f} s, "
          f"mean {mean_rest:.3f} s, max {max(rests):.3f} s")
    print(f"between arrivals: min {min(gaps):.3f} s, mean {statistics.fmean(gaps):.3f} s")
    print(f"pacing efficiency: mean rest / {FLOOR:.1f} s floor = {mean_rest / FLOOR:.3f} "
          f"(target <= 1.05)")
    print(f"wall time: {wall:.2f} s; ideal {ideal:.2f} s; ratio {wall / ideal:.3f}")
    return 0 if mean_rest / FLOOR <= 1.05 and min(rests) >= FLOOR and overlaps == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
