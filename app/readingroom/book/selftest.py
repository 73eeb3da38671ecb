"""book-agent's self-test: the installed program ingests a small book and serves it over MCP.

Writes a three-page PDF (with an outline) into a temporary data folder, registers it with the
program's own ``init`` (so the installed PyMuPDF and ingester are what is tested), then starts
``book-agent --data-dir TMP mcp`` as a real stdio subprocess and checks: ``initialize``, the
ten read-only tools, ``book_list``, a search that finds the planted page, a locator verified
against the raw source, a page rendered as a decodable PNG that the result attaches, and a
failure answered as the structured error object. The shared checks of
:mod:`readingroom.core.selftest` add the published envelope schema and stdout purity.
book-agent sends nothing upstream, so there is no receipt chain and no credit line to check.
No network, no user data: the user's own books are never opened.
"""

from __future__ import annotations

import base64
import struct
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from ..core.rawstdio import RawStdioClient
from ..core.selftest import (
    SelfTestReport,
    check_envelope_schema,
    check_read_only_tools,
    check_stdout_purity,
    server_env,
    stderr_tail,
    structured,
)
from ..core.settings import ENV_SERVER_CONCURRENCY, ENV_TOOL_DEADLINE
from . import ENV_DATA_DIR

__all__ = ["BOOK_ID", "EXPECTED_TOOLS", "PAGES", "make_self_test_pdf", "run_self_test"]

BOOK_ID = "self-test"
EXPECTED_TOOLS = {"book_status", "book_get_skill", "book_search", "book_read_entry",
                  "book_read_markdown", "book_locate_source", "book_read_source",
                  "book_render_page", "book_read_epub_image", "book_list"}
PAGES = ("Whales swim in the cold northern sea.",
         "Ships sail past the harbour light at dusk.",
         "The lighthouse keeper writes the logbook.")
"""One line per page; the search and the locator look for words of the second page."""
INIT_TIMEOUT_S = 120.0


def make_self_test_pdf(path: Path) -> Path:
    """Write the self-test's three-page PDF (one heading per page in the outline)."""
    import pymupdf

    doc = pymupdf.open()
    for text in PAGES:
        page = doc.new_page(width=595, height=842)
        page.insert_text((72, 96), text, fontsize=12)
    doc.set_toc([[1, text.split()[0], n] for n, text in enumerate(PAGES, start=1)])
    doc.save(path)
    doc.close()
    return path


def _default_command() -> list[str]:
    from . import SERVER

    return SERVER.command()


def _png_size(data: bytes) -> tuple[int, int] | None:
    if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        return None
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def run_self_test(
    command: Sequence[str] | None = None,
    *,
    progress: Callable[[str], None] | None = None,
) -> SelfTestReport:
    """Run every check against book-agent and return the report (never raises for a check).

    Args:
        command: the program's command line, before ``--data-dir``; default
            ``readingroom.book.SERVER.command()`` (the frozen book-agent beside this
            executable, else ``python -m readingroom.book``).
        progress: called with a short line before each stage.
    """
    say = progress or (lambda _m: None)
    argv = list(command) if command else _default_command()
    report = SelfTestReport(server="book-agent", command=argv)
    began = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="readingroom-selftest-book-") as tmp:
        root = Path(tmp)
        data = root / "data"
        errlog_path = root / "stderr.log"
        env = server_env({}, drop=[ENV_TOOL_DEADLINE, ENV_SERVER_CONCURRENCY, ENV_DATA_DIR])
        with open(errlog_path, "wb") as errlog:
            try:
                if _ingest(report, argv, env, root, data, say):
                    _exercise(report, argv, env, data, errlog, say)
            except Exception as exc:  # the report must say what broke, not a traceback
                report.add("server ran", False, f"{type(exc).__name__}: {exc}")
        stderr_tail(report, errlog_path)
    report.seconds = time.monotonic() - began
    return report


def _ingest(report: SelfTestReport, argv: list[str], env: dict[str, str], root: Path,
            data: Path, say: Callable[[str], None]) -> bool:
    say("writing and registering a three-page PDF")
    pdf = make_self_test_pdf(root / "self-test.pdf")
    done = subprocess.run([*argv, "--data-dir", str(data), "--json", "init", str(pdf), "--id",
                           BOOK_ID], env=env, capture_output=True, timeout=INIT_TIMEOUT_S,
                          stdin=subprocess.DEVNULL)
    detail = done.stderr.decode("utf-8", "replace").strip().splitlines()
    return report.add("init of a generated PDF", done.returncode == 0,
                      f"exit {done.returncode}" + (f"; {detail[-1]}" if done.returncode
                                                   and detail else ", 3 pages registered"))


def _exercise(report: SelfTestReport, argv: list[str], env: dict[str, str], data: Path,
              errlog: BinaryIO, say: Callable[[str], None]) -> None:
    envelopes: list[dict[str, Any]] = []
    say("starting book-agent mcp")
    with RawStdioClient([*argv, "--data-dir", str(data), "mcp"], env=env,
                        stderr=errlog) as client:
        init = client.initialize(timeout=60)
        info = init.get("result", {}).get("serverInfo", {})
        report.add("initialize", info.get("name") == "book-agent",
                   f"serverInfo {info.get('name')} {info.get('version')}")
        tools = client.request("tools/list", {}).get("result", {}).get("tools", [])
        check_read_only_tools(report, tools, EXPECTED_TOOLS, open_world=False)

        listed = structured(client.call_tool("book_list", {}))
        envelopes.append(listed)
        ids = [b.get("book_id") for b in listed.get("items") or []]
        report.add("book_list", ids == [BOOK_ID], f"books: {ids}")

        say("searching, locating, rendering")
        found = structured(client.call_tool("book_search", {"book_id": BOOK_ID,
                                                            "query": "harbour light"}))
        envelopes.append(found)
        hits = found.get("items") or []
        pages = [h.get("unit_start") for h in hits[:1]] if hits else []
        modes = (found.get("data") or {}).get("modes", {})
        report.add("book_search", bool(hits) and "Ships" in (hits[0].get("heading_path") or []),
                   f"{len(hits)} hits, first {hits[0].get('heading_path') if hits else None} "
                   f"{pages}; modes lexical={modes.get('lexical')} "
                   f"semantic={modes.get('semantic')}")

        located = structured(client.call_tool("book_locate_source", {
            "book_id": BOOK_ID, "text": "past the harbour light"}))
        envelopes.append(located)
        status = (located.get("data") or {}).get("status")
        candidates = located.get("items") or []
        read: dict[str, Any] = {}
        if status == "verified" and candidates:
            read = structured(client.call_tool("book_read_source",
                                               {"locator": candidates[0]["locator"]}))
            envelopes.append(read)
        text = (read.get("data") or {}).get("text", "")
        report.add("locator verified against the raw source",
                   (read.get("data") or {}).get("verified") is True and "harbour" in text,
                   f"locate {status}, page index "
                   f"{candidates[0]['locator'].get('page_index') if candidates else None}, "
                   f"read back {len(text)} characters")

        rendered = client.call_tool("book_render_page", {"book_id": BOOK_ID, "page_index": 1,
                                                          "dpi": 72})
        env_render = structured(rendered)
        envelopes.append(env_render)
        image: dict[str, Any] = next(
            (b for b in rendered.get("content", []) if b.get("type") == "image"), {})
        size = _png_size(base64.b64decode(image.get("data", "")))
        shown = env_render.get("data") or {}
        report.add("book_render_page attaches a PNG",
                   size is not None and size == (shown.get("width"), shown.get("height"))
                   and shown.get("image_attached") is True,
                   f"{image.get('mimeType')} {size}, image_attached={shown.get('image_attached')}")

        failed = client.call_tool("book_search", {"book_id": "no-such-book", "query": "x"})
        env_failed = structured(failed)
        envelopes.append(env_failed)
        error = env_failed.get("error") or {}
        report.add("a failure is the structured error",
                   failed.get("isError") is True and bool(error.get("code"))
                   and "available_capabilities" in error,
                   f"isError={failed.get('isError')}, code {error.get('code')}")
        check_stdout_purity(report, client, client.close())
    check_envelope_schema(report, envelopes)
