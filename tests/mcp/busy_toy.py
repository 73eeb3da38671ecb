"""A toy server whose one tool keeps a worker thread busy, for the ping-and-cancel proof.

``python -m tests.mcp.busy_toy`` (repository root on ``PYTHONPATH``): ``busy`` spins pure
Python for ``seconds`` in :func:`readingroom.core.offload.run_blocking`, as a parser would.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from readingroom.core.declaration import ServerInfo
from readingroom.core.entry import server_main
from readingroom.core.envelope import Envelope
from readingroom.core.mcpkit import ToolSpec, build_server
from readingroom.core.offload import run_blocking

SERVER = ServerInfo(
    name="busy-toy", entry_point="tests.mcp.busy_toy:main", title="Busy toy (tests only)",
    description="A tool that works in a worker thread.", credit=("Made up (CC0).",),
    deadline_s=60.0,
)


class BusyInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    seconds: float = Field(ge=0, le=30)


def spin(seconds: float) -> int:
    """Pure-Python work (it holds the GIL between the interpreter's switches, as parsing does)."""
    turns, until = 0, time.monotonic() + seconds
    while time.monotonic() < until:
        turns += sum(i * i for i in range(200))
    return turns


async def busy(args: BusyInput) -> Envelope:
    turns = await run_blocking(spin, args.seconds)
    return Envelope(server=SERVER.name, operation="busy", data={"turns": turns})


def build() -> Any:
    return build_server(SERVER, "Busy on request.", [ToolSpec(
        name="busy", title="Busy", description="Spins in a worker thread.",
        input_model=BusyInput, handler=busy)])


def main() -> int:
    return server_main(SERVER, build, sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
