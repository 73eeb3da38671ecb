"""Start-up: spawn → initialize response, ndl-mcp against a minimal v1 SDK server.

Both are started the same way (``python …``) and timed from Popen to the first stdout line
(the initialize response). Runs are interleaved so machine noise hits both alike; medians are
compared. Unless ``--exe`` is given, ndl-mcp is also timed with the whole SDK imported first,
and with the garbage collector running through start-up (the two things ``core/sdkimport.py``
spares a server process), and the CPU each start took is shown.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

try:
    import resource
except ImportError:  # Windows: no CPU figure
    resource = None  # type: ignore[assignment]

from readingroom.core.rawstdio import RawStdioClient

MINIMAL = '''
import anyio
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

server = Server("minimal", version="0")

@server.list_tools()
async def list_tools():
    return [types.Tool(name="echo", description="echo", inputSchema={"type": "object"})]

async def main():
    async with stdio_server() as (r, w):
        await server.run(r, w, server.create_initialization_options())

anyio.run(main)
'''


WHOLE_SDK = ("import sys, mcp; from readingroom.ndl.__main__ import main; "
             "sys.exit(main())")
"""ndl-mcp after ``import mcp``: the SDK's package ``__init__`` files run, client and all."""

COLLECTING = ("import gc, sys; gc.disable = lambda: None; "
              "from readingroom.ndl.__main__ import main; sys.exit(main())")
"""ndl-mcp with the garbage collector left running through start-up (``collector_paused`` made
a no-op)."""


def time_to_initialize(argv: list[str]) -> float:
    """Seconds from spawn to the initialize response."""
    return _start(argv)[0]


def _start(argv: list[str]) -> tuple[float, float]:
    """(seconds to the initialize response, CPU seconds of the whole process)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN) if resource else None
    began = time.monotonic()
    with RawStdioClient(argv) as client:
        client.initialize(timeout=60)
        elapsed = time.monotonic() - began
        client.close()
    if resource is None or before is None:
        return elapsed, float("nan")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return elapsed, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("-n", type=int, default=15, help="runs of each (default 15)")
    parser.add_argument("--exe", help="time this ndl-mcp executable instead of python -m")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        minimal = Path(tmp) / "minimal_server.py"
        minimal.write_text(MINIMAL, encoding="utf-8")
        ours_argv = [args.exe] if args.exe else [sys.executable, "-m", "readingroom.ndl"]
        base_argv = [sys.executable, str(minimal)]
        runs: dict[str, list[str]] = {"ours": ours_argv, "base": base_argv}
        if not args.exe:
            runs["whole"] = [sys.executable, "-c", WHOLE_SDK]
            runs["collecting"] = [sys.executable, "-c", COLLECTING]
        for argv in runs.values():
            _start(argv)  # warm the file cache before measuring
        took: dict[str, list[tuple[float, float]]] = {key: [] for key in runs}
        for _ in range(args.n):
            for key, argv in runs.items():
                took[key].append(_start(argv))

    def line(label: str, key: str) -> float:
        wall = [w for w, _ in took[key]]
        cpu = statistics.median(c for _, c in took[key])
        print(f"{label}: median {statistics.median(wall) * 1000:.0f} ms "
              f"(min {min(wall) * 1000:.0f}, max {max(wall) * 1000:.0f}), "
              f"CPU median {cpu * 1000:.0f} ms")
        return statistics.median(wall)

    print(f"runs: {args.n} each, interleaved")
    m_base = line("minimal v1 SDK server", "base")
    m_ours = line(f"ndl-mcp ({' '.join(ours_argv[-2:])})", "ours")
    if "whole" in took:
        m_whole = line("ndl-mcp with the whole SDK imported first", "whole")
        print(f"server half of the SDK against the whole: {m_ours / m_whole:.2f}x")
    if "collecting" in took:
        m_collecting = line("ndl-mcp with the collector running through start-up", "collecting")
        print(f"collector paused against running: {m_ours / m_collecting:.2f}x")
    print(f"start-up ratio: {m_ours / m_base:.2f}x (target <= 1.3x)")
    return 0 if m_ours / m_base <= 1.3 else 1


if __name__ == "__main__":
    sys.exit(main())
