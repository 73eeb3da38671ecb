"""The raw stdio client the contract drives servers with, plus a wait for any message."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from readingroom.core.rawstdio import StdioProtocolError
from tests.forked import StdioClient

__all__ = ["ContractClient", "StdioProtocolError"]


class ContractClient(StdioClient):
    """:class:`~tests.forked.StdioClient` (the server forked where it may be) that can also
    wait for a notification."""

    def wait_for(
        self, predicate: Callable[[dict[str, Any]], bool], timeout: float
    ) -> dict[str, Any]:
        """The first message from the server that satisfies ``predicate``, waiting for it.

        Raises:
            StdioProtocolError: none came within ``timeout`` seconds, or stdout closed.
        """
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for message in self.messages:
                    if predicate(message):
                        return message
                remaining = deadline - time.monotonic()
                if self._eof:
                    raise StdioProtocolError("server closed stdout before the awaited message")
                if remaining <= 0:
                    raise StdioProtocolError(f"no awaited message in {timeout:g} s")
                self._cond.wait(remaining)

    def response_line(self, rid: int) -> bytes:
        """The raw stdout line that answered request ``rid`` (call after :meth:`wait`)."""
        with self._cond:
            lines = list(self.raw_lines)
        for line in lines:
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if isinstance(message, dict) and message.get("id") == rid and (
                "result" in message or "error" in message
            ):
                return line
        raise StdioProtocolError(f"no stdout line answers request #{rid}")
