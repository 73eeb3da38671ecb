"""Attack: huge text arguments, and a refusal that echoes them back (issue 18 §6).

Before, ndl-mcp put no length limit on its text arguments and echoed what it was given twice
(the envelope's ``query.input`` in the text content and again in ``structuredContent``): a
50 MB title made a 100 MB answer and took the server to 857 MB. Now every text argument of
ndl-mcp has a ``max_length`` in its input schema, and the core's ``INVALID_ARGUMENT`` answer
of every server names the refused argument by a short prefix only (no ``input_value``,
location parts and messages cut), whatever the argument's size. (Lines over 4 MiB are refused
by the transport before any tool sees them: ``tests/stdio/test_protocol_answers.py``.)
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from tests.core.served import peak_rss_mb

from readingroom.core.rawstdio import RawStdioClient

# Starts real server or command processes: left out of the quick tier (tests/conftest.py).
pytestmark = pytest.mark.stdio

HUGE = 1_000_000
SMALL_REPLY = 20_000
"""Bytes an INVALID_ARGUMENT reply may take, whatever was sent (ndl-mcp's, with its five
sources and their credit, is about 11 KB; the others 1-2 KB)."""

SERVERS = {
    "ndl-mcp": (["-m", "readingroom.ndl"], "ndl_search_books", {"title": "x"}),
    "literature-search-mcp": (["-m", "readingroom.literature"], "literature_search",
                              {"query": "x"}),
    "swiss-cultural-heritage-mcp": (["-m", "readingroom.heritage"], "heritage_search_artists",
                                    {"query": "x"}),
    "book-agent mcp": (["-m", "readingroom.book", "--data-dir", "{data}", "mcp"], "book_list",
                       {}),
}


def _client(argv: list[str], tmp_path: Path) -> RawStdioClient:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("READINGROOM_", "BOOK_AGENT_", "MCP_RECEIPT_LOG"))}
    env.update({"LITERATURE_SEARCH_STATE_DIR": str(tmp_path / "state"),
                "NDL_SRU_URL": "http://127.0.0.1:9/sru"})
    argv = [a.replace("{data}", str(tmp_path / "books")) for a in argv]
    return RawStdioClient([sys.executable, *argv], env=env)


def _reply_line(client: RawStdioClient, rid: int) -> bytes:
    for line in client.raw_lines:
        if f'"id":{rid}'.encode() in line.replace(b" ", b""):
            return line
    raise AssertionError(f"no reply line for #{rid}")


@pytest.mark.parametrize("server", sorted(SERVERS))
def test_an_unknown_argument_of_a_million_characters_is_named_by_a_prefix(server, tmp_path):
    argv, tool, arguments = SERVERS[server]
    with _client(argv, tmp_path) as client:
        client.initialize()
        rid = client.send_request("tools/call", {"name": tool, "arguments": {
            **arguments, "k" * HUGE: 1}})
        answer = client.wait(rid, timeout=60)["result"]
        size = len(_reply_line(client, rid))
        assert client.close() == 0
    error = answer["structuredContent"]["error"]
    assert answer["isError"] is True and error["code"] == "INVALID_ARGUMENT"
    assert size < SMALL_REPLY, f"{server} answered {size} bytes"
    assert "kkkkk" in json.dumps(error["details"]), "the argument is still named"


def test_ndl_caps_every_text_argument_and_never_echoes_it(tmp_path):
    from readingroom.ndl.server import GetRecordInput, SearchAllInput

    for model in (SearchAllInput, GetRecordInput):
        for name, schema in model.model_json_schema()["properties"].items():
            kinds = [schema, *schema.get("anyOf", [])]
            for kind in kinds:
                if kind.get("type") == "string":
                    assert kind.get("maxLength"), (model.__name__, name)
                if kind.get("type") == "array":
                    assert kind["items"].get("maxLength") and kind.get("maxItems"), name
    title = "あ" * HUGE  # 3 MB of UTF-8, under the transport's line limit
    argv, tool, _ = SERVERS["ndl-mcp"]
    with _client(argv, tmp_path) as client:
        client.initialize()
        rid = client.send_request("tools/call", {"name": tool, "arguments": {"title": title}})
        answer = client.wait(rid, timeout=60)["result"]
        size = len(_reply_line(client, rid))
        peak = peak_rss_mb(client.proc.pid)
        assert client.close() == 0
    print(f"ndl-mcp: a {len(title.encode())}-byte title answered in {size} bytes; peak {peak} MB")
    assert answer["isError"] is True
    assert answer["structuredContent"]["error"]["code"] == "INVALID_ARGUMENT"
    assert size < SMALL_REPLY and "ああああ" not in json.dumps(answer)
    if peak is not None:
        assert peak < 200
