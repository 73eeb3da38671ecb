"""Symbols off the interpreter's own libraries, for the Linux bundle.

A self-built CPython (pyenv, most CI images) keeps debugging sections in libpython and in its
extension modules: libpython3.11 is 22 MiB with them and 6 MiB without, ``lib-dynload/`` 12
MiB and 5. PyInstaller's ``strip`` option strips every collected binary instead, and that
breaks libraries that auditwheel patched into wheels (numpy's OpenBLAS would not load: "ELF
load command address/offset not page-aligned"). So only the interpreter's files are stripped
(``strip --strip-unneeded``, as distributions strip their shared libraries: the dynamic symbols
stay), on copies in the build's work folder.
``build/readingroom.spec`` calls :func:`strip_interpreter` on Linux only: Windows DLLs carry no
symbols, and macOS binaries are signed by PyInstaller after collection.
"""

from __future__ import annotations

import shutil
import subprocess
import sysconfig
from collections.abc import Callable, Sequence
from pathlib import Path

__all__ = ["interpreter_file", "strip_interpreter"]

Entry = tuple[str, str, str]
"""A PyInstaller TOC entry: ``(destination name, source path, typecode)``."""


def _folder(name: str) -> Path | None:
    value = sysconfig.get_config_var(name)
    return Path(value).resolve() if value else None


def interpreter_file(source: str | Path, *, libdir: Path | None = None,
                     dynload: Path | None = None) -> bool:
    """Whether ``source`` is the interpreter's own: its libpython or a ``lib-dynload`` module.

    The folders default to the running interpreter's (``LIBDIR`` and ``DESTSHARED``); a wheel's
    library, in ``site-packages`` or anywhere else, is never the interpreter's.
    """
    libdir = _folder("LIBDIR") if libdir is None else libdir
    dynload = _folder("DESTSHARED") if dynload is None else dynload
    path = Path(source).resolve()
    return (dynload is not None and path.parent == dynload) or (
        libdir is not None and path.parent == libdir and path.name.startswith("libpython"))


def strip_interpreter(binaries: Sequence[Entry], folder: Path, *,
                      run: Callable[..., object] = subprocess.run,
                      is_interpreter: Callable[[str], bool] = interpreter_file) -> list[Entry]:
    """``binaries`` with each interpreter file replaced by a copy stripped of unneeded symbols.

    Copies go to ``folder`` under their destination names; every other entry is unchanged. A
    missing ``strip`` leaves the TOC as it is (the bundle is larger; its budget test says so).
    """
    strip = shutil.which("strip")
    if strip is None:
        return list(binaries)
    out = []
    for dest, source, typecode in binaries:
        if typecode in ("BINARY", "EXTENSION") and is_interpreter(source):
            copy = folder / dest
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, copy)
            copy.chmod(0o755)  # the source may be read-only; strip rewrites the file
            run([strip, "--strip-unneeded", str(copy)], check=True)
            source = str(copy)
        out.append((dest, source, typecode))
    return out
