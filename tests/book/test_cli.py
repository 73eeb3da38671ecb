"""``book-agent`` as a real subprocess: JSON output, progress, one-line errors, files written."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .make_books import make_pdf

# Starts real server or command processes: left out of the quick tier (tests/conftest.py).
pytestmark = pytest.mark.stdio

CLI = [sys.executable, "-m", "readingroom.book"]


def run(data: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, "--data-dir", str(data), *args], capture_output=True,
                          text=True, encoding="utf-8", timeout=timeout)


def test_init_search_locate_render_round_trip(tmp_path):
    src = make_pdf(tmp_path / "book.pdf", ["Alpha beta gamma on the first page.",
                                           "Delta epsilon on the second page."],
                   outline=[(1, "One", 1), (1, "Two", 2)])
    data = tmp_path / "data"
    init = run(data, "--json", "init", str(src), "--id", "demo")
    assert init.returncode == 0, init.stderr
    env = json.loads(init.stdout)
    assert env["operation"] == "book_init" and env["data"]["units"] == 2
    assert "2/2 pages" in init.stderr  # progress went to stderr, not stdout

    found = json.loads(run(data, "--json", "search", "demo", "epsilon").stdout)
    assert found["items"][0]["heading_path"] == ["Two"]

    located = json.loads(run(data, "--json", "locate", "demo", "--text", "Delta epsilon").stdout)
    assert located["data"]["status"] == "verified"
    loc_file = tmp_path / "loc.json"
    loc_file.write_text(json.dumps(located["items"][0]["locator"]), encoding="utf-8")
    read = run(data, "read-source", f"@{loc_file}")
    assert read.returncode == 0 and read.stdout.strip() == "Delta epsilon"

    png = tmp_path / "p.png"
    assert run(data, "render-page", "demo", "1", "--out", str(png)).returncode == 0
    assert png.read_bytes().startswith(b"\x89PNG")

    export = tmp_path / "skills"
    assert run(data, "skill", "export", "demo", "--dir", str(export)).returncode == 0
    assert (export / "demo" / "SKILL.md").is_file()
    listed = run(data, "list")
    assert "demo" in listed.stdout and listed.returncode == 0


def test_errors_are_one_line_with_remediation_and_non_zero(tmp_path):
    bad = tmp_path / "notes.docx"
    bad.write_bytes(b"PK\x03\x04")
    done = run(tmp_path / "data", "init", str(bad))
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "UNSUPPORTED_FORMAT" in lines[0] and " — " in lines[0]
    assert done.stdout == ""
    assert not (tmp_path / "data" / "books" / "notes").exists() or not any(
        p.name.startswith("v") for p in (tmp_path / "data" / "books" / "notes").iterdir())
    missing = run(tmp_path / "data", "--json", "status", "nothing")
    assert missing.returncode == 1
    assert json.loads(missing.stdout)["error"]["code"] == "BOOK_NOT_FOUND"


def test_demo_runs_end_to_end(tmp_path):
    done = subprocess.run([*CLI, "demo", "--keep", str(tmp_path / "demo")],
                          capture_output=True, text=True, encoding="utf-8", timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "FAIL" not in done.stderr
    for name in ("init demo-pdf", "search (two-character Japanese)", "locate --text",
                 "render-page", "EPUB locator", "Book Skill"):
        assert f"PASS  {name}" in done.stderr
    assert list((tmp_path / "demo").glob("page-*.png"))
