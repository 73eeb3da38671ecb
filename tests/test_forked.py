"""The forked command runner of the tests (:mod:`tests.forked`): a process of its own that
answers as a new interpreter would."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import time

import pytest

from tests import forked

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork on this system")

LAUNCHER = ["-c", "pass"]
SHARED = {"touched": False}


def _run(entry, args=(), **options):
    return forked.run_program(entry, LAUNCHER, list(args), text=True, **options)


@pytest.fixture(autouse=True)
def _fork_on(monkeypatch):
    monkeypatch.delenv(forked.ENV_FORK, raising=False)


def test_the_program_has_its_own_process_streams_and_status():
    def entry(args):
        print("out", *args)
        print("err", file=sys.stderr)
        os.write(1, b"fd one\n")
        return 3

    before = os.getpid()
    done = _run(entry, ["a", "b"])
    assert done.returncode == 3
    # fd 1 is the program's own pipe; print() is buffered as on any pipe, until exit.
    assert done.stdout == "fd one\nout a b\n"
    assert done.stderr == "err\n"
    assert done.args == [sys.executable, "-c", "pass", "a", "b"]
    assert os.getpid() == before


def test_nothing_the_program_changes_reaches_the_test_process(tmp_path):
    def entry(_args):
        SHARED["touched"] = True
        os.environ["FORKED_MARK"] = "set"
        os.chdir("/")
        print(json.dumps({"cwd": os.getcwd(), "mark": os.environ.get("GIVEN"),
                          "pid": os.getpid(), "parent": os.getppid()}))

    here = os.getcwd()
    done = _run(entry, env={**os.environ, "GIVEN": "yes"}, cwd=tmp_path)
    seen = json.loads(done.stdout)
    assert done.returncode == 0
    assert seen["mark"] == "yes" and seen["parent"] == os.getpid() != seen["pid"]
    assert SHARED["touched"] is False and "FORKED_MARK" not in os.environ
    assert os.getcwd() == here


def test_stdin_is_the_input_or_empty():
    def entry(_args):
        print(repr(sys.stdin.read()))

    assert _run(entry, input="line one\nline two").stdout == "'line one\\nline two'\n"
    assert _run(entry).stdout == "''\n"


def test_what_the_interpreter_would_print_and_return():
    def crash(_args):
        raise RuntimeError("not caught")

    def leave(code):
        def entry(_args):
            sys.exit(code)
        return entry

    crashed = _run(crash)
    assert crashed.returncode == 1
    assert crashed.stderr.startswith("Traceback") and "RuntimeError: not caught" in crashed.stderr
    assert _run(leave(4)).returncode == 4
    assert _run(leave(None)).returncode == 0
    said = _run(leave("a message"))
    assert (said.returncode, said.stderr) == (1, "a message\n")


def test_logging_and_warnings_start_fresh(caplog):
    def entry(_args):
        logging.getLogger("readingroom.somewhere").warning("a library warning")
        logging.getLogger("readingroom.somewhere").info("below the default level")

    caplog.set_level(logging.DEBUG)
    done = _run(entry)
    assert done.stderr == "a library warning\n"
    assert "a library warning" not in caplog.text


def test_a_program_past_its_time_is_killed_and_reported():
    def entry(_args):
        print("started", flush=True)
        time.sleep(60)

    started = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired) as expired:
        _run(entry, timeout=0.5)
    assert time.monotonic() - started < 30
    assert expired.value.output == "started\n"


def test_check_raises_for_a_failing_status():
    with pytest.raises(subprocess.CalledProcessError):
        _run(lambda _args: 2, check=True)


@pytest.mark.stdio
@pytest.mark.parametrize("args", [["list", "--json"], ["status", "nothing", "--json"],
                                  ["search", "x", "y", "--limit", "0"]])
def test_a_fork_answers_as_the_real_command_does(tmp_path, monkeypatch, args):
    words = ["--data-dir", str(tmp_path / "data"), *args]
    forked_run = forked.book_agent(words, text=True, encoding="utf-8")
    monkeypatch.setenv(forked.ENV_FORK, "0")
    assert not forked.forking()
    real = forked.book_agent(words, text=True, encoding="utf-8")
    assert (forked_run.returncode, forked_run.stdout, forked_run.stderr) == \
        (real.returncode, real.stdout, real.stderr)
    assert forked_run.args == real.args


# --- servers: spawn() and StdioClient -------------------------------------------------------

ECHO_LINES = ("import sys\n"
              "print('argv', sys.argv[1:], flush=True)\n"
              "for line in sys.stdin:\n"
              "    print('got', line.strip(), flush=True)\n")


def test_a_python_c_program_is_forked_with_pipes_like_popen():
    proc = forked.spawn([sys.executable, "-c", ECHO_LINES, "one", "two"])
    assert isinstance(proc, forked.ForkedProcess)
    assert proc.stdout.readline() == b"argv ['one', 'two']\n"
    proc.stdin.write(b"hello\n")
    proc.stdin.flush()
    assert proc.stdout.readline() == b"got hello\n"
    assert proc.poll() is None
    proc.stdin.close()
    assert proc.wait(30) == 0
    assert proc.stdout.read() == b""


def test_a_forked_program_holds_no_descriptor_of_the_test_process():
    """Another server's stdin copied into this child would keep it from its end of file."""
    first = forked.spawn([sys.executable, "-c", ECHO_LINES])
    second = forked.spawn([sys.executable, "-c", ECHO_LINES])
    assert first.stdout.readline() == second.stdout.readline() == b"argv []\n"
    first.stdin.close()
    assert first.wait(30) == 0  # the second child holds no copy of first's stdin
    assert second.poll() is None
    second.stdin.close()
    assert second.wait(30) == 0


def test_an_unfinished_wait_times_out_and_kill_ends_the_program():
    proc = forked.spawn([sys.executable, "-c", ECHO_LINES])
    assert proc.stdout.readline() == b"argv []\n"
    with pytest.raises(subprocess.TimeoutExpired):
        proc.wait(0.05)
    proc.kill()
    assert proc.wait(30) == -9
    proc.stdin.close()


@pytest.mark.parametrize("argv", [
    ["-X", "importtime", "-c", "pass"],  # an interpreter option
    ["-c", "pass"],  # with a start-up variable of its own (below)
])
def test_what_a_fork_cannot_honour_is_a_new_process(argv, monkeypatch):
    env = dict(os.environ)
    if argv == ["-c", "pass"]:
        env["PYTHONIOENCODING"] = "latin-1"
    proc = forked.spawn([sys.executable, *argv], env=env)
    assert isinstance(proc, subprocess.Popen)
    proc.stdin.close()
    assert proc.wait(30) == 0
    monkeypatch.setenv(forked.ENV_FORK, "0")
    real = forked.spawn([sys.executable, "-c", "pass"])
    assert isinstance(real, subprocess.Popen)
    real.stdin.close()
    assert real.wait(30) == 0


@pytest.mark.stdio
def test_a_forked_server_answers_as_the_real_one_does(tmp_path, monkeypatch):
    """``python -m readingroom.ndl`` through :class:`forked.StdioClient`, forked and not."""
    env = {**os.environ, "MCP_RECEIPT_LOG": str(tmp_path / "receipts.jsonl")}
    answers = []
    for fork in ("1", "0"):
        monkeypatch.setenv(forked.ENV_FORK, fork)
        with forked.StdioClient([sys.executable, "-m", "readingroom.ndl"], env=env) as client:
            assert isinstance(client.proc, forked.ForkedProcess) == (fork == "1")
            init = client.initialize()["result"]
            tools = client.request("tools/list")["result"]["tools"]
            assert client.close() == 0
            assert client.stdout_problems() == []
        answers.append((init["serverInfo"], [t["name"] for t in tools]))
    assert answers[0] == answers[1]
