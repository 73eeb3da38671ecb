"""``book-agent add FOLDER``: one command for a folder of books, incremental afterwards.

Acceptance 1 on a folder of real fixture books (the small ones, so the suite stays fast): one
command with a progress bar and a summary registers them under derived ids; a second run
reports them unchanged; a changed file gets version 2 and its old locator answers
STALE_LOCATOR; a moved file keeps its book (and its locators); a copy is a duplicate.
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from readingroom.book.commands.cli import _BatchProgress, render_text
from readingroom.book.library.batch import run_add
from readingroom.book.library.sources import SourceSpec, derive_id
from readingroom.book.service import BookService
from readingroom.core.envelope import Envelope
from readingroom.core.errors import Code, CoreError
from tests.forked import book_agent

from ..conftest import fixture_books
from ..make_books import make_encrypted_pdf, make_image_only_pdf, make_pdf

# Starts real server or command processes: left out of the quick tier (tests/conftest.py).
pytestmark = pytest.mark.stdio

SMALL = ("latex-4-pages-numbered.pdf", "regime-anticancer-arabic.epub",
         "venus-and-adonis-epub2.epub", "alice-epub3-images.epub", "georgia-cfi.epub",
         "huckfinn-scanned-page.pdf")


def run(data: Path, *args: str) -> subprocess.CompletedProcess:
    return book_agent(["--data-dir", str(data), *args], text=True, encoding="utf-8",
                      timeout=300)


@pytest.fixture(scope="module")
def shelf(tmp_path_factory):
    """A folder of real fixture books (one in a subfolder) added once by the CLI."""
    root = tmp_path_factory.mktemp("shelf")
    folder = root / "Books"
    (folder / "Poetry").mkdir(parents=True)
    books = fixture_books()
    for name in SMALL:
        target = folder / ("Poetry" if name.startswith("venus") else "") / name
        shutil.copyfile(books / name, target)
    (folder / "notes.txt").write_text("not a book", encoding="utf-8")
    (folder / ".hidden.pdf").write_bytes(b"%PDF-1.4 hidden")
    data = root / "data"
    first = run(data, "add", str(folder), "--recursive", "--allow-image-only")
    return {"root": root, "folder": folder, "data": data, "first": first}


def test_one_command_registers_the_folder_with_progress_and_summary(shelf):
    first = shelf["first"]
    assert first.returncode == 0, first.stderr
    assert "added 6, updated 0, unchanged 0, refused 0 (6 files" in first.stdout
    progress = [line for line in first.stderr.splitlines() if line.startswith("book-agent: [")]
    assert len(progress) == 6 and progress[-1].startswith("book-agent: [6/6] added ")
    assert all("ETA" in line for line in progress)
    listed = run(shelf["data"], "--json", "list")
    ids = {b["book_id"]: b for b in json.loads(listed.stdout)["items"]}
    assert set(ids) == {"latex-4-pages-numbered", "regime-anticancer-arabic",
                        "venus-and-adonis-epub2", "alice-epub3-images", "georgia-cfi",
                        "huckfinn-scanned-page"}
    poem = ids["venus-and-adonis-epub2"]["origin"]
    assert poem == {"kind": "folder", "path": str(shelf["folder"] / "Poetry" /
                                                  "venus-and-adonis-epub2.epub"),
                    "key": poem["key"]}
    text = render_text(Envelope.model_validate(json.loads(listed.stdout)))
    assert f"from folder: {shelf['folder'] / 'Poetry' / 'venus-and-adonis-epub2.epub'}" in text


def test_second_run_reports_everything_unchanged(shelf):
    again = run(shelf["data"], "--json", "add", str(shelf["folder"]), "-r",
                "--allow-image-only")
    assert again.returncode == 0, again.stderr
    env = json.loads(again.stdout)
    assert env["data"]["counts"]["unchanged"] == 6
    assert {i["status"] for i in env["items"]} == {"unchanged"}
    sync = run(shelf["data"], "--json", "sync", "--allow-image-only")
    assert json.loads(sync.stdout)["data"]["counts"]["unchanged"] == 6


def test_changed_file_gets_a_new_version_and_stale_locators(tmp_path):
    folder = tmp_path / "Books"
    folder.mkdir()
    shutil.copyfile(fixture_books() / "latex-4-pages-numbered.pdf", folder / "paper.pdf")
    service = BookService(tmp_path / "data")
    spec = SourceSpec("folder", str(folder))
    assert run_add(service, [spec], jobs=1).data["counts"]["added"] == 1
    loc = service.locate("paper", record_id="r0001").items[0]["locator"]
    assert loc["reference"]["title"] and loc["reference"]["label"] == "page"
    make_pdf(folder / "paper.pdf", ["A different first page.", "And more."])
    env = run_add(service, [spec], jobs=1)
    assert [(i["status"], i["book_id"], i["version"]) for i in env.items] == [
        ("updated", "paper", 2)]
    with pytest.raises(CoreError) as stale:
        service.read_source(loc)
    assert stale.value.code == Code.STALE_LOCATOR


def test_moved_file_is_recognised_and_a_copy_is_a_duplicate(tmp_path):
    folder = tmp_path / "Books"
    folder.mkdir()
    for name in ("georgia-cfi.epub", "alice-epub3-images.epub"):
        shutil.copyfile(fixture_books() / name, folder / name)
    service = BookService(tmp_path / "data")
    spec = SourceSpec("folder", str(folder), recursive=True)
    run_add(service, [spec], jobs=1)
    loc = service.locate("georgia-cfi", record_id="r0001").items[0]["locator"]
    (folder / "Travel").mkdir()
    (folder / "georgia-cfi.epub").rename(folder / "Travel" / "Georgia.epub")
    shutil.copyfile(folder / "alice-epub3-images.epub", folder / "alice copy.epub")
    env = run_add(service, [spec], jobs=1)
    status = {Path(i["path"]).name: (i["status"], i.get("book_id"), i.get("version"))
              for i in env.items}
    assert status == {"Georgia.epub": ("moved", "georgia-cfi", 1),
                      "alice copy.epub": ("duplicate", "alice-epub3-images", None),
                      "alice-epub3-images.epub": ("unchanged", "alice-epub3-images", 1)}
    assert service.status("georgia-cfi").data["origin"]["path"] == \
        str(folder / "Travel" / "Georgia.epub")
    assert service.read_source(loc).data["verified"] is True  # same package, same locator
    assert service.registry.list_ids() == ["alice-epub3-images", "georgia-cfi"]


def test_refusals_are_reported_with_reasons_and_the_exit_status(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    make_pdf(folder / "good.pdf", ["Some readable text here."])
    make_encrypted_pdf(folder / "locked.pdf")
    (folder / "broken.pdf").write_bytes(b"%PDF-1.7\nthis is not a PDF at all\n")
    make_image_only_pdf(folder / "scan.pdf")
    (folder / "big.pdf").write_bytes(b"%PDF-1.4\n" + bytes(300_000))
    done = run(tmp_path / "data", "--json", "add", str(folder), "--max-size", "0.2")
    assert done.returncode == 3, done.stderr
    env = json.loads(done.stdout)
    reasons = {Path(r["path"]).name: r["reason"] for r in env["data"]["refused"]}
    assert reasons["locked.pdf"] == "encrypted"
    assert reasons["broken.pdf"].startswith("unreadable")
    assert reasons["scan.pdf"].startswith("image-only")
    assert reasons["big.pdf"].startswith("too large")
    assert env["data"]["counts"]["added"] == 1 and env["data"]["counts"]["refused"] == 4
    text = render_text(Envelope.model_validate(env))
    assert "refused  -  ← " in text and "encrypted" in text
    again = json.loads(run(tmp_path / "data", "--json", "add", str(folder), "--max-size",
                           "0.2", "--allow-image-only").stdout)
    status = {Path(i["path"]).name: (i["status"], i.get("why")) for i in again["items"]}
    assert status["locked.pdf"] == ("refused", "unchanged since it was refused")  # not re-read
    assert status["scan.pdf"][0] == "added"  # the switch changed: tried again


def test_dry_run_changes_nothing_and_jobs_two_builds_in_workers(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    for n in range(3):
        make_pdf(folder / f"book {n}.pdf", [f"Book number {n} text.", "Second page."])
    service = BookService(tmp_path / "data")
    dry = run_add(service, [SourceSpec("folder", str(folder))], dry_run=True)
    assert [i["status"] for i in dry.items] == ["would_add"] * 3
    assert [i["book_id"] for i in dry.items] == ["book-0", "book-1", "book-2"]
    assert not service.registry.list_ids()
    assert not (tmp_path / "data" / "library" / "sources.json").exists()
    seen = []
    env = run_add(service, [SourceSpec("folder", str(folder))], jobs=2,
                  progress=lambda *a: seen.append(a))
    assert env.data["counts"]["added"] == 3 and env.data["jobs"] == 2
    assert service.registry.list_ids() == ["book-0", "book-1", "book-2"]
    assert seen[-1][0] == 3 and seen[-1][1] == 3
    for book_id in service.registry.list_ids():
        assert service.registry.get(book_id).check(deep=True) == []


def test_derived_ids_are_readable_ascii_and_deduplicated():
    assert derive_id("Straße der Ökologie: Ein Überblick über die Grundlagen der Theorie",
                     set(), from_title=True) == "strasse-der-okologie-ein-uberblick-uber-die"
    assert derive_id("Title", {"title", "title-2"}, from_title=True) == "title-3"
    assert derive_id("CON.pdf", set(), from_title=False) == "con-book"
    assert derive_id("論語", set(), from_title=True) == "book"


def test_progress_bar_on_a_terminal():
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Tty()
    real, sys.stderr = sys.stderr, stream
    try:
        bar = _BatchProgress()
        bar(1, 4, "first.pdf", "building", None)
        bar(2, 4, "first.pdf", "added", 75.0)
        bar(4, 4, "last.pdf", "added", 0.0)
    finally:
        sys.stderr = real
    out = stream.getvalue()
    assert out.count("\r") == 3 and out.endswith("\n")
    assert "2/4 added first.pdf" in out and "ETA 1m15s" in out and "[" + "#" * 24 + "]" in out
