"""Attack: `remove` of a book while an `init` of the same id is building.

Before the fix `remove` took the book's lock only to delete the versions, released it and then
deleted the whole book folder, the in-progress `.build-*` included: the init went on to fail
with a false "CORRUPT_SOURCE: the PDF is damaged" or a FileNotFoundError traceback, and its lock
file was gone. Now one lock (outside the book folder) covers starting a build, publishing and
removing; a build folder names its owning process, and `remove` refuses with BOOK_BUSY while a
live process builds. The init finishes as if nothing had happened; a later remove succeeds.
"""

from __future__ import annotations

import threading

import pytest
from tests.book.make_books import make_pdf

from readingroom.book.service import BookService
from readingroom.core.errors import Code, CoreError

WAIT = 30.0


def _paused_init(service: BookService, src, book_id: str, *, replace: bool):
    """Start an init in a thread that stops inside ingest until ``go`` is set."""
    building, go = threading.Event(), threading.Event()
    outcome: dict = {}

    def progress(_what: str, _done: int, _total: int) -> None:
        if not building.is_set():
            building.set()
            assert go.wait(WAIT)

    def run() -> None:
        try:
            outcome["env"] = service.init(src, book_id=book_id, replace=replace,
                                          progress=progress)
        except BaseException as exc:  # reported by the test
            outcome["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    assert building.wait(WAIT), "the init never started ingesting"
    return thread, go, outcome


@pytest.fixture
def book(tmp_path):
    src = make_pdf(tmp_path / "b.pdf", ["First page text.", "Second page text.",
                                        "Third page text."])
    return BookService(tmp_path / "data"), src, tmp_path / "data" / "books" / "b"


def test_remove_during_a_replacing_init_is_busy_and_the_init_completes(book):
    service, src, book_dir = book
    service.init(src, book_id="b")
    thread, go, outcome = _paused_init(service, src, "b", replace=True)
    try:
        with pytest.raises(CoreError) as e:
            service.remove("b")
        assert e.value.code is Code.BOOK_BUSY
        assert "building" in e.value.message and e.value.details["builds"]
        assert list(book_dir.glob(".build-*")), "the in-progress build was deleted"
        assert service.registry.get("b").version == 1  # nothing was unregistered
    finally:
        go.set()
        thread.join(WAIT)
    assert "error" not in outcome, outcome.get("error")
    assert outcome["env"].data["version"] == 2
    assert service.remove("b").data["versions_removed"] == 2
    assert not book_dir.exists()


def test_remove_during_a_first_init_leaves_the_build_alone(book):
    service, src, book_dir = book
    thread, go, outcome = _paused_init(service, src, "b", replace=False)
    try:
        with pytest.raises(CoreError) as e:
            service.remove("b")
        assert e.value.code is Code.BOOK_NOT_FOUND  # nothing registered yet
        assert list(book_dir.glob(".build-*"))
    finally:
        go.set()
        thread.join(WAIT)
    assert "error" not in outcome, outcome.get("error")
    assert service.registry.get("b").version == 1


def test_a_held_lock_makes_remove_busy_not_a_traceback(book):
    service, src, _ = book
    service.init(src, book_id="b")
    holding, release = threading.Event(), threading.Event()

    def hold() -> None:
        with service.registry._locked("b"):
            holding.set()
            release.wait(WAIT)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert holding.wait(WAIT)
        with pytest.raises(CoreError) as e, service.registry._locked("b", timeout=0.05):
            pass
        assert e.value.code is Code.BOOK_BUSY
    finally:
        release.set()
        holder.join(WAIT)
    assert service.remove("b").data["versions_removed"] == 1
