"""book-agent's MCP server as a real stdio subprocess (``python -m readingroom.book ... mcp``).

Slow calls are real blocking reads: the test holds an exclusive SQLite lock on a package's
``index.sqlite``, so ``book_search`` blocks in SQLite's busy wait in its worker thread (what a
long native call does to a worker) until the test rolls the lock back, without a sleep
anywhere. (A named pipe in place of ``book.md`` did this before; a package file that is not a
regular file is now BOOK_DAMAGED, never opened.)
"""

from __future__ import annotations

import base64
import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from tests.book.make_books import make_pdf
from tests.book.mcp.library import PDF_PAGES, book_server, envelope, make_library, png_size
from tests.forked import book_agent

from readingroom.book.service import BookService
from readingroom.core.rawstdio import RawStdioClient

TOOLS = {"book_status", "book_get_skill", "book_search", "book_read_entry", "book_read_markdown",
         "book_locate_source", "book_read_source", "book_render_page", "book_read_epub_image",
         "book_list"}


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    return make_library(tmp_path_factory.mktemp("book-mcp"))


@pytest.fixture(scope="module")
def server(data):
    with book_server(data) as client:
        client.initialize()
        yield client


def call(client: RawStdioClient, name: str, **arguments) -> dict:
    return envelope(client.call_tool(name, arguments))


def test_initialize_and_the_ten_read_only_tools(server):
    rid = server.send_request("tools/list", {})
    tools = server.wait(rid)["result"]["tools"]
    assert {t["name"] for t in tools} == TOOLS
    for tool in tools:
        hints = tool["annotations"]
        assert hints["readOnlyHint"] is True and hints["openWorldHint"] is False
        assert hints["destructiveHint"] is False and tool["title"]
        assert tool["inputSchema"]["additionalProperties"] is False
        assert tool["outputSchema"]["type"] == "object"


def test_list_status_search_entry_markdown_skill(server):
    listed = call(server, "book_list")
    assert [b["book_id"] for b in listed["items"]] == ["epub", "pdf"]
    hits = call(server, "book_search", book_id="pdf", query="whales")
    assert hits["items"][0]["heading_path"] == ["Whales"]
    assert "untrusted" in hits["data"]["content_trust"]
    rid = hits["items"][0]["record_id"]
    entry = call(server, "book_read_entry", book_id="pdf", record_id=rid, neighbors=1)
    assert entry["items"][0]["is_target"] and "Whales swim" in entry["items"][0]["text"]
    md = call(server, "book_read_markdown", book_id="pdf", heading="Ships")
    assert "Ships sail" in md["data"]["text"] and md["data"]["total_unit"] == "lines"
    skill = call(server, "book_get_skill", book_id="pdf")
    assert skill["data"]["path"] == "SKILL.md" and "book_" in skill["data"]["text"]
    status = call(server, "book_status", book_id="pdf")
    assert status["data"]["version"] == 1
    warm = {(w["book_id"], w["version"]) for w in status["data"]["server"]["warm"]}
    assert ("pdf", 1) in warm, "the searched package stays loaded in this process"
    assert status["data"]["server"]["workers"]["limit"] == 4


def test_locate_then_read_source_verifies(server):
    found = call(server, "book_locate_source", book_id="pdf", text="past the harbour light")
    assert found["data"]["status"] == "verified"
    locator = found["items"][0]["locator"]
    assert locator["page_index"] == 1
    read = call(server, "book_read_source", locator=locator)
    assert read["data"]["verified"] is True and "harbour light" in read["data"]["text"]
    as_text = call(server, "book_read_source", locator=json.dumps(locator))
    assert as_text["data"]["text"] == read["data"]["text"]


def test_truncated_reads_carry_total_and_a_continuation(server):
    first = call(server, "book_get_skill", book_id="pdf", max_chars=100)
    assert first["data"]["truncated"] is True and first["data"]["total"] > 100
    cont = first["data"]["continuation"]
    assert cont["tool"] == "book_get_skill" and cont["arguments"]["offset"] == 100
    second = call(server, "book_get_skill", **cont["arguments"])
    assert second["data"]["offset"] == 100
    md = call(server, "book_read_markdown", book_id="pdf", start_line=1, max_chars=20)
    assert md["data"]["truncated"] and md["data"]["continuation"]["tool"] == "book_read_markdown"


def test_render_page_attaches_a_decodable_png(server):
    result = server.call_tool("book_render_page", {"book_id": "pdf", "page_index": 0, "dpi": 36})
    env = envelope(result)
    image = next(b for b in result["content"] if b["type"] == "image")
    png = base64.b64decode(image["data"])
    assert image["mimeType"] == "image/png" and env["data"]["image_attached"] is True
    assert png_size(png) == (env["data"]["width"], env["data"]["height"])
    assert len(png) == env["data"]["bytes"]


def test_epub_image_attaches_the_image_in_its_own_type(server):
    found = call(server, "book_locate_source", book_id="epub", text="A red square follows.")
    locator = found["items"][0]["locator"]
    result = server.call_tool("book_read_epub_image", {"book_id": "epub", "locator": locator,
                                                       "href": "images/red.jpg"})
    env = envelope(result)
    image = next(b for b in result["content"] if b["type"] == "image")
    assert image["mimeType"] == "image/jpeg" and env["data"]["image_attached"] is True
    assert base64.b64decode(image["data"])[:3] == b"\xff\xd8\xff"


def test_failures_are_structured_error_objects(server):
    cases = [("book_search", {"book_id": "nope", "query": "x"}, "BOOK_NOT_FOUND"),
             ("book_render_page", {"book_id": "epub", "page_index": 0}, "CAPABILITY_UNAVAILABLE"),
             ("book_read_entry", {"book_id": "pdf", "record_id": "r9999"}, "NOT_FOUND"),
             ("book_search", {"query": "x", "hints": {"page": "0"}}, "INVALID_ARGUMENT"),
             ("book_read_source", {"locator": "{not json"}, "INVALID_LOCATOR"),
             ("book_search", {"book_id": "pdf", "query": "x", "top_k": 99}, "INVALID_ARGUMENT")]
    for name, arguments, code in cases:
        result = server.call_tool(name, arguments)
        assert result["isError"] is True, name
        error = envelope(result)["error"]
        assert error["code"] == code, (name, error)
        assert set(error) == {"code", "message", "details", "remediation",
                              "available_capabilities"}
        assert "book_list" in error["available_capabilities"]


def test_single_book_server_refuses_other_ids(data):
    with book_server(data, "pdf") as client:
        client.initialize()
        assert [b["book_id"] for b in call(client, "book_list")["items"]] == ["pdf"]
        assert call(client, "book_search", query="whales")["items"], "book_id may be omitted"
        found = call(client, "book_locate_source", text="A red", book_id="pdf")
        assert found["data"]["status"] == "not_found"
        for name, arguments in [("book_search", {"book_id": "epub", "query": "sea"}),
                                ("book_status", {"book_id": "epub"}),
                                ("book_get_skill", {"book_id": "epub"})]:
            result = client.call_tool(name, arguments)
            assert envelope(result)["error"]["code"] == "BOOK_NOT_ALLOWED", name
        assert client.close() == 0


def test_other_books_locator_is_refused_by_a_single_book_server(data):
    other = BookService(data).locate("epub", text="The sea is wide").items[0]["locator"]
    with book_server(data, "pdf") as client:
        client.initialize()
        result = client.call_tool("book_read_source", {"locator": other})
        assert envelope(result)["error"]["code"] == "BOOK_NOT_ALLOWED"


@pytest.mark.parametrize("args, says", [
    (["--timeout", "0.5"], "--timeout 0.5 is outside 1-900"),
    (["--timeout", "901"], "outside 1-900"),
    (["--concurrency", "0"], "--concurrency 0 is outside 1-16"),
    (["--concurrency", "17"], "outside 1-16"),
    (["--image-results", "png"], "invalid choice"),
    (["not-registered"], "no registered book 'not-registered'"),
    (["Bad/Id"], "not a valid book id"),
])
def test_out_of_range_launch_options_are_refused_on_stderr(data, args, says):
    done = subprocess.run([sys.executable, "-m", "readingroom.book", "--data-dir", str(data),
                           "mcp", *args], capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 2 and done.stdout == b""
    assert says in done.stderr.decode(), done.stderr


def test_compat_image_results_drop_structured_content_on_image_tools_only(data):
    with book_server(data, "--image-results", "compat") as client:
        client.initialize()
        tools = {t["name"]: t for t in client.wait(client.send_request("tools/list"))
                 ["result"]["tools"]}
        assert "outputSchema" not in tools["book_render_page"]
        assert "outputSchema" in tools["book_search"]
        result = client.call_tool("book_render_page", {"book_id": "pdf", "page_index": 0,
                                                       "dpi": 30})
        assert result.get("structuredContent") is None
        assert [b["type"] for b in result["content"]] == ["text", "image"]
        assert json.loads(result["content"][0]["text"])["data"]["image_attached"] is True
        assert client.call_tool("book_list", {}).get("structuredContent")


def test_cli_and_mcp_give_the_same_records_and_locators(server, data):
    def cli(*words: str) -> dict:
        done = book_agent(["--data-dir", str(data), "--json", *words], timeout=60, check=True)
        return json.loads(done.stdout)

    via_cli = cli("search", "pdf", "harbour light")
    via_mcp = call(server, "book_search", book_id="pdf", query="harbour light")
    assert [h["record_id"] for h in via_cli["items"]] == [h["record_id"] for h in via_mcp["items"]]
    located_cli = cli("locate", "pdf", "--text", "harbour light")
    located_mcp = call(server, "book_locate_source", book_id="pdf", text="harbour light")
    assert [c["locator"] for c in located_cli["items"]] == \
        [c["locator"] for c in located_mcp["items"]]


def test_a_replaced_package_is_picked_up_and_old_locators_are_stale(tmp_path):
    data = tmp_path / "data"
    source = make_pdf(tmp_path / "r.pdf", PDF_PAGES)
    BookService(data).init(source, book_id="r")
    with book_server(data) as client:
        client.initialize()
        old = call(client, "book_locate_source", book_id="r", text="cold northern sea")
        locator = old["items"][0]["locator"]
        assert call(client, "book_read_source", locator=locator)["data"]["verified"]
        BookService(data).init(source, book_id="r", replace=True)
        assert call(client, "book_status", book_id="r")["data"]["version"] == 2
        stale = client.call_tool("book_read_source", {"locator": locator})
        assert envelope(stale)["error"]["code"] == "STALE_LOCATOR"
        fresh = call(client, "book_locate_source", book_id="r", text="cold northern sea")
        assert fresh["items"][0]["locator"]["package_version"] == 2


# --- time, cancellation, threads (named pipes) ------------------------------------------------

def _locked_book(tmp_path: Path, book_id: str = "slow") -> tuple[Path, sqlite3.Connection]:
    """A data folder whose book ``slow`` has its index exclusively locked (searches block)."""
    data = tmp_path / "data"
    service = BookService(data)
    service.init(make_pdf(tmp_path / "s.pdf", PDF_PAGES), book_id=book_id)
    service.init(make_pdf(tmp_path / "f.pdf", PDF_PAGES), book_id="fast")
    index = service.registry.get(book_id).file("index.sqlite")
    # Readers wait in SQLite's busy handler (up to its 5 s timeout) until the rollback.
    lock = sqlite3.connect(index, isolation_level=None, timeout=0)
    lock.execute("BEGIN EXCLUSIVE")
    return data, lock


def _release(lock: sqlite3.Connection) -> None:
    """Let every search blocked on the lock go on."""
    lock.execute("ROLLBACK")
    lock.close()


def _started(client: RawStdioClient, token: str, timeout: float = 30.0) -> None:
    with client._cond:
        ok = client._cond.wait_for(lambda: any(
            m.get("method") == "notifications/progress"
            and m["params"]["progressToken"] == token for m in client.messages), timeout)
    assert ok, f"call {token} never started"


def _wait_for_workers(client: RawStdioClient, *, busy: int, timeout: float = 30.0) -> None:
    """Ask ``book_status`` until ``busy`` pool workers are running (its own call among them)."""
    give_up = time.monotonic() + timeout
    while True:
        workers = call(client, "book_status", book_id="fast")["data"]["server"]["workers"]
        if workers["busy"] >= busy:
            return
        assert time.monotonic() < give_up, f"never {busy} busy workers: {workers}"


def _slow_call(client: RawStdioClient, token: str) -> int:
    return client.send_request("tools/call", {
        "name": "book_search", "arguments": {"book_id": "slow", "query": "whales"},
        "_meta": {"progressToken": token}})


def test_deadline_expiry_is_a_structured_error_and_the_server_goes_on(tmp_path):
    data, pipe = _locked_book(tmp_path)
    with book_server(data, "--timeout", "1", "--concurrency", "2") as client:
        client.initialize()
        result = client.call_tool("book_search", {"book_id": "slow", "query": "whales"})
        error = envelope(result)["error"]
        assert error["code"] == "DEADLINE_EXCEEDED" and error["details"]["deadline_s"] == 1
        assert call(client, "book_search", book_id="fast", query="whales")["items"]
        _release(pipe)
        assert client.close() == 0


def test_cancel_in_the_middle_of_a_slow_call_then_a_successful_call(tmp_path):
    data, pipe = _locked_book(tmp_path)
    with book_server(data, "--concurrency", "2") as client:
        client.initialize()
        rid = _slow_call(client, "slow-1")
        _started(client, "slow-1")
        # Its progress is sent before its job reaches a worker: on a busy machine a cancel sent
        # at once can find it still queued, and it never runs. Cancel it once it holds one.
        _wait_for_workers(client, busy=2)  # the slow read and this status call
        client.notify("notifications/cancelled", {"requestId": rid, "reason": "test"})
        after = call(client, "book_search", book_id="fast", query="ships")
        assert after["items"], "the server answers while the cancelled worker still blocks"
        status = call(client, "book_status", book_id="fast")["data"]["server"]["workers"]
        # Busy: the cancelled read, still blocked in its worker, and this status call.
        assert status["abandoned"] == 1 and status["busy"] == 2
        _release(pipe)
        assert call(client, "book_list")["items"]
        answers = [m for m in client.messages if m.get("id") == rid]
        assert len(answers) <= 1 and all("result" not in m for m in answers)
        assert client.close() == 0
        assert client.stdout_problems() == []


def _threads(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/task"))


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs /proc")
def test_fifty_concurrent_calls_never_exceed_the_worker_limit(tmp_path):
    data, pipe = _locked_book(tmp_path)
    limit = 4
    with book_server(data, "--concurrency", str(limit)) as client:
        client.initialize()
        call(client, "book_list")
        pid = client.proc.pid
        baseline = _threads(pid)
        peak = [baseline]
        stop = threading.Event()

        def sample() -> None:
            while not stop.is_set():
                peak[0] = max(peak[0], _threads(pid))
                stop.wait(0.005)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        rids = {f"c{i}": _slow_call(client, f"c{i}") for i in range(50)}
        # Each call is cancelled as soon as it has started: its admission slot frees, the next
        # call is admitted, and its job must queue behind the blocked workers, not spawn one.
        for token, rid in rids.items():
            _started(client, token)
            client.notify("notifications/cancelled", {"requestId": rid, "reason": "burst"})
        stop.set()
        sampler.join()
        # Every worker is blocked now, so any pool call would wait: free them first.
        _release(pipe)
        workers = call(client, "book_status")["data"]["server"]["workers"]
        assert workers["peak_threads"] <= limit and workers["threads"] <= limit
        assert workers["abandoned"] >= 50 - limit
        # The one worker book_list started is among the limit; stdio threads are in baseline.
        assert peak[0] - baseline <= limit - 1 + 2, (baseline, peak[0])
        assert call(client, "book_search", book_id="fast", query="whales")["items"]
        assert client.close() == 0
