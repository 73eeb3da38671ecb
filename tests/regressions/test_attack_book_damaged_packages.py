"""Attack: a hostile (or failing) file system damages one book's package under book-agent.

Issue 18 §8. One book's truncated ``manifest.json`` made ``book_list`` and ``book-agent list``
fail for the whole library; a truncated ``records.jsonl``, a deleted ``units.jsonl``,
``book.md`` or ``skill/``, a garbage ``manifest.json`` or ``index.sqlite`` were
``INTERNAL_ERROR`` "this is a defect" naming no file; a ``CURRENT`` naming a missing version
said the book was not registered; ``book_status`` said nothing was wrong; a deleted or changed
source file went unnoticed and ``book_locate_source`` still said ``verified``.

Now every one is ``BOOK_DAMAGED`` naming the file and the repair (``init --replace``);
``book_list`` lists every readable book and marks the damaged one; ``book_status`` compares the
files with the sizes and SHA-256 the manifest recorded at build and names what is damaged.
All over the real MCP server (in-memory session), and ``book-agent list`` as a process of its
own (:mod:`tests.forked`).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from mcp.shared.memory import create_connected_server_and_client_session
from tests.book.mcp.library import make_library
from tests.forked import book_agent

from readingroom.book.server import build_book_server

# Starts real server or command processes: left out of the quick tier (tests/conftest.py).
pytestmark = [pytest.mark.anyio, pytest.mark.stdio]


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    return make_library(tmp_path_factory.mktemp("damage-template"))


@pytest.fixture
def data(template, tmp_path) -> Path:
    copy = tmp_path / "data"
    shutil.copytree(template, copy)
    return copy


def version_dir(data: Path, book_id: str = "pdf") -> Path:
    return data / "books" / book_id / "v1"


async def call(data: Path, tool: str, arguments: dict) -> tuple[bool, dict]:
    async with create_connected_server_and_client_session(
            build_book_server(data, env={})) as client:
        result = await client.call_tool(tool, arguments)
    return bool(result.isError), json.loads(result.content[0].text)


def _truncate(path: Path, keep: float = 0.5) -> None:
    raw = path.read_bytes()
    path.write_bytes(raw[: int(len(raw) * keep)])


def _drop_last_line(path: Path) -> None:
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join(lines[:-1]), encoding="utf-8")


def _flip_byte(path: Path) -> None:
    raw = bytearray(path.read_bytes())
    raw[len(raw) // 2] ^= 0x01
    path.write_bytes(bytes(raw))


def _source(v: Path) -> Path:
    return next((v / "source").iterdir())


# (name, damage, tool, arguments, the file the answer must name)
DAMAGES: list[tuple[str, Callable[[Path], None], str, dict, str]] = [
    ("truncated records.jsonl", lambda v: _truncate(v / "records.jsonl"), "book_search",
     {"book_id": "pdf", "query": "whales"}, "records.jsonl"),
    ("records.jsonl cut at a line", lambda v: _drop_last_line(v / "records.jsonl"),
     "book_read_entry", {"book_id": "pdf", "record_id": "r0001"}, "records.jsonl"),
    ("deleted units.jsonl", lambda v: (v / "units.jsonl").unlink(), "book_locate_source",
     {"book_id": "pdf", "text": "past the harbour light"}, "units.jsonl"),
    ("deleted book.md", lambda v: (v / "book.md").unlink(), "book_read_markdown",
     {"book_id": "pdf", "start_line": 1}, "book.md"),
    ("deleted skill/", lambda v: shutil.rmtree(v / "skill"), "book_get_skill",
     {"book_id": "pdf"}, "skill/"),
    ("garbage manifest.json", lambda v: (v / "manifest.json").write_text("[1, 2, 3]"),
     "book_search", {"book_id": "pdf", "query": "whales"}, "manifest.json"),
    ("truncated manifest.json", lambda v: _truncate(v / "manifest.json"),
     "book_read_entry", {"book_id": "pdf", "record_id": "r0001"}, "manifest.json"),
    ("garbage index.sqlite", lambda v: (v / "index.sqlite").write_bytes(b"garbage" * 99),
     "book_search", {"book_id": "pdf", "query": "whales"}, "index.sqlite"),
    ("deleted source file", lambda v: _source(v).unlink(), "book_locate_source",
     {"book_id": "pdf", "text": "past the harbour light"}, "source/"),
    ("changed source file", lambda v: _flip_byte(_source(v)), "book_locate_source",
     {"book_id": "pdf", "text": "past the harbour light"}, "source/"),
]


def assert_damaged(is_error: bool, env: dict, file: str) -> None:
    assert is_error, env
    error = env["error"]
    assert error["code"] == "BOOK_DAMAGED", error
    assert error["details"]["file"].startswith(file), error
    assert file.rstrip("/") in error["message"]
    assert "--replace" in error["remediation"]


@pytest.mark.parametrize(("name", "damage", "tool", "arguments", "file"), DAMAGES,
                         ids=[d[0] for d in DAMAGES])
async def test_a_damaged_file_is_named_with_its_repair(data, name, damage, tool, arguments,
                                                       file):
    damage(version_dir(data))
    assert_damaged(*(await call(data, tool, arguments)), file)


@pytest.mark.parametrize(("name", "damage", "file"), [(d[0], d[1], d[4]) for d in DAMAGES],
                         ids=[d[0] for d in DAMAGES])
async def test_book_status_names_what_is_damaged(data, name, damage, file):
    damage(version_dir(data))
    is_error, env = await call(data, "book_status", {"book_id": "pdf"})
    assert not is_error, env
    integrity = env["data"]["integrity"]
    assert integrity["state"] == "damaged"
    assert any(d["file"].startswith(file) for d in integrity["damaged"]), integrity
    assert any(d["code"] == "BOOK_DAMAGED" for d in env["diagnostics"])


async def test_same_size_garbage_in_the_index_is_named(data):
    index = version_dir(data) / "index.sqlite"
    index.write_bytes(b"\0garbage" * (index.stat().st_size // 8) + b"\0" * (
        index.stat().st_size % 8))
    assert_damaged(*(await call(data, "book_search", {"book_id": "pdf", "query": "whales"})),
                   "index.sqlite")


async def test_an_intact_book_says_ok(data):
    is_error, env = await call(data, "book_status", {"book_id": "pdf"})
    assert not is_error and env["data"]["integrity"]["state"] == "ok"


async def test_current_naming_a_missing_version_says_so(data):
    (data / "books" / "pdf" / "CURRENT").write_text("9\n")
    is_error, env = await call(data, "book_search", {"book_id": "pdf", "query": "whales"})
    assert_damaged(is_error, env, "CURRENT")
    assert "version 9" in env["error"]["message"] and "does not exist" in env["error"]["message"]
    listed = (await call(data, "book_list", {}))[1]
    assert {b["book_id"]: b["state"] for b in listed["items"]} == {"epub": "ok",
                                                                  "pdf": "damaged"}


async def test_one_truncated_manifest_leaves_the_library_listed(data):
    _truncate(version_dir(data) / "manifest.json")
    is_error, env = await call(data, "book_list", {})
    assert not is_error, env
    books = {b["book_id"]: b for b in env["items"]}
    assert books["epub"]["state"] == "ok" and books["epub"]["title"]
    assert books["pdf"]["state"] == "damaged"
    assert books["pdf"]["damaged"]["file"] == "manifest.json"
    assert any(d["code"] == "BOOK_DAMAGED" and "pdf" in d["message"]
               for d in env["diagnostics"])
    # Every other book is still served.
    assert not (await call(data, "book_search", {"book_id": "epub", "query": "sea"}))[0]


def test_book_agent_list_marks_the_damaged_book_and_lists_the_rest(data):
    _truncate(version_dir(data) / "manifest.json")
    done = book_agent(["--data-dir", str(data), "list"], text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = {line.split()[0]: line for line in done.stdout.splitlines() if line.strip()}
    assert "epub" in lines and "pdf" in lines, done.stdout
    assert "DAMAGED" in lines["pdf"] and "manifest.json" in lines["pdf"]
    assert "DAMAGED" not in lines["epub"]


async def test_a_locator_issued_before_the_source_changed_is_not_verified(data):
    found = (await call(data, "book_locate_source", {"book_id": "pdf",
                                                     "text": "harbour light guides"}))[1]
    locator = found["items"][0]["locator"]
    _flip_byte(_source(version_dir(data)))
    is_error, env = await call(data, "book_read_source", {"locator": locator})
    assert_damaged(is_error, env, "source/")
    assert "verified" not in (env.get("data") or {})
