"""Attack: one hostile line in the shared receipt ledger.

Issue 9 §3. A line of 100k-deep nested arrays made ``deposit()`` — documented as never raising
— raise RecursionError, so every ndl-mcp search answered INTERNAL_ERROR after it had already
queried the upstream; lines with ``NaN`` or ``1e999`` crashed ``receipts verify`` with a
traceback. Now the ledger reads lines with a bounded parser: the line is a verify finding that
names it, and a search after it still answers, with ``RECEIPT_WRITE_FAILED`` naming the line
(a complete line the ledger did not write is damage, not an interrupted write, so nothing is
chained past it).
"""

from __future__ import annotations

from pathlib import Path

import anyio
import httpx
import pytest
from mcp.shared.memory import create_connected_server_and_client_session

from readingroom.cli import main
from readingroom.core.ledger import Ledger
from readingroom.ndl.fake import canned
from readingroom.ndl.server import build_ndl_server
from readingroom.ndl.upstreams.ndl_search import NdlClient

pytestmark = pytest.mark.anyio

HOSTILE = {
    "deep-nesting": (b"[" * 100_000 + b"]" * 100_000, "nested deeper than 32 levels"),
    "nan": (b'{"v":1,"seq":2,"prev_hash":"%s","hash":"%s","total":NaN}', "holds NaN"),
    "1e999": (b'{"v":1,"seq":2,"prev_hash":"%s","hash":"%s","total":1e999}',
              "holds the number 1e999"),
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def hostile_ledger(tmp_path: Path, attack: str) -> Path:
    """A ledger of one genuine receipt followed by the hostile line (line 2)."""
    path = tmp_path / "receipts.jsonl"
    first = Ledger(path).append({"server": "ndl-mcp", "operation": "search", "query": "q"})
    line, _ = HOSTILE[attack]
    if b"%s" in line:
        line = line % (first["hash"].encode(), b"0" * 64)
    with open(path, "ab") as fh:
        fh.write(line + b"\n")
    return path


@pytest.mark.parametrize("attack", sorted(HOSTILE))
async def test_a_search_after_a_hostile_line_still_answers(tmp_path: Path, attack: str) -> None:
    path = hostile_ledger(tmp_path, attack)
    before = path.read_bytes()
    def books(_request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=canned("books.xml"),
                              headers={"Content-Type": "text/xml; charset=UTF-8"})

    client = NdlClient("https://ndl.test/api/sru", transport=httpx.MockTransport(books))
    server = build_ndl_server(client, env={"MCP_RECEIPT_LOG": str(path)})
    async with create_connected_server_and_client_session(server) as session:
        with anyio.fail_after(30):
            res = await session.call_tool("ndl_search_books", {"title": "こころ"})
    await client.aclose()
    envelope = res.structuredContent or {}
    assert not res.isError, envelope.get("error")
    assert envelope["result"]["returned"] > 0
    assert envelope["receipt"]["deposited"] is False
    (warning,) = [d for d in envelope["diagnostics"] if d["code"] == "RECEIPT_WRITE_FAILED"]
    assert f"line 2 is not a receipt ({HOSTILE[attack][1]}" in warning["message"]
    assert path.read_bytes() == before, "nothing was chained past the damage"


@pytest.mark.parametrize("attack", sorted(HOSTILE))
def test_verify_and_report_name_the_hostile_line(
    tmp_path: Path, attack: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = hostile_ledger(tmp_path, attack)
    assert main(["receipts", "verify", str(path)]) == 1
    out = capsys.readouterr().out
    assert out.startswith(f"NOT INTACT: 1 problem in {path}, first bad line 2\n")
    assert f"line 2: unparseable — not a receipt line ({HOSTILE[attack][1]}" in out

    assert main(["receipts", "report", str(path), "--format", "csv"]) == 1
    captured = capsys.readouterr()
    assert len(captured.out.splitlines()) == 2, "the header and the one genuine receipt"
    assert "NOT intact (first bad line 2)" in captured.err
    assert "Traceback" not in captured.err
