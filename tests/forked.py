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

Servers too: :class:`StdioClient` is :class:`~readingroom.core.rawstdio.RawStdioClient` with
the server forked (:func:`spawn`) when its command line is ``python -m MODULE`` or
``python -c CODE`` and nothing the interpreter reads at start differs from the test process's
(every ``PYTHON*`` variable and ``PYMUPDF_MESSAGE``). The child sees what ``Popen`` would
give it: its pipes on 0, 1 and 2 and no other descriptor of the test process.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import faulthandler
import gc
import io
import logging
import os
import random
import runpy
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import types
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any, BinaryIO

from readingroom.core.rawstdio import RawStdioClient

__all__ = ["ENV_FORK", "ForkedProcess", "StdioClient", "book_agent", "forking", "program",
           "readingroom", "run_program", "spawn"]

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
    pid = _fork()
    if pid == 0:  # pragma: no cover - the child; it never returns into pytest
        _child(entry, [launcher[-1], *words], environment, cwd, (in_r, out_w, err_w))
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


# --- servers: a Popen that forks -----------------------------------------------------------

START_VARIABLES = ("PYMUPDF_MESSAGE",)
"""Variables besides ``PYTHON*`` that a module of the program reads once, at import."""


def _start_settings(env: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k.startswith("PYTHON") or k in START_VARIABLES}


def _fork_plan(argv: Sequence[str], env: Mapping[str, str] | None
               ) -> tuple[Entry, list[str]] | None:
    """What a fork runs for ``argv``, with its ``sys.argv``; None when it must be a new process.

    Only ``python -m MODULE ARGS`` and ``python -c CODE ARGS`` of this interpreter are forked,
    and only when the variables a new interpreter would read at start are the test process's.
    """
    if not forking() or len(argv) < 3 or argv[0] != sys.executable or argv[1] not in ("-m", "-c"):
        return None
    if env is not None and _start_settings(env) != _start_settings(os.environ):
        return None
    option, target, rest = argv[1], argv[2], list(argv[3:])
    if option == "-m":
        def run_module(args: list[str]) -> int | None:
            runpy.run_module(target, run_name="__main__", alter_sys=True)
            return None

        return run_module, [target, *rest]

    def run_code(args: list[str]) -> int | None:
        main = types.ModuleType("__main__")
        sys.modules["__main__"] = main
        exec(compile(target, "<string>", "exec"), main.__dict__)
        return None

    return run_code, ["-c", *rest]


class ForkedProcess:
    """The part of :class:`subprocess.Popen` a stdio client uses, for a forked program."""

    def __init__(self, args: list[str], pid: int, stdin: int, stdout: int) -> None:
        self.args = args
        self.pid = pid
        self.returncode: int | None = None
        self.stdin: BinaryIO = open(stdin, "wb")  # noqa: SIM115 - closed by the client
        self.stdout: BinaryIO = open(stdout, "rb")  # noqa: SIM115
        self.stderr = None
        self._lock = threading.Lock()

    def poll(self) -> int | None:
        """The exit status, or None while the program runs."""
        with self._lock:
            if self.returncode is None:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
                if pid:
                    self.returncode = os.waitstatus_to_exitcode(status)
            return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        """Wait for the exit status; :class:`subprocess.TimeoutExpired` after ``timeout``."""
        deadline = None if timeout is None else time.monotonic() + timeout
        delay = 0.0005  # as Popen.wait(timeout) polls: doubling, at most 50 ms
        while (status := self.poll()) is None:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
            time.sleep(delay if left is None else min(delay, left))
            delay = min(delay * 2, 0.05)
        return status

    def send_signal(self, sig: int) -> None:
        """Signal the program unless it has been reaped."""
        if self.poll() is None:
            os.kill(self.pid, sig)

    def terminate(self) -> None:
        """SIGTERM."""
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        """SIGKILL."""
        self.send_signal(signal.SIGKILL)


def spawn(argv: Sequence[str], *, env: Mapping[str, str] | None = None,
          cwd: str | os.PathLike[str] | None = None,
          stderr: BinaryIO | int | None = subprocess.DEVNULL,
          ) -> subprocess.Popen[bytes] | ForkedProcess:
    """``Popen(argv, stdin=PIPE, stdout=PIPE, stderr=stderr, env=env, cwd=cwd)``, forked from
    the test process when :func:`_fork_plan` allows (``stderr`` a file, a descriptor,
    ``DEVNULL`` or None)."""
    plan = _fork_plan(argv, env)
    if plan is None or stderr in (subprocess.PIPE, subprocess.STDOUT):
        return subprocess.Popen(list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=stderr, env=None if env is None else dict(env), cwd=cwd)
    entry, child_argv = plan
    environment = dict(os.environ if env is None else env)
    if stderr == subprocess.DEVNULL:
        err = os.open(os.devnull, os.O_WRONLY)
    elif stderr is None:
        err = 2
    elif isinstance(stderr, int):
        err = stderr
    else:
        err = stderr.fileno()
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    pid = _fork()
    if pid == 0:  # pragma: no cover - the child
        _child(entry, child_argv, environment, cwd, (in_r, out_w, err))
    os.close(in_r)
    os.close(out_w)
    if stderr == subprocess.DEVNULL:
        os.close(err)
    return ForkedProcess(list(argv), pid, in_w, out_r)


class StdioClient(RawStdioClient):
    """:class:`RawStdioClient` whose server is started by :func:`spawn`."""

    def _launch(self, env: dict[str, str] | None, cwd: str | None,
                stderr: BinaryIO | int | None) -> Any:
        return spawn(self.argv, env=env, cwd=cwd, stderr=stderr)


FORK_RETRY_S = 10.0


def _fork() -> int:
    """:func:`os.fork`, once no thread of the test process is half-way through taking or
    giving back a file lock.

    filelock refuses a fork in that moment (its audit hook raises): the child would inherit
    a lock in no known state. The moment is short, so the fork is tried again.
    """
    deadline = time.monotonic() + FORK_RETRY_S
    while True:
        try:
            with warnings.catch_warnings():
                # Python 3.12+ warns that forking a threaded process may deadlock: the child
                # runs only the program, on its own streams, and takes none of the test's
                # threads' locks.
                warnings.simplefilter("ignore", DeprecationWarning)
                return os.fork()
        except RuntimeError as refused:
            if "filelock" not in str(refused) or time.monotonic() > deadline:
                raise
            time.sleep(0.001)


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
           streams: tuple[int, int, int]) -> None:  # pragma: no cover - in the child
    """Become the program: fresh standard streams, environment, logging and warnings; run
    ``entry``; leave with its status, running none of the test process's exit handlers."""
    status = 70
    try:
        # The test process's objects are never this program's garbage: scanning them would only
        # copy every page of the parent's heap into the child.
        gc.freeze()
        for fd, target in zip(streams, (0, 1, 2), strict=True):
            if fd != target:
                os.dup2(fd, target)
        _park_inherited_descriptors()  # the test's ends too: stdin must see its end of file
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        _fresh_runtime()
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
        with contextlib.suppress(BaseException):
            atexit._run_exitfuncs()  # the program's own: the test process's were cleared
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(BaseException):
                stream.flush()
        os._exit(status)


def _park_inherited_descriptors() -> None:  # pragma: no cover - in the child
    """Every descriptor above 2 pointed at the null device, as ``Popen`` closes them.

    A copy of another server's stdin pipe left open here would keep that server from ever
    seeing its end of file. Parked rather than closed: the test process's objects copied into
    this one still name those numbers, and a number they name must not be handed to a file of
    the program's own.
    """
    null = os.open(os.devnull, os.O_RDWR)
    for name in os.listdir("/dev/fd"):
        fd = int(name)
        if fd > 2 and fd != null:
            with contextlib.suppress(OSError):  # the listing's own descriptor, already gone
                os.dup2(null, fd, inheritable=False)
    os.close(null)  # a number that was free in the test process: nothing there names it


def _fresh_runtime() -> None:  # pragma: no cover - in the child
    """What a new interpreter starts without: the test's event loop, exit handlers, fault
    handler and random state."""
    asyncio.events._set_running_loop(None)  # forked inside a running loop (an async test)
    asyncio.set_event_loop_policy(None)
    with contextlib.suppress(ValueError):  # not the main thread of the test process
        signal.set_wakeup_fd(-1)
    atexit._clear()
    faulthandler.disable()
    random.seed()


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
