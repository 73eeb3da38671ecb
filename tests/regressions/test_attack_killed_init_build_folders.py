"""Attack: `init` killed mid-build (SIGKILL), again and again.

Every kill left the registry intact, but 7 of 20 left a `.build-*` folder holding a full copy of
the source, never cleaned. Now a build folder's name records its process (pid and a host tag):
the next build start or `status` deletes builds whose process has died on this host; builds of
live processes, of other hosts, and fresh folders without an owner (made before owners were
recorded) are left alone, and ownerless ones older than an hour count as stale.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time

import pytest
from tests.book.make_books import make_pdf

from readingroom.book.package import STALE_UNOWNED_BUILD_SECONDS
from readingroom.book.service import BookService

# Starts real server or command processes: left out of the quick tier (tests/conftest.py).
pytestmark = pytest.mark.stdio

CLI = [sys.executable, "-m", "readingroom.book"]

KILLED_INIT = textwrap.dedent("""
    import os, signal, sys
    from readingroom.book.service import BookService

    def die(_what, done, _total):
        if done >= 1:  # mid-ingest, after the source was copied into the build folder
            os.kill(os.getpid(), getattr(signal, "SIGKILL", signal.SIGTERM))

    BookService(sys.argv[1]).init(sys.argv[2], book_id="b", replace=True, progress=die)
""")


def _kill_an_init(data, src) -> None:
    done = subprocess.run([sys.executable, "-c", KILLED_INIT, str(data), str(src)],
                          capture_output=True, timeout=120)
    assert done.returncode != 0  # it really died


def _builds(data):
    return sorted((data / "books" / "b").glob(".build-*"))


def test_status_and_init_remove_builds_of_killed_inits(tmp_path):
    src = make_pdf(tmp_path / "b.pdf", ["One page.", "Two page.", "Three page."])
    data = tmp_path / "data"
    service = BookService(data)
    service.init(src, book_id="b")
    _kill_an_init(data, src)
    first = _builds(data)
    assert len(first) == 1 and (first[0] / "source" / "b.pdf").is_file()  # the attack
    _kill_an_init(data, src)
    second = _builds(data)
    assert len(second) == 1 and second != first  # the next build start swept the first

    status = subprocess.run([*CLI, "--data-dir", str(data), "--json", "status", "b"],
                            capture_output=True, text=True, encoding="utf-8", timeout=60)
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["data"]["stale_builds_removed"] == 1
    assert _builds(data) == []
    assert service.registry.get("b").version == 1

    _kill_an_init(data, src)
    assert len(_builds(data)) == 1
    assert service.init(src, book_id="b", replace=True).data["version"] == 2
    assert _builds(data) == []


def test_live_foreign_and_fresh_unowned_builds_are_kept(tmp_path):
    src = make_pdf(tmp_path / "b.pdf", ["Only page."])
    service = BookService(tmp_path / "data")
    service.init(src, book_id="b")
    book_dir = tmp_path / "data" / "books" / "b"
    mine = service.registry.new_build_dir("b")  # this (live) process owns it
    foreign = book_dir / f".build-p{os.getpid() + 1}-h00000000-x"  # another host
    fresh, old = book_dir / ".build-legacy1", book_dir / ".build-legacy2"
    for folder in (foreign, fresh, old):
        folder.mkdir()
    past = time.time() - STALE_UNOWNED_BUILD_SECONDS - 60
    os.utime(old, (past, past))
    status = service.status("b").data
    assert status["stale_builds_removed"] == 1 and status["builds_in_progress"] == 3
    assert sorted(_builds(tmp_path / "data")) == sorted([mine, foreign, fresh])
    service.registry.discard(mine)
    assert not mine.exists() and book_dir.is_dir()
