"""Attack: the ledger path is a symbolic link to some other file.

Issue 9 §3. Before, receipts were appended silently into the link's target (any file the user
can write), and the lock and head files lived beside the link, not the target, so two names
for one file were two ledgers to the lock and could fork the chain. Decision: a ledger path
that is a symbolic link is refused for writing (``RECEIPT_WRITE_FAILED``, naming the link and
the remedy); the search still answers; the target is untouched. Reading (verify, report)
follows a link, since reading cannot damage anything.
"""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest

from readingroom.core.envelope import Envelope, ResultInfo
from readingroom.core.receipt import deposit

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symbolic links on this platform"),
]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_a_symlinked_ledger_path_is_refused_and_the_target_untouched(
    tmp_path: Path,
) -> None:
    target = tmp_path / "dotfiles" / "shell-profile"
    target.parent.mkdir()
    target.write_bytes(b"export PATH=$HOME/bin:$PATH\n")
    link = tmp_path / "receipts.jsonl"
    try:
        link.symlink_to(target)
    except OSError as exc:  # Windows without the symlink privilege
        pytest.skip(f"cannot create a symbolic link here: {exc}")

    env = Envelope(server="ndl-mcp", operation="ndl_search_books",
                   result=ResultInfo(total=1, returned=1))
    with anyio.fail_after(10):
        got = await deposit(env, query="title=x", params={"q": "x"}, providers=["p"],
                            endpoint="https://upstream.invalid/", outcome="ok",
                            environ={"MCP_RECEIPT_LOG": str(link)})

    assert not got.deposited and env.error is None
    (warning,) = env.diagnostics
    assert warning.code == "RECEIPT_WRITE_FAILED"
    assert "is a symbolic link" in warning.message and "MCP_RECEIPT_LOG" in warning.message
    assert target.read_bytes() == b"export PATH=$HOME/bin:$PATH\n"
    assert link.is_symlink()
    assert not Path(str(link) + ".head").exists()
