"""A minimal JSON-RPC-over-stdio client that keeps every byte the server wrote to stdout.

The SDK's client hides stray output (it logs and carries on); this one records each raw line so
a test or a server's self-test (:mod:`readingroom.core.selftest`) can prove stdout carried
JSON-RPC only, with LF framing and no CR.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any, BinaryIO

__all__ = ["RawStdioClient", "StdioProtocolError", "stdout_problems"]

PROTOCOL_VERSION = "2025-06-18"


def stdout_problems(lines: Sequence[bytes]) -> list[str]:
    """Every way these stdout lines broke the rules: non-JSON, CR bytes, not JSON-RPC 2.0."""
    problems = []
    for n, line in enumerate(lines, 1):
        if b"\r" in line:
            problems.append(f"stdout line {n} contains a CR byte")
        if not line.endswith(b"\n"):
            problems.append(f"stdout line {n} is not LF-terminated")
        try:
            msg = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            problems.append(f"stdout line {n} is not JSON: {line[:60]!r}")
            continue
        if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
            problems.append(f"stdout line {n} is not a JSON-RPC 2.0 message")
    return problems


class StdioProtocolError(RuntimeError):
    """The server broke the stdio framing rules or did not answer in time."""


class RawStdioClient:
    """Start a server process and talk JSON-RPC to it line by line."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        stderr: BinaryIO | int | None = subprocess.DEVNULL,
    ) -> None:
        self.argv = list(argv)
        self.raw_lines: list[bytes] = []
        self.messages: list[dict[str, Any]] = []
        self._responses: dict[int, dict[str, Any]] = {}
        self._cond = threading.Condition()
        self._next_id = 1
        self._eof = False
        self.started_at = time.monotonic()
        self.proc = self._launch(dict(env) if env is not None else None, cwd, stderr)
        self.first_line_at: float | None = None
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    # ------------------------------------------------------------------ plumbing
    def _launch(self, env: dict[str, str] | None, cwd: str | None,
                stderr: BinaryIO | int | None) -> subprocess.Popen[bytes]:
        """Start ``self.argv`` with piped stdin and stdout (a test's subclass may fork instead:
        anything with ``Popen``'s ``stdin``, ``stdout``, ``pid``, ``poll``, ``wait`` and
        ``kill`` will do)."""
        return subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=stderr, env=env, cwd=cwd)

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in iter(self.proc.stdout.readline, b""):
            if self.first_line_at is None:
                self.first_line_at = time.monotonic()
            with self._cond:
                self.raw_lines.append(line)
                try:
                    msg = json.loads(line.decode("utf-8"))
                except (UnicodeDecodeError, json.JSONDecodeError):
                    msg = None
                if isinstance(msg, dict):
                    self.messages.append(msg)
                    if "id" in msg and ("result" in msg or "error" in msg):
                        self._responses[msg["id"]] = msg
                self._cond.notify_all()
        with self._cond:
            self._eof = True
            self._cond.notify_all()

    def _send(self, payload: dict[str, Any]) -> None:
        self.send_raw(json.dumps(payload, ensure_ascii=False).encode("utf-8") + b"\n")

    def send_raw(self, data: bytes) -> None:
        """Write bytes to the server's stdin as they are (a test's malformed line)."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def next_message(self, after: int, timeout: float = 30.0) -> dict[str, Any]:
        """The first message the server wrote after the first ``after`` messages (waiting)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while len(self.messages) <= after:
                remaining = deadline - time.monotonic()
                if self._eof:
                    raise StdioProtocolError("server closed stdout before answering")
                if remaining <= 0:
                    raise StdioProtocolError(f"no message after #{after} in {timeout:g} s")
                self._cond.wait(remaining)
            return self.messages[after]

    def answer_to_raw(self, data: bytes, timeout: float = 30.0) -> dict[str, Any]:
        """Send one raw line and return the next message the server writes."""
        with self._cond:
            seen = len(self.messages)
        self.send_raw(data)
        return self.next_message(seen, timeout)

    # ------------------------------------------------------------------ API
    def send_request(self, method: str, params: dict[str, Any] | None = None) -> int:
        """Send a request without waiting; returns its id."""
        rid = self._next_id
        self._next_id += 1
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        self._send(msg)
        return rid

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send a notification."""
        msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self._send(msg)

    def wait(self, rid: int, timeout: float = 30.0) -> dict[str, Any]:
        """Wait for the response to request ``rid``."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while rid not in self._responses:
                remaining = deadline - time.monotonic()
                if self._eof:
                    raise StdioProtocolError(f"server closed stdout before answering #{rid}")
                if remaining <= 0:
                    raise StdioProtocolError(f"no answer to request #{rid} in {timeout:g} s")
                self._cond.wait(remaining)
            return self._responses[rid]

    def request(
        self, method: str, params: dict[str, Any] | None = None, timeout: float = 30.0
    ) -> dict[str, Any]:
        """Send a request and wait for its response."""
        return self.wait(self.send_request(method, params), timeout)

    def initialize(self, timeout: float = 30.0) -> dict[str, Any]:
        """The MCP handshake: initialize, then notifications/initialized."""
        resp = self.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "readingroom-raw-client", "version": "1"},
            },
            timeout,
        )
        self.notify("notifications/initialized")
        return resp

    def call_tool(self, name: str, arguments: dict[str, Any], timeout: float = 60.0) -> dict:
        """Call one tool and return the JSON-RPC ``result`` (raises on a JSON-RPC error)."""
        resp = self.request("tools/call", {"name": name, "arguments": arguments}, timeout)
        if "error" in resp:
            raise StdioProtocolError(f"tools/call {name} failed: {resp['error']}")
        return resp["result"]

    def stdout_problems(self) -> list[str]:
        """Every way stdout broke the rules so far (see :func:`stdout_problems`)."""
        with self._cond:
            lines = list(self.raw_lines)
        return stdout_problems(lines)

    def close(self, timeout: float = 10.0) -> int:
        """Close stdin, wait for the process to exit, and return its exit code."""
        try:
            if self.proc.stdin and not self.proc.stdin.closed:
                self.proc.stdin.close()
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
            raise StdioProtocolError("server did not exit after stdin closed") from None
        finally:
            self._reader.join(5)

    def __enter__(self) -> RawStdioClient:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(StdioProtocolError):
                self.close()
