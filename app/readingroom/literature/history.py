"""The search history: one JSON line per completed search in ``history.jsonl``.

The file lives in the platform's state folder (``platformdirs.user_state_path``: on Linux
``${XDG_STATE_HOME:-~/.local/state}/literature-search-mcp/``), or in the folder named by
``LITERATURE_SEARCH_STATE_DIR``. A line holds the parameters, each source's status, and per
result its identifiers, rank, RRF score, evidence and URLs — by construction nothing else:
no title, abstract or author (the line is built from a fixed list of fields, never from the
item), and no secret (none is ever in the parameters or the results). Full text is never
written here. ``literature-search-mcp clear-history`` empties it.

A crash mid-append can leave a last line without its newline; the next append ends that torn
line first (as the receipt ledger does), so the torn bytes never swallow the new entry, and
:meth:`History.entries` skips the unreadable line.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from . import ENV_STATE_DIR, SERVER

__all__ = ["HISTORY_FILE", "RESULT_FIELDS", "History", "history_line", "state_dir"]

HISTORY_FILE = "history.jsonl"
RESULT_FIELDS: tuple[str, ...] = (
    "rank", "rrf_score", "doi", "pmid", "pmcid", "arxiv_id", "url", "pdf_url", "evidence",
)
"""The fields of a result that the history keeps (identifiers, rank, evidence, URLs)."""

_LOCK = threading.Lock()


def state_dir(environ: Mapping[str, str] | None = None) -> Path:
    """The state folder: ``LITERATURE_SEARCH_STATE_DIR`` when set, else the platform's."""
    env = os.environ if environ is None else environ
    configured = env.get(ENV_STATE_DIR, "").strip()
    if configured:
        return Path(configured).expanduser()
    import platformdirs

    return Path(platformdirs.user_state_path(SERVER.name))


def history_line(
    *,
    at: str,
    parameters: Mapping[str, Any],
    statuses: Mapping[str, str],
    items: Sequence[Mapping[str, Any]],
) -> dict[str, Any]:
    """The history entry of one search, from the envelope's items (only :data:`RESULT_FIELDS`)."""
    results = []
    for item in items:
        kept = {name: item[name] for name in RESULT_FIELDS if item.get(name) is not None}
        if "evidence" in kept:
            kept["evidence"] = [
                {"provider": e["provider"], "rank": e["rank"]} for e in kept["evidence"]
            ]
        results.append(kept)
    return {"at": at, "parameters": dict(parameters), "sources": dict(statuses),
            "results": results}


class History:
    """Appends to and clears one ``history.jsonl``."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> History:
        """The history in :func:`state_dir`."""
        return cls(state_dir(environ))

    @property
    def path(self) -> Path:
        """The ``history.jsonl`` file."""
        return self.folder / HISTORY_FILE

    def append(self, line: Mapping[str, Any]) -> None:
        """Append one entry as one line, in one write (concurrent searches never interleave).

        A last line left without its newline (a torn write) is ended first.

        Raises:
            OSError: the folder or the file cannot be written (or the path is a folder).
        """
        text = json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n"
        data = text.encode("utf-8")
        with _LOCK:
            self.folder.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
            try:
                if os.fstat(fd).st_size:
                    os.lseek(fd, -1, os.SEEK_END)  # O_APPEND still writes at the end
                    if os.read(fd, 1) != b"\n":
                        data = b"\n" + data
                os.write(fd, data)
            finally:
                os.close(fd)

    def entries(self) -> list[dict[str, Any]]:
        """Every readable entry, oldest first (an unreadable line is skipped)."""
        try:
            text = self.path.read_text("utf-8")
        except FileNotFoundError:
            return []
        out = []
        for raw in text.splitlines():
            try:
                value = json.loads(raw)
            except ValueError:
                continue
            if isinstance(value, dict):
                out.append(value)
        return out

    def clear(self) -> int:
        """Empty the history; returns how many lines it held (0 when there was none).

        Raises:
            OSError: the file cannot be read or removed (IsADirectoryError when the path is a
                folder: it is never removed).
        """
        with _LOCK:
            try:
                count = len(self.path.read_bytes().splitlines())
            except FileNotFoundError:
                return 0
            self.path.unlink()
            return count
