"""Helpers for tests that run a server as a real process: its answers and its memory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema

from readingroom.core.envelope import response_schema

__all__ = ["VALIDATOR", "peak_rss_mb", "structured"]

VALIDATOR = jsonschema.Draft202012Validator(response_schema())
"""The published response schema (docs/response-schema.json), as a validator."""


def structured(result: dict[str, Any]) -> dict[str, Any]:
    """A tool result's envelope, checked: valid against the published schema, the same as its
    text content, and credited."""
    data: dict[str, Any] = result["structuredContent"]
    VALIDATOR.validate(data)
    assert json.loads(result["content"][0]["text"]) == data
    assert data["attribution"]
    return data


def peak_rss_mb(pid: int) -> int | None:
    """The process's peak resident set (VmHWM) in MB, where /proc tells it (else None)."""
    status = Path(f"/proc/{pid}/status")
    if not status.exists():
        return None
    for line in status.read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) // 1024
    return None
