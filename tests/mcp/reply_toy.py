"""A toy server whose replies are hard to serialise, for the receipt-honesty regression.

``python -m tests.mcp.reply_toy`` (repository root on ``PYTHONPATH``) serves three tools built
with :func:`readingroom.core.mcpkit.build_server`, each depositing its receipt as a real server
does: ``deep`` (a record holding a 900-deep value), ``odd`` (a lone surrogate and a NaN in a
record) and ``broken`` (a value nothing can serialise: a defect).
"""

from __future__ import annotations

import sys
from typing import Any

from pydantic import BaseModel, ConfigDict

from readingroom.core import receipt
from readingroom.core.declaration import ServerInfo
from readingroom.core.entry import server_main
from readingroom.core.envelope import Envelope, ResultInfo
from readingroom.core.mcpkit import ToolSpec, build_server

SERVER = ServerInfo(
    name="reply-toy", entry_point="tests.mcp.reply_toy:main", title="Reply toy (tests only)",
    description="Replies that are hard to serialise.", credit=("Made up (CC0).",),
    deadline_s=30.0,
)


class NoArguments(BaseModel):
    model_config = ConfigDict(extra="forbid")


def deep_value(levels: int) -> dict[str, Any]:
    root: dict[str, Any] = {}
    node = root
    for _ in range(levels):
        node["a"] = {}
        node = node["a"]
    return root


VALUES: dict[str, Any] = {
    "deep": deep_value(900),
    "odd": {"title": "a\ud800b", "score": float("nan")},
    "broken": object(),
}


def _tool(name: str) -> ToolSpec:
    async def handler(_args: NoArguments) -> Envelope:
        env = Envelope(server=SERVER.name, operation=name,
                       result=ResultInfo(total=1, returned=1),
                       items=[{"id": f"{name}-1", "value": VALUES[name]}])
        await receipt.deposit(env, query=name, params={}, providers=["toy"], endpoint=None,
                              outcome="ok", result_ids=[f"{name}-1"])
        return env

    return ToolSpec(name=name, title=name, description=f"Answers a {name} record.",
                    input_model=NoArguments, handler=handler)


def build() -> Any:
    return build_server(SERVER, "Replies that are hard to serialise.",
                        [_tool(n) for n in VALUES])


def main() -> int:
    return server_main(SERVER, build, sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
