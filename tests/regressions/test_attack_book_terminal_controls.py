"""Attack: a book whose title and headings carry terminal control sequences.

Issue 18 §10. Titles and headings kept C0/C1 controls (ESC, BEL, BS, CSI): over MCP in
``book_list``, ``book_status``, heading paths and ``book_read_markdown``, and raw to the
terminal in ``book-agent list`` (a title set the terminal's title, cleared the screen and
coloured the output). Now the MCP tools clean them as they clean bidi and zero-width
characters (tab and newline stay in body text), and every CLI output shows them escaped.
"""

from __future__ import annotations

import json
import re

import pytest
from mcp.shared.memory import create_connected_server_and_client_session
from tests.forked import book_agent

from readingroom.book.server import build_book_server
from readingroom.book.service import BookService

# Starts real server or command processes: left out of the quick tier (tests/conftest.py).
pytestmark = [pytest.mark.anyio, pytest.mark.stdio]
HOSTILE = "\x1b]0;owned\x07\x1b[2J\x1b[31m"
TITLE = f"Red {HOSTILE}Book\x08\x9b31m\u202eevil"
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("controls")
    src = root / "controls.md"
    src.write_text(f"# Chapter {HOSTILE}one\x07\n\nWhales swim\tin the sea.\nSecond line.\n\n"
                   f"# Chapter \x9b2J\x08two\n\nShips sail home.\n", encoding="utf-8")
    BookService(root / "data").init(src, book_id="ctl", title=TITLE)
    return root / "data"


def raw_controls(value) -> list[str]:
    """Control characters in any string of an envelope (locators stay verbatim by design)."""
    found: list[str] = []

    def walk(v):
        if isinstance(v, str):
            found.extend(RAW.findall(v))
        elif isinstance(v, list):
            for x in v:
                walk(x)
        elif isinstance(v, dict):
            for k, x in v.items():
                if k != "locator":
                    walk(x)
    walk(value)
    return found


async def _call(client, tool, arguments):
    result = await client.call_tool(tool, arguments)
    assert not result.isError, result.content[0].text
    env = json.loads(result.content[0].text)
    assert env == result.structuredContent
    return env


async def test_mcp_answers_carry_no_control_characters(data):
    async with create_connected_server_and_client_session(
            build_book_server(data, env={})) as client:
        listed = await _call(client, "book_list", {})
        status = await _call(client, "book_status", {"book_id": "ctl"})
        everyone = await _call(client, "book_status", {})
        hits = await _call(client, "book_search", {"book_id": "ctl", "query": "whales"})
        md = await _call(client, "book_read_markdown", {"book_id": "ctl", "start_line": 1})
        entry = await _call(client, "book_read_entry", {
            "book_id": "ctl", "record_id": hits["items"][0]["record_id"], "neighbors": 1})
    for env in (listed, status, everyone, hits, md, entry):
        assert raw_controls(env) == [], env
    assert listed["items"][0]["title"].startswith("Red ") and "Book" in listed["items"][0]["title"]
    assert any("Chapter" in h for h in hits["items"][0]["heading_path"])
    assert "\n" in md["data"]["text"], "newlines stay in body text"


@pytest.mark.parametrize("command", [["list"], ["status"], ["status", "ctl"],
                                     ["search", "ctl", "whales"],
                                     ["read-markdown", "ctl", "--start-line", "1"],
                                     ["list", "--json"], ["status", "ctl", "--json"]])
def test_the_command_line_never_writes_a_control_character(data, command):
    done = book_agent(["--data-dir", str(data), *command], timeout=120)
    assert done.returncode == 0, done.stderr
    out = done.stdout.decode("utf-8")
    assert RAW.findall(out) == [], out[:400]
    if "--json" in command:
        json.loads(out)
    elif command[0] in ("list", "status"):
        assert "\\x1b" in out, "the controls are shown escaped, not dropped silently"
