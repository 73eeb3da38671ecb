"""Start-up: spawn → initialize response, ndl-mcp against a minimal v1 SDK server.

Both are started the same way (``python …``) and timed from Popen to the first stdout line
(the initialize response). Runs are interleaved so machine noise hits both alike; medians are
compared.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

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


def time_to_initialize(argv: list[str]) -> float:
    """Seconds from spawn to the initialize response."""
    began = time.monotonic()
    with RawStdioClient(argv) as client:
        client.initialize(timeout=60)
        elapsed = time.monotonic() - began
        client.close()
    return elapsed


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
        time_to_initialize(ours_argv)  # warm the file cache for both before measuring
        time_to_initialize(base_argv)
        ours, base = [], []
        for _ in range(args.n):
            ours.append(time_to_initialize(ours_argv))
            base.append(time_to_initialize(base_argv))
    m_ours, m_base = statistics.median(ours), statistics.median(base)
    print(f"runs: {args.n} each, interleaved")
    print(f"minimal v1 SDK server: median {m_base * 1000:.0f} ms "
          f"(min {min(base) * 1000:.0f}, max {max(base) * 1000:.0f})")
    print(f"ndl-mcp ({' '.join(ours_argv[-2:])}): median {m_ours * 1000:.0f} ms "
          f"(min {min(ours) * 1000:.0f}, max {max(ours) * 1000:.0f})")
    print(f"start-up ratio: {m_ours / m_base:.2f}x (target <= 1.3x)")
    return 0 if m_ours / m_base <= 1.3 else 1


if __name__ == "__main__":
    sys.exit(main())
