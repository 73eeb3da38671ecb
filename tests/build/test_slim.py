"""build/slim.py: only the interpreter's own libraries lose their symbols."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "build"))
import slim


def test_only_libpython_and_lib_dynload_are_the_interpreters(tmp_path: Path):
    libdir, dynload = tmp_path / "lib", tmp_path / "lib" / "python3.11" / "lib-dynload"
    where = {"libdir": libdir, "dynload": dynload}
    assert slim.interpreter_file(libdir / "libpython3.11.so.1.0", **where)
    assert slim.interpreter_file(dynload / "_ssl.cpython-311-x86_64-linux-gnu.so", **where)
    assert not slim.interpreter_file(libdir / "libcrypto.so.3", **where)
    wheel = tmp_path / "venv" / "site-packages" / "numpy.libs" / "libscipy_openblas64_.so"
    assert not slim.interpreter_file(wheel, **where)


def test_the_running_interpreters_extension_modules_are_recognised():
    import _json  # an extension module of lib-dynload in most builds

    if not getattr(_json, "__file__", None):
        pytest.skip("_json is built into this interpreter")
    assert slim.interpreter_file(_json.__file__)
    assert not slim.interpreter_file(slim.__file__)


def test_strip_replaces_interpreter_entries_by_stripped_copies(tmp_path: Path, monkeypatch):
    lib = tmp_path / "src" / "libpython3.11.so.1.0"
    wheel = tmp_path / "src" / "libopenblas.so"
    lib.parent.mkdir()
    lib.write_bytes(b"\x7fELF interpreter")
    wheel.write_bytes(b"\x7fELF wheel")
    lib.chmod(0o444)  # read-only sources are copied writable
    ran: list[list[str]] = []
    monkeypatch.setattr(slim.shutil, "which", lambda name: "/usr/bin/strip")
    toc = [("libpython3.11.so.1.0", str(lib), "BINARY"), ("libopenblas.so", str(wheel), "BINARY"),
           ("libpython3.11.so", "libpython3.11.so.1.0", "SYMLINK")]
    out = slim.strip_interpreter(toc, tmp_path / "work", run=lambda cmd, check: ran.append(cmd),
                                 is_interpreter=lambda source: source == str(lib))
    copy = tmp_path / "work" / "libpython3.11.so.1.0"
    assert out == [("libpython3.11.so.1.0", str(copy), "BINARY"), toc[1], toc[2]]
    assert ran == [["/usr/bin/strip", "--strip-unneeded", str(copy)]]
    assert copy.read_bytes() == lib.read_bytes()


def test_without_strip_the_binaries_stay_as_they_are(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(slim.shutil, "which", lambda name: None)
    toc = [("libpython3.11.so.1.0", "/x/libpython3.11.so.1.0", "BINARY")]
    assert slim.strip_interpreter(toc, tmp_path, is_interpreter=lambda source: True) == toc
