"""Attack: book-agent given and giving unbounded text.

Issue 18 §6. A 10,000-character book title came back whole in every ``book_list`` and
``book_status`` (and every ``book-agent list`` line); the tool schemas left hint keys and
values and locator text unbounded, so a 1 MB hint value was accepted and echoed back twice
(text content and ``structuredContent``: a 2 MB answer). Now displayed titles are cut at 200
characters and say so (``title_truncated``, ``title_chars``; the manifest keeps the whole
title), and every text argument of every tool has a ``maxLength`` in its input schema.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp.shared.memory import create_connected_server_and_client_session
from tests.book.make_books import make_pdf
from tests.forked import book_agent

from readingroom.book.server import build_book_server
from readingroom.book.service import BookService

# Starts real server or command processes: left out of the quick tier (tests/conftest.py).
pytestmark = [pytest.mark.anyio, pytest.mark.stdio]
LONG_TITLE = "Title " + "x" * 9994


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("unbounded")
    service = BookService(root / "data")
    service.init(make_pdf(root / "t.pdf", ["Whales swim in the sea.", "Ships sail home."]),
                 book_id="long", title=LONG_TITLE)
    return root / "data"


async def _session_call(data, tool: str, arguments: dict) -> tuple[Any, int]:
    async with create_connected_server_and_client_session(
            build_book_server(data, env={})) as client:
        result = await client.call_tool(tool, arguments)
    size = len(result.content[0].text) + len(json.dumps(result.structuredContent or {}))
    return result, size


def _unbounded(schema: dict, path: str = "") -> list[str]:
    """Every string without maxLength, object map without maxProperties, array without
    maxItems in a JSON schema."""
    found = []
    kind = schema.get("type")
    if kind == "string" and "maxLength" not in schema and "enum" not in schema \
            and "const" not in schema:
        found.append(path or "(root)")
    if kind == "object" and schema.get("additionalProperties") not in (False, None) \
            and "maxProperties" not in schema:
        found.append(path + " (object)")
    if kind == "array" and "maxItems" not in schema:
        found.append(path + " (array)")
    for key in ("anyOf", "oneOf", "allOf"):
        for n, sub in enumerate(schema.get(key, ())):
            found += _unbounded(sub, f"{path}|{n}")
    for name, sub in (schema.get("properties") or {}).items():
        found += _unbounded(sub, f"{path}.{name}")
    for key in ("additionalProperties", "items", "propertyNames"):
        if isinstance(schema.get(key), dict):
            found += _unbounded(schema[key], f"{path}[{key}]")
    return found


async def test_every_text_argument_of_every_tool_is_bounded(data):
    async with create_connected_server_and_client_session(
            build_book_server(data, env={})) as client:
        tools = (await client.list_tools()).tools
    assert len(tools) == 10
    problems = {t.name: _unbounded(t.inputSchema) for t in tools}
    assert {k: v for k, v in problems.items() if v} == {}


async def test_a_megabyte_hint_is_refused_without_echoing_it(data):
    result, size = await _session_call(data, "book_search", {
        "book_id": "long", "query": "whales", "hints": {"pages": "1" * 1_000_000}})
    assert result.isError
    assert json.loads(result.content[0].text)["error"]["code"] == "INVALID_ARGUMENT"
    assert size < 20_000, f"a {size:,}-character answer to a refused hint"


async def test_a_megabyte_hint_key_is_refused_without_echoing_it(data):
    result, size = await _session_call(data, "book_locate_source", {
        "book_id": "long", "text": "whales", "hints": {"k" * 1_000_000: "1"}})
    assert result.isError and size < 20_000, size


async def test_a_huge_locator_is_refused_by_the_schema(data):
    result, size = await _session_call(data, "book_read_source", {"locator": "{" * 5_000_000})
    assert result.isError
    assert json.loads(result.content[0].text)["error"]["code"] == "INVALID_ARGUMENT"
    assert size < 20_000


@pytest.mark.parametrize("tool", ["book_list", "book_status"])
async def test_a_ten_thousand_character_title_is_shown_cut(data, tool):
    result, size = await _session_call(data, tool, {})
    env = json.loads(result.content[0].text)
    book = env["items"][0]
    assert len(book["title"]) <= 200 and book["title"].startswith("Title xxx")
    assert book["title_truncated"] is True and book["title_chars"] == len(LONG_TITLE)
    assert size < 8_000


async def test_book_status_of_the_book_shows_the_title_cut(data):
    result, _size = await _session_call(data, "book_status", {"book_id": "long"})
    status = json.loads(result.content[0].text)["data"]
    assert len(status["title"]) <= 200 and status["title_truncated"] is True
    manifest = BookService(data).registry.get("long").manifest
    assert manifest["title"] == LONG_TITLE, "the package keeps the whole title"


@pytest.mark.parametrize("command", [["list"], ["status"], ["status", "long"]])
def test_the_command_line_shows_the_title_cut(data, command):
    done = book_agent(["--data-dir", str(data), *command], text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert max(len(line) for line in done.stdout.splitlines()) < 400, done.stdout[:500]
