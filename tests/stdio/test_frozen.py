"""The frozen bundle behaves like ``python -m``: stdio purity, tools, self-test, receipts.

Every program of the catalogue is its own thin executable over the one copy of the modules in
``_internal/``, and the bundle stays within ``build/freeze.py``'s budget.

Runs when ``READINGROOM_FROZEN_DIR`` names a bundle made by ``python build/freeze.py``
(``.ci/run`` freezes and sets it); skipped with a visible reason otherwise, and failing instead
when ``READINGROOM_REQUIRE_FROZEN=1``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from readingroom.catalog import BUNDLED_PROGRAMS
from readingroom.core.rawstdio import RawStdioClient
from readingroom.ndl.fake import FakeSru
from readingroom.setup import self_tests

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "build"))
import freeze  # noqa: E402

SUFFIX = ".exe" if sys.platform == "win32" else ""
THIN_MIB = 4
"""An executable is the bootloader, PyInstaller's bootstrap and one entry script (0.1 MiB
on Linux); one that carried the modules (a PYZ archive) weighed 13 MiB."""


@pytest.fixture(scope="module")
def bundle() -> Path:
    configured = os.environ.get("READINGROOM_FROZEN_DIR")
    if not configured:
        message = "no frozen bundle: set READINGROOM_FROZEN_DIR after `python build/freeze.py`"
        if os.environ.get("READINGROOM_REQUIRE_FROZEN") == "1":
            pytest.fail(message)
        pytest.skip(message)
    path = Path(configured).resolve()
    assert (path / f"ndl-mcp{SUFFIX}").is_file(), f"{path} has no ndl-mcp"
    return path


def test_frozen_readingroom_self_test_uses_each_servers_sibling_executable(bundle):
    done = subprocess.run([str(bundle / f"readingroom{SUFFIX}"), "self-test", "--json"],
                          capture_output=True, text=True, encoding="utf-8", timeout=300)
    report = json.loads(done.stdout)
    assert done.returncode == 0 and report["ok"], done.stdout + done.stderr
    commands = {r["server"]: r["command"] for r in report["servers"]}
    own = {s.name: [str(bundle / f"{s.name}{SUFFIX}")] for s in self_tests.testable_servers()}
    assert commands == own
    assert "ndl-mcp" in commands


@pytest.mark.parametrize("name", BUNDLED_PROGRAMS)
def test_every_catalogue_program_is_a_thin_executable_with_its_own_help(bundle, name):
    exe = bundle / f"{name}{SUFFIX}"
    assert exe.is_file() and not exe.is_symlink(), f"{exe} is not an executable of its own"
    assert exe.stat().st_size < THIN_MIB * 2**20, f"{exe} carries more than its entry script"
    # The same program from the environment: its console script, beside this interpreter.
    script = Path(sys.executable).with_name(f"{name}{SUFFIX}")
    frozen, installed = (subprocess.run([str(cmd), "--help"], capture_output=True, text=True,
                                        encoding="utf-8", timeout=120) for cmd in (exe, script))
    assert frozen.returncode == 0, frozen.stderr[-2000:]
    assert name in (frozen.stdout or frozen.stderr).split(), "--help does not name the program"
    assert (frozen.returncode, frozen.stdout, frozen.stderr) == (
        installed.returncode, installed.stdout, installed.stderr)


def test_the_bundle_holds_its_modules_once_within_the_budget(bundle):
    size, _allocated, files, _links = freeze.disk_usage(bundle)
    assert size <= freeze.BUDGET_MIB * 2**20, f"{size / 2**20:.1f} MiB in {files} files"


def test_frozen_ndl_mcp_speaks_clean_json_rpc(bundle, tmp_path):
    ledger = tmp_path / "r.jsonl"
    with FakeSru() as fake:
        env = dict(os.environ, NDL_SRU_URL=fake.url, MCP_RECEIPT_LOG=str(ledger))
        with RawStdioClient([str(bundle / f"ndl-mcp{SUFFIX}")], env=env) as client:
            init = client.initialize()
            tools = client.request("tools/list", {})["result"]["tools"]
            ok = client.call_tool("ndl_search_books", {"title": "吾輩は猫である"})
            bad = client.call_tool("ndl_search_books", {"title": "War and Peace"})
            assert client.close() == 0
            assert client.stdout_problems() == []
    assert init["result"]["serverInfo"]["version"] != "unknown"
    assert len(tools) == 6
    assert not ok["isError"] and ok["structuredContent"]["items"]
    assert bad["structuredContent"]["error"]["code"] == "RESERVED_WORD_IN_QUERY"
    verify = subprocess.run([str(bundle / f"readingroom{SUFFIX}"), "receipts", "verify",
                             str(ledger)], capture_output=True, text=True, timeout=60)
    assert verify.returncode == 0 and "1 receipts" in verify.stdout


def test_frozen_help_and_version_do_not_touch_stdout_protocol(bundle):
    done = subprocess.run([str(bundle / f"ndl-mcp{SUFFIX}"), "--version"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout == "" and "ndl-mcp" in done.stderr


def test_release_archive_carries_bundle_installer_licences_and_source(bundle):
    import zipfile

    archives = sorted(bundle.parent.glob("readingroom-*.zip"))
    if not archives:
        pytest.skip("no release archive: run `python build/freeze.py --zip`")
    with zipfile.ZipFile(archives[-1]) as z:
        names = z.namelist()
        assert len(names) == len(set(names)), "an archive entry stored twice"
        top = names[0].split("/", 1)[0]
        notice = z.read(f"{top}/SOURCE.txt").decode("utf-8")
        licence = z.read(f"{top}/LICENSE").decode("utf-8")
    assert f"{top}/readingroom/ndl-mcp{SUFFIX}" in names
    assert f"{top}/readingroom/readingroom{SUFFIX}" in names
    assert f"{top}/installer/install.ps1" in names and f"{top}/README.md" in names
    assert f"{top}/source/source.zip" in names
    assert "GNU AFFERO GENERAL PUBLIC LICENSE" in licence
    assert "complete corresponding source" in notice
    third_party = {n.split("/")[2] for n in names if n.startswith(f"{top}/licenses/")}
    assert any(t.lower().startswith("mcp-") for t in third_party)
    assert any(t.lower().startswith("lxml-") for t in third_party)


def test_frozen_book_agent_runs_the_demo(bundle, tmp_path):
    """PyMuPDF, ebooklib and the package data survive freezing, and stdout stays JSON."""
    done = subprocess.run([str(bundle / f"book-agent{SUFFIX}"), "--json", "demo", "--keep",
                           str(tmp_path / "demo")], capture_output=True, text=True,
                          encoding="utf-8", timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout)["data"]["ok"] is True
    assert "FAIL" not in done.stderr


def test_frozen_book_agent_serves_mcp(bundle, tmp_path):
    """The frozen book-agent's `mcp`: initialize, tools/list, a search and a rendered page."""
    import base64

    from readingroom.book.selftest import make_self_test_pdf

    exe = str(bundle / f"book-agent{SUFFIX}")
    data = tmp_path / "data"
    pdf = make_self_test_pdf(tmp_path / "book.pdf")
    done = subprocess.run([exe, "--data-dir", str(data), "init", str(pdf), "--id", "frozen"],
                          capture_output=True, text=True, encoding="utf-8", timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    with RawStdioClient([exe, "--data-dir", str(data), "mcp"], env=dict(os.environ)) as client:
        init = client.initialize(timeout=120)
        tools = client.request("tools/list", {})["result"]["tools"]
        found = client.call_tool("book_search", {"book_id": "frozen", "query": "harbour"})
        page = client.call_tool("book_render_page", {"book_id": "frozen", "page_index": 1,
                                                     "dpi": 72})
        assert client.close() == 0
        assert client.stdout_problems() == []
    assert init["result"]["serverInfo"]["name"] == "book-agent"
    assert len(tools) == 10
    assert found["structuredContent"]["items"][0]["heading_path"] == ["Ships"]
    image = next(b for b in page["content"] if b["type"] == "image")
    assert base64.b64decode(image["data"])[:8] == b"\x89PNG\r\n\x1a\n"
    assert page["structuredContent"]["data"]["image_attached"] is True


def test_frozen_book_agent_searches_by_meaning_as_python_does(bundle, tmp_path):
    """numpy, tokenizers and safetensors survive freezing (their libraries load, untouched)."""
    import importlib.util

    from readingroom.book.selftest import make_self_test_pdf

    spec = importlib.util.find_spec("static_model")  # the test extra's real model2vec model
    assert spec and spec.submodule_search_locations, "tokenlearn-static-model is not installed"
    model = str(Path(next(iter(spec.submodule_search_locations))) / "model")
    pdf = make_self_test_pdf(tmp_path / "book.pdf")
    hits = []
    for exe in (bundle / f"book-agent{SUFFIX}", Path(sys.executable).with_name(
            f"book-agent{SUFFIX}")):
        data = tmp_path / exe.parent.name
        for words in (["init", str(pdf), "--id", "meaning"],
                      ["--json", "search", "meaning", "harbour"]):
            done = subprocess.run([str(exe), "--data-dir", str(data), *words,
                                   "--semantic-model", model], capture_output=True, text=True,
                                  encoding="utf-8", timeout=300)
            assert done.returncode == 0, f"{exe} {words[0]}: {done.stderr[-2000:]}"
        answer = json.loads(done.stdout)
        assert answer["data"]["modes"]["semantic"] == "ok", answer["data"]["mode_details"]
        hits.append([(i["record_id"], i["matched_by"], round(i["scores"]["semantic"], 5))
                     for i in answer["items"]])
    frozen, installed = hits
    assert frozen == installed and "semantic" in frozen[0][1]
