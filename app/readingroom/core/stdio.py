"""stdio discipline: fd 1 belongs to JSON-RPC alone.

This module imports only the standard library so a server's ``main`` can call
:func:`reserve_stdout` before importing anything that might print (native libraries write to
fd 1 directly, below Python's ``sys.stdout``).
"""

from __future__ import annotations

import io
import os
import sys

__all__ = ["reserve_stdout"]


def reserve_stdout() -> io.TextIOWrapper:
    """Take fd 1 for the protocol and send every other write to stderr.

    Duplicates fd 1 for the transport, points fd 1 and ``sys.stdout`` at stderr, and returns a
    UTF-8 text stream over the duplicate that writes LF line endings on every platform (a
    default Windows text stream would write CRLF). stderr is reconfigured to UTF-8 so Japanese
    and German log lines survive a Windows ANSI code page.
    """
    proto_fd = os.dup(1)
    if sys.platform == "win32":  # pragma: no cover - exercised by the Windows CI job
        import msvcrt

        msvcrt.setmode(proto_fd, os.O_BINARY)
    os.dup2(2, 1)
    if hasattr(sys.stderr, "reconfigure"):
        sys.stderr.reconfigure(encoding="utf-8", errors="backslashreplace")
    sys.stdout = sys.stderr
    raw = os.fdopen(proto_fd, "wb", buffering=0)
    return io.TextIOWrapper(raw, encoding="utf-8", newline="\n", write_through=True)
