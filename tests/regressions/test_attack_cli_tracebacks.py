"""Attack: inputs that made `book-agent` print a Python traceback instead of a one-line error.

Measured before the fix (each a traceback, and no envelope under --json):
`render-page --out` onto a folder (IsADirectoryError), `--clip 1e308,1e308,inf,inf`
(OverflowError in fz_make_rect), a 5,000-character `skill` path (OSError: File name too long),
and an `init` file name with a non-UTF-8 byte (refused as a false CORRUPT_SOURCE for a PDF; a
UnicodeEncodeError writing the manifest for other formats). The class is closed where it
arises — output paths are checked (PATH_UNUSABLE), numbers must be finite and bounded, a
non-UTF-8 file name is stored mended and non-UTF-8 text arguments are refused — and `main` has a
guard: any exception left is one line on stderr, the failure envelope under --json, and the
traceback only with --debug.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from tests.book.make_books import make_pdf
from tests.forked import book_agent

from readingroom.book.commands import cli

# Starts real server or command processes: left out of the quick tier (tests/conftest.py).
pytestmark = pytest.mark.stdio

CLI = [sys.executable, "-m", "readingroom.book"]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("tb")
    src = make_pdf(root / "b.pdf", ["Alpha beta gamma.", "Delta epsilon."])
    done = book_agent(["--data-dir", str(root / "data"), "init", str(src), "--id", "b"],
                      timeout=120)
    assert done.returncode == 0, done.stderr
    return root


def _run(data, *args, json_mode: bool):
    argv = ["--data-dir", str(data / "data"), *(["--json"] if json_mode else []), *args]
    return book_agent(argv, timeout=120)


def _assert_one_line(done, code: str, json_mode: bool) -> None:
    err = done.stderr.decode("utf-8", "replace")
    assert done.returncode == 1, err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"book-agent: {code}: "), err
    if json_mode:
        assert json.loads(done.stdout)["error"]["code"] == code
    else:
        assert done.stdout == b""


CASES = {
    "out_onto_a_folder": (lambda d: ["render-page", "b", "0", "--out", str(d)],
                          "PATH_UNUSABLE"),
    "out_under_a_file": (lambda d: ["render-page", "b", "0", "--out",
                                    str(d / "b.pdf" / "p.png")], "PATH_UNUSABLE"),
    "clip_overflow": (lambda d: ["render-page", "b", "0", "--clip", "1e308,1e308,inf,inf",
                                 "--out", str(d / "c.png")], "INVALID_ARGUMENT"),
    "clip_huge_finite": (lambda d: ["render-page", "b", "0", "--clip", "0,0,1e300,1e300",
                                    "--out", str(d / "c.png")], "INVALID_ARGUMENT"),
    "skill_path_5000": (lambda d: ["skill", "b", "x" * 5000], "NOT_FOUND"),
    "skill_long_component": (lambda d: ["skill", "b", "references/" + "y" * 240],
                            "NOT_FOUND"),
    "locator_file_missing": (lambda d: ["read-source", f"@{d / 'nope.json'}"],
                             "PATH_UNUSABLE"),
    "locator_deeply_nested": (lambda d: ["read-source", "[" * 50_000], "INVALID_LOCATOR"),
    "skill_zip_onto_a_folder": (lambda d: ["skill", "export", "b", "--zip", str(d)],
                                "PATH_UNUSABLE"),
    "skill_dir_is_a_file": (lambda d: ["skill", "export", "b", "--dir", str(d / "b.pdf")],
                            "PATH_UNUSABLE"),
}


@pytest.mark.parametrize("json_mode", [False, True], ids=["text", "json"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_no_traceback_only_one_line(data, case, json_mode):
    make_args, code = CASES[case]
    _assert_one_line(_run(data, *make_args(data), json_mode=json_mode), code, json_mode)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX file names are bytes")
@pytest.mark.parametrize("suffix", [".pdf", ".md"])
def test_non_utf8_file_name_initialises(data, suffix):
    name = os.fsdecode(b"caf\xe9" + suffix.encode())
    src = data / name
    if suffix == ".pdf":
        shutil.copy(data / "b.pdf", src)
    else:
        src.write_text("# Kapitel\n\nText des Kapitels.\n", encoding="utf-8")
    done = subprocess.run([*CLI, "--data-dir", os.fsencode(str(data / "data")), "--json",
                           "init", os.fsencode(str(src)), "--id", f"latin{suffix[1:]}"],
                          capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")
    env = json.loads(done.stdout)
    manifest = json.loads((data / "data" / "books" / f"latin{suffix[1:]}" / "v1" /
                           "manifest.json").read_text(encoding="utf-8"))
    assert env["data"]["version"] == 1
    assert manifest["source"]["file_name"] == f"caf\ufffd{suffix}"


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX arguments are bytes")
def test_non_utf8_text_argument_is_refused(data):
    done = subprocess.run([*CLI, "--data-dir", str(data / "data"), "--json", "search", "b",
                           b"caf\xe9"], capture_output=True, timeout=60)
    _assert_one_line(done, "INVALID_ARGUMENT", True)


def test_usage_errors_are_one_line_with_an_envelope(data):
    done = _run(data, "render-page", "b", "zz", "--out", "x.png", json_mode=True)
    assert done.returncode == 2 and b"Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert json.loads(done.stdout)["error"]["code"] == "INVALID_ARGUMENT"


def test_the_guard_turns_any_exception_into_one_line(monkeypatch, capsys, tmp_path):
    def boom(_args):
        raise RuntimeError("an unforeseen defect\nwith a second line")

    monkeypatch.setattr(cli, "_run", boom)
    monkeypatch.delenv(cli.ENV_DEBUG, raising=False)
    assert cli.main(["--data-dir", str(tmp_path), "--json", "list"]) == 1
    out, err = capsys.readouterr()
    assert json.loads(out)["error"]["code"] == "INTERNAL_ERROR"
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "RuntimeError: an unforeseen defect with a second line" in err

    assert cli.main(["--debug", "--data-dir", str(tmp_path), "list"]) == 1
    _out, err = capsys.readouterr()
    assert "Traceback" in err and err.strip().splitlines()[-1].startswith(
        "book-agent: INTERNAL_ERROR: ")


def test_the_guard_maps_a_file_system_refusal_to_path_unusable(monkeypatch, capsys, tmp_path):
    def refused(_args):
        raise PermissionError(13, "Permission denied", str(tmp_path / "locked"))

    monkeypatch.setattr(cli, "_run", refused)
    assert cli.main(["--data-dir", str(tmp_path), "list"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("book-agent: PATH_UNUSABLE: ") and "Permission denied" in err
