"""Helper process for test_ledger_processes.py: append receipts once released.

Usage: ledger_appender.py LEDGER WORKER COUNT. Prints ``ready`` once imported, then blocks on
a line from stdin so the parent can release every worker at the same moment. After its first
receipt it prints ``first`` and blocks again: the parent releases the rest only once every
worker has appended one, so the workers' lines are sure to interleave however the machine
schedules them.
"""

from __future__ import annotations

import sys

from readingroom.core.ledger import deposit


def main() -> int:
    """Append COUNT receipts tagged with WORKER; exit 1 on the first one not deposited."""
    path, worker, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    env = {"MCP_RECEIPT_LOG": path}
    print("ready", flush=True)
    sys.stdin.readline()
    for i in range(count):
        entry = {
            "server": f"worker-{worker}",
            "operation": "search",
            "query": f'title="w{worker} n{i}"',
            "normalized_terms": [
                {"field": "title", "term": f"w{worker} n{i}", "index": "title", "match": "partial"}
            ],
            "params": {"query": f"w{worker} n{i}", "appid": "secret"},
            "query_hash": f"{worker:02d}{i:04d}".ljust(64, "0"),
            "result_ids": [f"{worker}-{i}"],
            "total": 1,
            "returned": 1,
            "outcome": "ok",
            "endpoint": "http://127.0.0.1/sru",
        }
        outcome = deposit(entry, env=env)
        if not outcome.deposited:
            print(f"worker {worker} receipt {i}: {outcome.message}", file=sys.stderr)
            return 1
        if i == 0:
            print("first", flush=True)
            sys.stdin.readline()
    return 0


if __name__ == "__main__":
    sys.exit(main())
