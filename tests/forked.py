"""A command-line program run for a test in a forked copy of the test process.

Most tests of ``book-agent`` and ``readingroom`` are about what the command does (its output,
its exit status, what it leaves in the data folder), not about the interpreter starting. A
new interpreter costs about half a CPU-second to import the program; a fork of the test
process, which has already imported it, costs a few milliseconds and is still a process of its
own: its own file descriptors 0, 1 and 2 (pipes the test reads), its own environment, working
folder and exit status, and nothing it does reaches the test's memory. :func:`run_program`
returns what :func:`subprocess.run` would.

What a fork does not exercise is the start itself: the interpreter, ``__main__`` and the
console script. Tests about those (tracebacks at start-up, signals, terminal control, the
frozen executables, the import budget) start real processes as before, and so does every test
when ``READINGROOM_TEST_FORK=0`` (``.ci/run`` sets it, so CI covers exactly what it covered
before) or where :func:`os.fork` does not exist (Windows).
"""

from __future__ import annotations

import contextlib
import gc
import io
import logging
import os
import signal
import subprocess
import sys
import tempfile
import threading
import traceback
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["ENV_FORK", "book_agent", "forking", "program", "readingroom", "run_program"]

ENV_FORK = "READINGROOM_TEST_FORK"

Entry = Callable[[list[str]], "int | None"]


def forking() -> bool:
    """Whether :func:`run_program` forks (POSIX, unless ``READINGROOM_TEST_FORK=0``)."""
    return hasattr(os, "fork") and os.environ.get(ENV_FORK, "1").strip() != "0"


def _book_agent_main(args: list[str]) -> int | None:
    from readingroom.book.commands.cli import main

    return main(args)


def _readingroom_main(args: list[str]) -> int | None:
    from readingroom.cli import main

    return main(args)


def _program_main(name: str) -> Entry:
    def entry(args: list[str]) -> int | None:
        from readingroom.catalog import server
        from readingroom.programs import run

        return run(server(name), args)

    return entry


def book_agent(args: Sequence[str | os.PathLike[str]],
               **options: Any) -> subprocess.CompletedProcess:
    """``python -m readingroom.book ARGS`` (see :func:`run_program` for ``options``)."""
    return run_program(_book_agent_main, ["-m", "readingroom.book"], args, **options)


def readingroom(args: Sequence[str | os.PathLike[str]],
                **options: Any) -> subprocess.CompletedProcess:
    """``python -m readingroom ARGS`` (see :func:`run_program` for ``options``)."""
    return run_program(_readingroom_main, ["-m", "readingroom"], args, **options)


def program(name: str, args: Sequence[str | os.PathLike[str]],
            **options: Any) -> subprocess.CompletedProcess:
    """``python -m readingroom.programs NAME ARGS``: a server's program (``book-agent``)."""
    return run_program(_program_main(name), ["-m", "readingroom.programs", name], args,
                       **options)


def run_program(
    entry: Entry,
    launcher: Sequence[str],
    args: Sequence[str | os.PathLike[str]],
    *,
    env: Mapping[str, str] | None = None,
    input: str | bytes | None = None,
    timeout: float | None = 120,
    cwd: str | os.PathLike[str] | None = None,
    text: bool = False,
    encoding: str | None = None,
    errors: str | None = None,
    check: bool = False,
) -> subprocess.CompletedProcess:
    """Run ``entry(args)`` as the program ``python LAUNCHER ARGS`` would, and collect it.

    Takes :func:`subprocess.run`'s arguments (output is always captured); the result's
    ``args`` is the command line a real process would have had. With ``text``, ``encoding``
    or ``errors``, output is decoded (UTF-8 unless ``encoding`` says otherwise) and ``input``
    is a string. Without ``input`` the program's stdin is empty (as with ``stdin=DEVNULL``).
    Raises :class:`subprocess.TimeoutExpired` after ``timeout`` seconds, the program killed,
    and with ``check`` :class:`subprocess.CalledProcessError` for a non-zero status.
    """
    words = [os.fspath(a) for a in args]
    command = [sys.executable, *launcher, *words]
    decode = text or encoding is not None or errors is not None
    if not forking():
        return subprocess.run(command, capture_output=True, env=env, input=input,
                              timeout=timeout, cwd=cwd, text=text, encoding=encoding,
                              errors=errors, check=check,
                              stdin=subprocess.DEVNULL if input is None else None)
    data = input.encode(encoding or "utf-8", errors or "strict") if isinstance(input, str) \
        else input
    environment = dict(os.environ if env is None else env)
    in_r, in_w = os.pipe() if data is not None else (os.open(os.devnull, os.O_RDONLY), -1)
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    with warnings.catch_warnings():
        # Python 3.12+ warns that forking a threaded process may deadlock: the child runs only
        # the program, on its own new streams, and takes none of the test's threads' locks.
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # pragma: no cover - the child; it never returns into pytest
        _child(entry, [launcher[-1], *words], environment, cwd, (in_r, out_w, err_w),
               (in_w, out_r, err_r))
    for fd in (in_r, out_w, err_w):
        os.close(fd)
    out, err = bytearray(), bytearray()
    readers = [threading.Thread(target=_drain, args=(fd, sink), daemon=True)
               for fd, sink in ((out_r, out), (err_r, err))]
    for reader in readers:
        reader.start()
    if in_w != -1:
        threading.Thread(target=_feed, args=(in_w, data or b""), daemon=True).start()
    status = _wait(pid, timeout)
    for reader in readers:
        reader.join(timeout=5)
    stdout: bytes | str = bytes(out)
    stderr: bytes | str = bytes(err)
    if decode:
        stdout = _text(bytes(out), encoding, errors)
        stderr = _text(bytes(err), encoding, errors)
    if status is None:
        raise subprocess.TimeoutExpired(command, timeout or 0, output=stdout, stderr=stderr)
    done = subprocess.CompletedProcess(command, status, stdout, stderr)
    if check:
        done.check_returncode()
    return done


def _text(raw: bytes, encoding: str | None, errors: str | None) -> str:
    """``raw`` decoded with universal newlines, as ``subprocess.run(text=True)`` gives it."""
    return raw.decode(encoding or "utf-8", errors or "strict").replace("\r\n", "\n") \
        .replace("\r", "\n")


def _wait(pid: int, timeout: float | None) -> int | None:
    """The child's exit status as ``subprocess`` reports it, or None when it ran out of time."""
    finished = threading.Event()
    status: list[int] = []

    def reap() -> None:
        status.append(os.waitpid(pid, 0)[1])
        finished.set()

    threading.Thread(target=reap, daemon=True).start()
    if not finished.wait(timeout):
        os.kill(pid, signal.SIGKILL)
        finished.wait()
        return None
    return os.waitstatus_to_exitcode(status[0])


def _drain(fd: int, sink: bytearray) -> None:
    with open(fd, "rb", buffering=0) as stream:
        while chunk := stream.read(1 << 16):
            sink += chunk


def _feed(fd: int, data: bytes) -> None:
    with open(fd, "wb", buffering=0) as stream, contextlib.suppress(BrokenPipeError):
        stream.write(data)


def _child(entry: Entry, argv: list[str], env: dict[str, str], cwd: str | os.PathLike[str] | None,
           streams: tuple[int, int, int], parent_ends: tuple[int, int, int],
           ) -> None:  # pragma: no cover - in the child
    """Become the program: fresh standard streams, environment, logging and warnings; run
    ``entry``; leave with its status, running none of the test process's exit handlers."""
    status = 70
    try:
        # The test process's objects are never this program's garbage: scanning them would only
        # copy every page of the parent's heap into the child.
        gc.freeze()
        for fd in parent_ends:  # the test's ends: stdin must see its end of file
            if fd != -1:
                os.close(fd)
        for fd, target in zip(streams, (0, 1, 2), strict=True):
            if fd != target:
                os.dup2(fd, target)
                os.close(fd)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.environ.clear()
        os.environ.update(env)
        tempfile.tempdir = None  # read from TMPDIR and friends again, as a new process would
        if cwd is not None:
            os.chdir(cwd)
        encoding = (getattr(sys.__stdout__, "encoding", None) or "utf-8")
        sys.stdin = sys.__stdin__ = io.TextIOWrapper(
            io.BufferedReader(io.FileIO(0, "r", closefd=False)), encoding=encoding)
        sys.stdout = sys.__stdout__ = io.TextIOWrapper(
            io.BufferedWriter(io.FileIO(1, "w", closefd=False)), encoding=encoding)
        sys.stderr = sys.__stderr__ = io.TextIOWrapper(
            io.BufferedWriter(io.FileIO(2, "w", closefd=False)), encoding=encoding,
            errors="backslashreplace", line_buffering=True)
        sys.argv = argv
        _fresh_logging()
        _fresh_warnings()
        status = _run(entry, argv[1:])
    except BaseException:
        with contextlib.suppress(BaseException):
            traceback.print_exc()
        status = 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(BaseException):
                stream.flush()
        os._exit(status)


def _run(entry: Entry, args: list[str]) -> int:  # pragma: no cover - in the child
    """``sys.exit(entry(args))`` as the interpreter turns it into an exit status."""
    try:
        result = entry(args)
    except SystemExit as stop:
        result = stop.code  # type: ignore[assignment]
    except BaseException:
        traceback.print_exc()
        return 1
    if result is None:
        return 0
    if isinstance(result, int):
        return result & 0xFF
    print(result, file=sys.stderr)
    return 1


def _fresh_logging() -> None:  # pragma: no cover - in the child
    """Logging as a new interpreter has it: no handlers on the root (pytest's capture is)."""
    root = logging.getLogger()
    root.handlers[:] = []
    root.setLevel(logging.WARNING)
    logging.disable(logging.NOTSET)


def _fresh_warnings() -> None:  # pragma: no cover - in the child
    """The interpreter's default warning filters, not pytest's."""
    warnings.resetwarnings()
    warnings.filterwarnings("default", category=DeprecationWarning, module="__main__")
    for category in (DeprecationWarning, PendingDeprecationWarning, ImportWarning,
                     ResourceWarning):
        warnings.filterwarnings("ignore", category=category, append=True)
