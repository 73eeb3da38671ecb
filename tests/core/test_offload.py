"""The worker pool of blocking work: bounded, and a pool of its own in a forked child."""

from __future__ import annotations

import asyncio
import os
import threading

import pytest

from readingroom.core import offload


def test_work_runs_off_the_loop_and_its_exception_is_raised_in_the_caller() -> None:
    async def main() -> tuple[str, str]:
        name = await offload.run_blocking(lambda: threading.current_thread().name)
        with pytest.raises(ZeroDivisionError):
            await offload.run_blocking(lambda: 1 / 0)
        return name, threading.current_thread().name

    worker, loop = asyncio.run(main())
    assert worker.startswith("readingroom-work") and worker != loop


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_forked_child_runs_work_on_a_pool_of_its_own() -> None:
    """The parent's pool threads do not survive a fork; the child must not queue on them."""
    assert asyncio.run(offload.run_blocking(lambda: "parent")) == "parent"
    assert offload._pool is not None, "the parent's pool exists before the fork"
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: answer through the pipe, never return into pytest
        status = 1
        try:
            async def main() -> str:
                return await asyncio.wait_for(offload.run_blocking(lambda: "child"), 10)

            os.write(write, asyncio.run(main()).encode())
            status = 0
        except BaseException as exc:  # whatever happened, say it and exit
            os.write(write, f"{type(exc).__name__}".encode())
        finally:
            os._exit(status)
    os.close(write)
    with os.fdopen(read, "rb") as answer:
        said = answer.read().decode()
    _, status = os.waitpid(pid, 0)
    assert (said, os.waitstatus_to_exitcode(status)) == ("child", 0)
