"""The MCP server's worker pool deadlines and its page-rendering child processes.

MuPDF holds the GIL for a whole render (issue 18 §9), so the server renders in children
(:class:`RenderProcesses`); the pool never starts a job past its call's deadline. A child that
never answers is a stand-in process reading its stdin for ever, not a sleep.
"""

from __future__ import annotations

import sys
import threading
import time

import anyio
import pytest

from readingroom.book import mcp_pool
from readingroom.book.mcp_pool import RENDER_CHILD_FLAG, RenderProcesses, WorkerPool, job_deadline
from readingroom.book.render import render_pdf_page
from readingroom.core.errors import Code, CoreError

from ..make_books import make_pdf

# Starts real server processes: left out of the quick tier (tests/conftest.py).
pytestmark = [pytest.mark.anyio, pytest.mark.stdio]
SILENT_CHILD = [sys.executable, "-c", "import sys; sys.stdin.buffer.read()"]


@pytest.fixture(scope="module")
def pdf(tmp_path_factory):
    root = tmp_path_factory.mktemp("render-children")
    return make_pdf(root / "r.pdf", ["Whales swim.", "Ships sail past the light.", "Home."])


@pytest.fixture
def children():
    procs = RenderProcesses(1)
    yield procs
    procs.close()


def test_a_page_rendered_in_a_child_is_the_page_rendered_here(pdf, children):
    here = render_pdf_page(pdf, 1, dpi=40)
    there = children.render(pdf, 1, dpi=40, clip=None)
    assert there == here
    clipped = children.render(pdf, 0, dpi=40, clip=(0, 0, 200, 100))
    assert clipped == render_pdf_page(pdf, 0, dpi=40, clip=(0, 0, 200, 100))
    assert children.stats()["started"] == 1, "one warm child served both"


@pytest.mark.parametrize(("page", "dpi", "clip", "code"), [
    (99, 40, None, Code.NOT_FOUND),
    (0, 40, (5000, 5000, 6000, 6000), Code.INVALID_ARGUMENT),
    (0, 9999, None, Code.INVALID_ARGUMENT),
])
def test_refusals_come_back_as_the_same_typed_errors(pdf, children, page, dpi, clip, code):
    with pytest.raises(CoreError) as here:
        render_pdf_page(pdf, page, dpi=dpi, clip=clip)
    with pytest.raises(CoreError) as there:
        children.render(pdf, page, dpi=dpi, clip=clip)
    assert there.value.code == here.value.code == code
    assert there.value.message == here.value.message
    assert there.value.details == here.value.details


def test_the_frozen_executables_flag_makes_a_render_child(pdf):
    # A frozen book-agent starts itself with RENDER_CHILD_FLAG; here through the same main().
    procs = RenderProcesses(1, command=[sys.executable, "-m", "readingroom.book",
                                        RENDER_CHILD_FLAG])
    try:
        assert procs.render(pdf, 2, dpi=30, clip=None) == render_pdf_page(pdf, 2, dpi=30)
    finally:
        procs.close()


def test_a_child_that_died_is_replaced(pdf, children):
    children.render(pdf, 0, dpi=30, clip=None)
    children._idle[0].proc.kill()
    children._idle[0].proc.wait(10)
    assert children.render(pdf, 0, dpi=30, clip=None).png.startswith(b"\x89PNG")
    assert children.stats()["started"] == 2


def test_a_child_killed_mid_render_is_a_typed_error_then_replaced(pdf):
    procs = RenderProcesses(1, command=SILENT_CHILD)
    failed: list[BaseException] = []

    def render() -> None:
        try:
            procs.render(pdf, 0, dpi=30, clip=None)
        except BaseException as exc:
            failed.append(exc)

    worker = threading.Thread(target=render)
    worker.start()
    with procs._cond:
        assert procs._cond.wait_for(lambda: procs._busy, 10)
        busy = next(iter(procs._busy))
    busy.proc.kill()  # as a crash of MuPDF would
    worker.join(30)
    assert failed and isinstance(failed[0], CoreError)
    assert failed[0].code == Code.INTERNAL_ERROR and "renderer stopped" in failed[0].message
    assert procs.stats()["children"] == 0
    procs.close()


async def test_a_render_past_its_deadline_is_given_up_and_its_child_killed(pdf, monkeypatch):
    monkeypatch.setattr(mcp_pool, "DRAIN_S", 0.2)
    procs = RenderProcesses(1, command=SILENT_CHILD)
    pool = WorkerPool(1)
    began = time.monotonic()
    with pytest.raises(TimeoutError):
        with anyio.fail_after(0.5):
            await pool.run(lambda: procs.render(pdf, 0, dpi=30, clip=None))
    assert time.monotonic() - began < 2.0
    with procs._cond:
        assert procs._cond.wait_for(lambda: procs.stats()["killed_past_deadline"] == 1, 10)
    procs.close()


async def test_a_job_whose_deadline_passed_before_it_started_never_runs(monkeypatch):
    pool = WorkerPool(1)
    ran: list[int] = []
    # As when a starved event loop has not yet delivered the call's cancellation.
    monkeypatch.setattr(mcp_pool, "_effective_deadline", lambda: time.monotonic() - 1.0)
    with pytest.raises(TimeoutError):
        await pool.run(lambda: ran.append(1))
    monkeypatch.undo()
    assert await pool.run(lambda: 7) == 7
    assert ran == []
    assert pool.stats().busy == 0 and pool.stats().queued == 0


async def test_a_job_knows_its_calls_deadline():
    pool = WorkerPool(2)
    assert await pool.run(job_deadline) is None
    with anyio.fail_after(30):
        seen = await pool.run(job_deadline)
        expected = anyio.current_effective_deadline()
    assert seen == pytest.approx(expected)
