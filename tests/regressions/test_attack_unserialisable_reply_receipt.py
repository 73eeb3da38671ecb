"""Attack: a record too deep (or too odd) to serialise, and the receipt that said "ok".

Issue 18 §5, second bullet, as a guarantee of the core for every server. A 900-deep value in
one record made the reply fail to serialise (``Maximum serialization depth exceeded``: the
client got no tool result, only a bare error) while the ledger recorded "ok, 1 result" for
ever. Now raw values are bounded in the envelope itself (``Envelope.to_data``: deeper than 32
levels left out with a marker, lone surrogates and NaN made valid), so such a reply always
serialises and its receipt is true; and a reply that still cannot be serialised (a defect: a
value nothing can encode) is answered ``INTERNAL_ERROR`` with a receipt that says
``INTERNAL_ERROR``, no total, no results, because the receipt is written only after the same
serialisation succeeded. Run over real stdio (the in-memory transport serialises nothing).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from tests.conftest import REPO_ROOT

from readingroom.core.envelope import DEPTH_MARKER
from readingroom.core.rawstdio import RawStdioClient
from readingroom.core.verification import verify

# Starts real server or command processes: left out of the quick tier (tests/conftest.py).
pytestmark = pytest.mark.stdio


def _run(tmp_path: Path, *tools: str) -> tuple[dict[str, dict], list[dict]]:
    ledger = tmp_path / "receipts.jsonl"
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "MCP_RECEIPT_LOG": str(ledger)}
    answers = {}
    with RawStdioClient([sys.executable, "-m", "tests.mcp.reply_toy"], env=env,
                        cwd=str(REPO_ROOT)) as server:
        server.initialize()
        for tool in tools:
            answers[tool] = server.request("tools/call", {"name": tool, "arguments": {}}, 30)
        assert server.request("ping", {}, 10)["result"] == {}
        assert server.close() == 0
        assert server.stdout_problems() == []
    lines = [json.loads(line) for line in ledger.read_text(encoding="utf-8").splitlines()]
    assert verify(ledger).ok
    return answers, lines


def test_a_deep_record_is_answered_and_its_receipt_is_true(tmp_path: Path) -> None:
    answers, receipts = _run(tmp_path, "deep", "odd")
    for tool in ("deep", "odd"):
        assert "result" in answers[tool], answers[tool].get("error")
        result = answers[tool]["result"]
        assert result["isError"] is False
        envelope = result["structuredContent"]
        assert json.loads(result["content"][0]["text"]) == envelope
        assert [i["id"] for i in envelope["items"]] == [f"{tool}-1"]
        assert envelope["receipt"]["deposited"] is True
    text = json.dumps(answers["deep"]["result"]["structuredContent"]["items"], ensure_ascii=False)
    assert DEPTH_MARKER in text and text.count("{") < 40
    odd = answers["odd"]["result"]["structuredContent"]["items"][0]["value"]
    assert odd == {"title": "a\ufffdb", "score": None}
    assert [(r["operation"], r["outcome"], r["total"], r["result_ids"]) for r in receipts] == [
        ("deep", "ok", 1, ["deep-1"]), ("odd", "ok", 1, ["odd-1"])]


def test_an_unserialisable_reply_is_an_error_and_so_is_its_receipt(tmp_path: Path) -> None:
    answers, receipts = _run(tmp_path, "broken")
    assert "result" in answers["broken"], "a tool result, not a bare JSON-RPC error"
    result = answers["broken"]["result"]
    assert result["isError"] is True
    envelope = result["structuredContent"]
    assert envelope["error"]["code"] == "INTERNAL_ERROR" and not envelope.get("items")
    [line] = receipts
    assert (line["outcome"], line["total"], line["returned"], line["result_ids"]) == (
        "INTERNAL_ERROR", None, 0, [])
    assert envelope["receipt"]["ledger_hash"] == line["hash"]
