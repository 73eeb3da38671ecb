"""Pacing efficiency: how close ndl-mcp's request gaps come to the 1.0 s floor.

Issues N searches at once to a real ndl-mcp subprocess pointed at the loopback fake SRU server
(50 ms latency) and reads the request starts from the fake's own log. Baseline: the floor itself
(1.0 s) and the ideal wall time (N-1 floors + one latency).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

from readingroom.setup.fakesru import FakeSru
from readingroom.setup.rawclient import RawStdioClient

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
        overlaps = fake.overlaps()
    ideal = (args.n - 1) * FLOOR + args.latency
    mean_gap = statistics.fmean(gaps)
    print(f"searches: {args.n}, fake latency {args.latency * 1000:.0f} ms, overlaps {overlaps}")
    print(f"gap between request starts: min {min(gaps):.3f} s, mean {mean_gap:.3f} s, "
          f"max {max(gaps):.3f} s")
    print(f"pacing efficiency: mean gap / {FLOOR:.1f} s floor = {mean_gap / FLOOR:.3f} "
          f"(target <= 1.05)")
    print(f"wall time: {wall:.2f} s; ideal {ideal:.2f} s; ratio {wall / ideal:.3f}")
    return 0 if mean_gap / FLOOR <= 1.05 and min(gaps) >= FLOOR and overlaps == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
