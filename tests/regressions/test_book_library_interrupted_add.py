"""``book-agent add`` killed outright (SIGKILL) at a random point, ten times over.

Fault class: a batch interrupted mid-way leaves a half-built or half-published package, or a
registry the next ``add`` cannot continue from. Each trial changes the folder (new files, a
changed one), starts ``add`` as a real process (``--jobs 2`` in three trials), kills it at a
random point of its progress, then checks every registered book is whole (every file's size
and SHA-256 as its manifest recorded). After the last trial one more ``add`` must complete
the set: every file registered at its current SHA-256, nothing left building.
"""

from __future__ import annotations

import hashlib
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.book.make_books import make_epub, make_pdf

from readingroom.book.package import Registry
from readingroom.book.service import BookService

# Starts real server or command processes: left out of the quick tier (tests/conftest.py).
pytestmark = [
    pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX"),
    pytest.mark.stdio,
]
CLI = [sys.executable, "-m", "readingroom.book"]


def _book(folder: Path, n: int, edition: int = 1) -> Path:
    if n % 2:
        return make_epub(folder / f"tale {n}.epub", [(f"Tale {n}", f"<p>Tale {n} edition "
                                                     f"{edition}: once upon a time.</p>")],
                         title=f"Tale {n}")
    return make_pdf(folder / f"essay {n}.pdf", [f"Essay {n} edition {edition}, page one.",
                                                "Page two of the essay."])


def _whole(data: Path) -> list[str]:
    """Every registered book is whole; returns their ids."""
    registry = Registry(data)
    ids = registry.list_ids()
    for book_id in ids:
        assert registry.pointer_damage(book_id) is None, book_id
        pkg = registry.get(book_id)
        assert pkg.check(deep=True) == [], book_id
    return ids


def _kill_after(data: Path, folder: Path, jobs: int, lines: int, extra: float) -> int:
    """Start add, kill it (SIGKILL) after ``lines`` progress lines plus ``extra`` seconds."""
    proc = subprocess.Popen([*CLI, "--data-dir", str(data), "add", str(folder), "--jobs",
                             str(jobs)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    seen = 0
    deadline = time.monotonic() + 60
    while seen < lines and time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        seen += line.startswith("book-agent: [")
    time.sleep(extra)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    proc.stderr.close()
    return seen


def test_sigkill_at_random_points_leaves_no_broken_package(tmp_path):
    rng = random.Random(20)
    folder, data = tmp_path / "books", tmp_path / "data"
    folder.mkdir()
    count = 0
    for trial in range(10):
        for _ in range(2):  # new books every trial, so each run has work to do
            _book(folder, count)
            count += 1
        if count > 4:
            _book(folder, rng.randrange(count - 2), edition=trial + 2)  # a changed file
        _kill_after(data, folder, jobs=2 if trial % 3 == 1 else 1,
                    lines=rng.randrange(0, 3), extra=rng.uniform(0, 0.15))
        _whole(data)
    time.sleep(0.6)  # the workers' watchdog notices a dead parent within half a second
    done = subprocess.run([*CLI, "--data-dir", str(data), "add", str(folder)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    ids = _whole(data)
    service = BookService(data)
    assert len(ids) == count
    registered = {}
    for book_id in ids:
        m = service.registry.get(book_id).manifest
        registered[m["library"]["origin"]["path"]] = m["source"]["sha256"]
    for path in folder.iterdir():
        assert registered[str(path)] == hashlib.sha256(path.read_bytes()).hexdigest()
    service.status()  # sweeps the build folders of the killed processes
    leftovers = [p for p in (data / "books").glob("*/.build-*")]
    assert leftovers == []
    assert all(service.registry.builds_in_progress(b) == 0 for b in ids)
