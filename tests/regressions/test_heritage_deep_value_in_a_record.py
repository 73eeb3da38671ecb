"""Regression (issue 18 §5): a 900-deep value inside a heritage record broke the reply.

A SIKART row with a field nested 900 levels deep passed into the item's raw ``record``; the
reply then failed to serialise (``Maximum serialization depth exceeded``, a bare JSON-RPC
error) while the ledger recorded "ok, 1 result". Raw values are now bounded in depth before
the envelope is built (a placeholder and a warning stand for what was left out), so the reply
serialises and the receipt describes the answer that was sent. On loopback.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from tests.heritage.loopback import on_loopback

from readingroom.heritage.fake import canned

pytestmark = pytest.mark.anyio


def _deep(depth: int) -> str:
    return "[" * depth + '"bottom"' + "]" * depth


def _row_with_deep_value(depth: int) -> bytes:
    payload = json.loads(canned("sikart_search.json"))
    text = json.dumps(payload)
    assert sys.getrecursionlimit() > depth  # the upstream's JSON itself parses
    marker = '"VITAZEILE": '
    at = text.index(marker) + len(marker)
    end = text.index('"', text.index('"', at) + 1) + 1  # the first row's VITAZEILE string
    return (text[:at] + _deep(depth) + text[end:]).encode()


async def test_a_900_deep_value_is_bounded_and_the_reply_serialises(tmp_path: Path):
    body = _row_with_deep_value(900)
    ledger = tmp_path / "r.jsonl"
    async with on_loopback(ledger) as h:
        h.script(lambda p, path, _q, _b: (200, {"Content-Type": "application/json"}, body)
                 if path == "datastore_search" else None)
        env, text, error = await h.call("heritage_search_artists", {
            "query": "Probe", "response_format": "json"})
    assert not error, text[:300]
    assert env["items"] and json.loads(text) == env
    deep = env["items"][0]["record"]["VITAZEILE"]
    depth = 0
    while isinstance(deep, list):
        deep, depth = deep[0], depth + 1
    assert depth < 20 and "left out" in str(deep)
    assert any(d["code"] == "RECORD_UNREADABLE" and "nested deeper" in d["message"]
               for d in env["diagnostics"])
    [line] = ledger.read_text().splitlines()
    entry = json.loads(line)
    assert entry["outcome"] == "ok" and entry["returned"] == len(env["items"])
