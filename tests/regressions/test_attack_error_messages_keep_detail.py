"""Attack: failures whose message lost what happened (issue 18 §11, last bullet).

Before: an upstream URL without a port (``http://127.0.0.1:/sru``) failed as "…/sru failed:
ConnectError" with no word of the port 80 that was tried, a URL without a scheme as
":///127.0.0.1:8080/sru failed: UnsupportedProtocol", a port past 65535 as an
``INTERNAL_ERROR`` (an exception group); a source whose answer nested too deeply for its
parser as "failed with RecursionError" (an ``INTERNAL_ERROR``, read as a defect); a full disk
under the receipt ledger as "could not be written (OSError)". Now each says what happened.
"""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from readingroom.core import ledger
from readingroom.core.errors import Code
from readingroom.core.fanout import fan_out
from readingroom.ndl.service import NdlService
from readingroom.ndl.upstreams.ndl_search import NdlClient

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("url, said", [
    ("http://127.0.0.1:/sru", "127.0.0.1:80 (the URL gives no port, so http's default 80"),
    ("127.0.0.1:8080/sru", "has no scheme (start it with http:// or https://)"),
    ("http://127.0.0.1:99999/sru", "its port is not a number from 1 to 65535"),
])
async def test_a_bad_base_url_says_what_is_wrong(url: str, said: str) -> None:
    client = NdlClient(url, env={})
    env = await NdlService(client, env={}).search("ndl_search_books", ("iss-ndl-opac",),
                                                  {"title": "こころ"})
    await client.aclose()
    assert env.error is not None and env.error.code == Code.TRANSPORT_ERROR
    assert said in env.error.message, env.error.message


async def test_an_answer_too_deep_for_its_parser_is_an_unreadable_answer() -> None:
    def parse(depth: int) -> object:
        return parse(depth + 1)  # what a recursive parser does on a 100k-deep answer

    async def source() -> object:
        return parse(0)

    outcome = (await fan_out({"deep": source}, deadline=10))["deep"]
    assert outcome.code is Code.API_ERROR and "nests too deeply" in outcome.error.message


def test_a_full_disk_under_the_ledger_is_called_a_full_disk(tmp_path: Path, monkeypatch) -> None:
    def full(self: ledger.Ledger, data: bytes) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(ledger.Ledger, "_write", full)
    outcome = ledger.deposit({"server": "t", "operation": "op", "query": "q", "params": {}},
                             env={"MCP_RECEIPT_LOG": str(tmp_path / "r.jsonl")})
    assert outcome.code is Code.RECEIPT_WRITE_FAILED
    assert "the disk is full (ENOSPC)" in outcome.message and "OSError" not in outcome.message
