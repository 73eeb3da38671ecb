"""Settings shared by the suite: environment variable names and their parsing.

Every upstream URL can be overridden by an environment variable so tests and the installer's
self-test can point a server at a loopback fake. Courtesy limits are deliberately *not*
settings: nothing here can lower them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

__all__ = [
    "ENV_RECEIPT_LOG",
    "ENV_SERVER_CONCURRENCY",
    "ENV_TOOL_DEADLINE",
    "env_float",
    "env_int",
    "env_str",
]

ENV_RECEIPT_LOG = "MCP_RECEIPT_LOG"
"""Path of the suite's shared receipt ledger (JSONL). Unset: no receipts are written."""

ENV_TOOL_DEADLINE = "READINGROOM_TOOL_DEADLINE"
"""Per-call server deadline in seconds (default 90, range 1-900)."""

ENV_SERVER_CONCURRENCY = "READINGROOM_CONCURRENCY"
"""How many tool calls a server runs at once (default 4, range 1-16)."""


def env_str(name: str, default: str, env: Mapping[str, str] | None = None) -> str:
    """A non-empty string from the environment, else ``default``."""
    value = (env if env is not None else os.environ).get(name, "").strip()
    return value or default


def env_float(
    name: str, default: float, lo: float, hi: float, env: Mapping[str, str] | None = None
) -> float:
    """A float from the environment clamped to ``[lo, hi]``; unparsable values give ``default``."""
    raw = (env if env is not None else os.environ).get(name, "").strip()
    try:
        value = float(raw) if raw else default
    except ValueError:
        value = default
    return min(max(value, lo), hi)


def env_int(
    name: str, default: int, lo: int, hi: int, env: Mapping[str, str] | None = None
) -> int:
    """An int from the environment clamped to ``[lo, hi]``; unparsable values give ``default``."""
    return int(env_float(name, default, lo, hi, env))
