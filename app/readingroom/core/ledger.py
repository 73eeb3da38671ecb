"""The receipt ledger: an append-only, hash-chained JSONL file shared by every server.

Each line is one JSON object: the caller's receipt fields plus the ledger's own ``v``, ``seq``
(1-based), ``prev_hash`` (the previous line's ``hash``; 64 zeros for the first line) and
``hash``, the SHA-256 of the canonical JSON of the line without ``hash``. A line never holds
a bibliographic record, only identifiers.

Appends from many processes are serialised by a cross-process file lock around
read-tail + append + fsync, so the chain never forks. A crash mid-write leaves a torn last
line; the next append terminates it and names it (``after_torn``) instead of chaining onto
garbage. A sidecar ``<ledger>.head`` file records the count and hash of the last line so that
:func:`verify` can see whole lines cut from the end, which a chain alone cannot.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from .envelope import utc_now_iso
from .errors import Code
from .files import write_atomically
from .settings import ENV_RECEIPT_LOG

__all__ = [
    "DEFAULT_SECRET_NAMES",
    "GENESIS_HASH",
    "LEDGER_VERSION",
    "DepositOutcome",
    "Ledger",
    "LedgerError",
    "Problem",
    "ProblemKind",
    "VerifyReport",
    "canonical_json",
    "deposit",
    "iter_receipts",
    "line_hash",
    "query_hash",
    "redact",
    "verify",
]

log = logging.getLogger(__name__)

LEDGER_VERSION = 1
GENESIS_HASH = "0" * 64
LOCK_TIMEOUT = 10.0
REDACTED = "[REDACTED]"
DEFAULT_SECRET_NAMES: frozenset[str] = frozenset(
    {
        "appid",
        "api_key",
        "apikey",
        "key",
        "token",
        "access_token",
        "password",
        "secret",
        "client_secret",
        "auth",
        "authorization",
    }
)

_LEDGER_FIELDS = ("v", "seq", "prev_hash", "hash", "after_torn")
# Defence in depth: the ledger holds identifiers, never the records themselves.
_RECORD_FIELDS = ("items", "records")
_TAIL_BLOCK = 8192

# flock is per open file, so two threads of one process could in principle each hold their
# own FileLock; one in-process lock keeps appends of this process strictly one at a time.
_PROCESS_LOCK = threading.Lock()


class LedgerError(Exception):
    """The ledger is in a state an append must not build on (e.g. cut below its head)."""


class ProblemKind(StrEnum):
    """What is wrong with a ledger line."""

    edited = "edited"
    broken_chain = "broken_chain"
    torn = "torn"
    truncated = "truncated"
    unparseable = "unparseable"


@dataclass(frozen=True)
class Problem:
    """One finding of :func:`verify`.

    ``level`` is ``"error"`` (the ledger is not intact) or ``"warning"`` (noted, but the
    chain still proves every receipt, e.g. an acknowledged torn line).
    """

    line: int
    kind: ProblemKind
    message: str
    level: str = "error"

    def __str__(self) -> str:
        return f"line {self.line}: {self.kind.value} — {self.message}"


@dataclass
class VerifyReport:
    """The result of :func:`verify`."""

    ok: bool
    count: int
    problems: list[Problem] = field(default_factory=list)
    first_bad_line: int | None = None
    head_hash: str | None = None
    lines: int = 0

    @property
    def errors(self) -> list[Problem]:
        """Problems that make the ledger not intact."""
        return [p for p in self.problems if p.level == "error"]

    @property
    def warnings(self) -> list[Problem]:
        """Problems noted that do not break the proof."""
        return [p for p in self.problems if p.level != "error"]


@dataclass(frozen=True)
class DepositOutcome:
    """What :func:`deposit` did with a receipt."""

    deposited: bool
    code: Code | None
    ledger_hash: str | None
    message: str = ""


def canonical_json(obj: Any) -> bytes:
    """The canonical UTF-8 JSON bytes hashed by the ledger (sorted keys, no whitespace)."""
    text = json.dumps(
        obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )
    return text.encode("utf-8")


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def line_hash(line: Mapping[str, Any]) -> str:
    """SHA-256 hex of a ledger line's canonical JSON without its ``hash`` key."""
    return _sha256(canonical_json({k: v for k, v in line.items() if k != "hash"}))


def query_hash(query: str, params: Mapping[str, str]) -> str:
    """SHA-256 hex over the canonical JSON of ``{"query": query, "params": params}``.

    Args:
        query: the normalised query string (e.g. the CQL sent).
        params: the request parameters sent (redact secrets first).
    """
    return _sha256(canonical_json({"query": query, "params": dict(params)}))


def redact(
    params: Mapping[str, Any], secret_names: Iterable[str] = DEFAULT_SECRET_NAMES
) -> dict[str, Any]:
    """A copy of ``params`` with the values of secret-looking keys replaced by ``[REDACTED]``.

    Args:
        params: request parameters.
        secret_names: key names to redact, compared case-insensitively.
    """
    secrets = {name.lower() for name in secret_names}
    return {k: (REDACTED if str(k).lower() in secrets else v) for k, v in params.items()}


def _parse_line(raw: bytes) -> dict[str, Any] | None:
    """The line as a ledger-shaped object, or None when it cannot be one."""
    try:
        obj = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    if not isinstance(obj, dict):
        return None
    seq, prev, own = obj.get("seq"), obj.get("prev_hash"), obj.get("hash")
    if not isinstance(seq, int) or isinstance(seq, bool):
        return None
    if not isinstance(prev, str) or not isinstance(own, str):
        return None
    return obj


def _split_lines(data: bytes) -> tuple[list[bytes], bool]:
    """The lines of ``data`` without terminators, and whether ``data`` ends with LF."""
    if not data:
        return [], True
    ends_nl = data.endswith(b"\n")
    parts = data.split(b"\n")
    if ends_nl:
        parts.pop()
    return parts, ends_nl


def _acks(obj: Mapping[str, Any]) -> list[tuple[Any, Any]]:
    """The (line, sha256) pairs a line's ``after_torn`` acknowledges."""
    ack = obj.get("after_torn")
    if ack is None:
        return []
    items = ack if isinstance(ack, list) else [ack]
    out: list[tuple[Any, Any]] = []
    for item in items:
        if isinstance(item, dict):
            out.append((item.get("line"), item.get("sha256")))
        else:
            out.append((None, None))
    return out


def _read_head(head_path: Path) -> tuple[dict[str, Any] | None, bool]:
    """The head file's content, and whether a head file exists but cannot be read."""
    try:
        raw = head_path.read_bytes()
    except FileNotFoundError:
        return None, False
    try:
        head = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None, True
    if not isinstance(head, dict):
        return None, True
    count, digest = head.get("count"), head.get("hash")
    if not isinstance(count, int) or isinstance(count, bool) or not isinstance(digest, str):
        return None, True
    return {"count": count, "hash": digest}, False


@contextmanager
def _exclusive(lock_path: Path, timeout: float) -> Iterator[None]:
    """Hold the in-process lock and then the cross-process file lock, both within timeout."""
    if not _PROCESS_LOCK.acquire(timeout=timeout if timeout >= 0 else -1):
        raise Timeout(str(lock_path))
    try:
        with FileLock(str(lock_path), timeout=timeout):
            yield
    finally:
        _PROCESS_LOCK.release()


class Ledger:
    """An append-only hash-chained JSONL receipt ledger.

    Args:
        path: the ledger file; ``<path>.lock`` and ``<path>.head`` live beside it.
        lock_timeout: seconds to wait for the cross-process lock before giving up.
    """

    def __init__(self, path: os.PathLike[str] | str, *, lock_timeout: float = LOCK_TIMEOUT):
        self.path = Path(path)
        self.lock_path = Path(str(path) + ".lock")
        self.head_path = Path(str(path) + ".head")
        self.lock_timeout = lock_timeout

    def append(self, entry: Mapping[str, Any]) -> dict[str, Any]:
        """Append one receipt and return the full line written.

        Ledger fields in ``entry`` are ignored, ``params`` is redacted again, and record
        bodies (``items``, ``records``) are dropped. Raises OSError (including
        ``filelock.Timeout``), LedgerError, or ValueError/TypeError for an entry that is not
        JSON-serialisable.
        """
        body = {k: v for k, v in entry.items() if k not in _LEDGER_FIELDS + _RECORD_FIELDS}
        if isinstance(body.get("params"), Mapping):
            body["params"] = redact(body["params"])
        body.setdefault("issued_at", utc_now_iso())
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with _exclusive(self.lock_path, self.lock_timeout):
            prefix, seq, prev_hash, torn = self._tail_state()
            line: dict[str, Any] = {"v": LEDGER_VERSION, "seq": seq, "prev_hash": prev_hash}
            line.update(body)
            if torn:
                line["after_torn"] = torn[0] if len(torn) == 1 else torn
            line["hash"] = line_hash(line)
            data = (
                prefix
                + json.dumps(
                    line, ensure_ascii=False, separators=(",", ":"), allow_nan=False
                ).encode("utf-8")
                + b"\n"
            )
            with open(self.path, "ab") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            self._write_head(seq, line["hash"])
        return line

    def verify(self) -> VerifyReport:
        """Verify this ledger; see :func:`verify`."""
        return verify(self.path)

    def _tail_state(self) -> tuple[bytes, int, str, list[dict[str, Any]]]:
        """Prefix to write, next seq, prev_hash, and the torn lines to acknowledge."""
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            size = 0
        last: dict[str, Any] | None = None
        prefix = b""
        torn: list[dict[str, Any]] = []
        if size:
            with open(self.path, "rb") as fh:
                raw, ends_nl = _read_last_line(fh, size)
                last = _parse_line(raw)
                if last is None:
                    # Rare path (a torn or damaged tail): find line numbers by a full read.
                    fh.seek(0)
                    last, ends_nl, torn = _scan_tail(fh.read())
            if not ends_nl:
                prefix = b"\n"
        last_seq = last["seq"] if last else 0
        last_hash = last["hash"] if last else GENESIS_HASH
        head, _ = _read_head(self.head_path)
        if head is not None and (
            head["count"] > last_seq or (head["count"] == last_seq and head["hash"] != last_hash)
        ):
            raise LedgerError(
                f"the ledger ends at receipt {last_seq} but its head file records receipt "
                f"{head['count']}: lines were cut or rewritten; run `readingroom receipts "
                f"verify` and start a new ledger (or remove {self.head_path.name} knowingly)"
            )
        return prefix, last_seq + 1, last_hash, torn

    def _write_head(self, count: int, digest: str) -> None:
        try:
            write_atomically(self.head_path, canonical_json({"count": count, "hash": digest}),
                             keep_mode=False)
        except OSError as exc:
            # The line itself is durable; a stale head is tolerated by verify and rewritten
            # by the next append, so this must not turn a deposited receipt into a failure.
            log.warning("receipt ledger head file not updated: %s", exc)


def _read_last_line(fh: Any, size: int) -> tuple[bytes, bool]:
    """The bytes of the file's last line (no terminator) and whether the file ends with LF."""
    fh.seek(size - 1)
    ends_nl = fh.read(1) == b"\n"
    stop = size - 1 if ends_nl else size
    block = _TAIL_BLOCK
    while True:
        start = max(0, stop - block)
        fh.seek(start)
        chunk = fh.read(stop - start)
        cut = chunk.rfind(b"\n")
        if cut >= 0:
            return chunk[cut + 1 :], ends_nl
        if start == 0:
            return chunk, ends_nl
        block *= 2


def _scan_tail(data: bytes) -> tuple[dict[str, Any] | None, bool, list[dict[str, Any]]]:
    """The last ledger-shaped line, whether data ends with LF, and the bad lines after it."""
    lines, ends_nl = _split_lines(data)
    last: dict[str, Any] | None = None
    after: list[dict[str, Any]] = []
    for number, raw in enumerate(lines, start=1):
        obj = _parse_line(raw)
        if obj is None:
            after.append({"line": number, "sha256": _sha256(raw)})
        else:
            last, after = obj, []
    return last, ends_nl, after


def _snapshot(path: Path) -> tuple[bytes, dict[str, Any] | None, bool]:
    """The ledger bytes and head as of one moment, taken under the lock when there is one."""
    lock_path = Path(str(path) + ".lock")

    def read() -> tuple[bytes, dict[str, Any] | None, bool]:
        head, head_bad = _read_head(Path(str(path) + ".head"))
        return path.read_bytes(), head, head_bad

    # Only lock a live ledger (one whose lock file exists): verifying a copy must not litter
    # its folder, and a read-only or busy folder must not stop a verification.
    if lock_path.exists():
        try:
            with _exclusive(lock_path, LOCK_TIMEOUT):
                return read()
        except OSError:
            pass
    return read()


def verify(path: os.PathLike[str] | str) -> VerifyReport:
    """Check a ledger's hash chain, torn lines and head file.

    Raises OSError when the ledger file cannot be read.

    Returns:
        A report whose ``ok`` is False when any line was edited, removed, reordered or
        inserted, a torn line is not acknowledged, or lines were cut from the end.
    """
    path = Path(path)
    data, head, head_bad = _snapshot(path)
    lines, _ = _split_lines(data)
    problems: list[Problem] = []
    count = 0
    prev_hash, expected_seq, prev_line = GENESIS_HASH, 1, 0
    pending: list[tuple[int, str]] = []
    last_seq, last_hash = 0, None
    seq_lines: dict[int, tuple[int, str]] = {}

    for number, raw in enumerate(lines, start=1):
        obj = _parse_line(raw)
        if obj is None:
            pending.append((number, _sha256(raw)))
            continue
        acks = _acks(obj)
        if pending:
            if acks == pending:
                for bad, _digest in pending:
                    problems.append(
                        Problem(
                            bad,
                            ProblemKind.torn,
                            f"incomplete line from an interrupted write, acknowledged by line "
                            f"{number}",
                            level="warning",
                        )
                    )
            else:
                for bad, _digest in pending:
                    problems.append(
                        Problem(
                            bad,
                            ProblemKind.unparseable,
                            "not a receipt line (not JSON, or missing seq/prev_hash/hash) and not "
                            "acknowledged by the next line",
                        )
                    )
            pending = []
        elif acks:
            problems.append(
                Problem(
                    number,
                    ProblemKind.broken_chain,
                    "acknowledges a torn line that is not there",
                )
            )
        good = True
        if line_hash(obj) != obj["hash"]:
            problems.append(Problem(number, ProblemKind.edited, "hash does not match its content"))
            good = False
        if obj["prev_hash"] != prev_hash:
            where = f"line {prev_line}'s hash" if prev_line else "the start of the ledger"
            problems.append(
                Problem(
                    number,
                    ProblemKind.broken_chain,
                    f"prev_hash does not match {where} (a line was removed, inserted or moved)",
                )
            )
            good = False
        elif obj["seq"] != expected_seq:
            problems.append(
                Problem(
                    number,
                    ProblemKind.broken_chain,
                    f"seq {obj['seq']} where {expected_seq} was expected",
                )
            )
            good = False
        if good:
            count += 1
        # Resynchronise on the line as found, so one damage is reported once, not cascaded.
        prev_hash, expected_seq, prev_line = obj["hash"], obj["seq"] + 1, number
        last_seq, last_hash = obj["seq"], obj["hash"]
        seq_lines[obj["seq"]] = (number, obj["hash"])

    for bad, _digest in pending:
        problems.append(
            Problem(
                bad,
                ProblemKind.torn,
                "incomplete line (an interrupted write or a cut file), not acknowledged by a "
                "following line",
            )
        )

    if head_bad:
        problems.append(
            Problem(
                len(lines),
                ProblemKind.truncated,
                "the head file exists but cannot be read; truncation from the end cannot be ruled "
                "out",
                level="warning",
            )
        )
    elif head is not None:
        if last_seq < head["count"]:
            problems.append(
                Problem(
                    len(lines) + 1,
                    ProblemKind.truncated,
                    f"the head file records {head['count']} receipts but the ledger ends at "
                    f"receipt {last_seq}: lines were cut from the end",
                )
            )
        elif head["count"] > 0:
            found = seq_lines.get(head["count"])
            if found is None or found[1] != head["hash"]:
                at_line = found[0] if found else len(lines)
                problems.append(
                    Problem(
                        at_line,
                        ProblemKind.truncated,
                        f"receipt {head['count']} does not have the hash the head file records: "
                        "the end of the ledger was cut and rewritten",
                    )
                )

    problems.sort(key=lambda p: (p.line, p.level != "error"))
    errors = [p for p in problems if p.level == "error"]
    return VerifyReport(
        ok=not errors,
        count=count,
        problems=problems,
        first_bad_line=min(p.line for p in errors) if errors else None,
        head_hash=last_hash,
        lines=len(lines),
    )


def iter_receipts(path: os.PathLike[str] | str) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, line)`` for each ledger-shaped line, skipping unreadable ones."""
    with open(path, "rb") as fh:
        for number, raw in enumerate(fh, start=1):
            obj = _parse_line(raw.rstrip(b"\n"))
            if obj is not None:
                yield number, obj


def deposit(
    entry: Mapping[str, Any],
    *,
    env: Mapping[str, str] | None = None,
    lock_timeout: float = LOCK_TIMEOUT,
) -> DepositOutcome:
    """Append a receipt to the ledger named by ``MCP_RECEIPT_LOG``; never raises.

    Args:
        entry: the receipt fields (see :meth:`Ledger.append`).
        env: where to read ``MCP_RECEIPT_LOG`` (default ``os.environ``).
        lock_timeout: seconds to wait for the cross-process lock.
    """
    target = (os.environ if env is None else env).get(ENV_RECEIPT_LOG, "").strip()
    if not target:
        return DepositOutcome(
            deposited=False,
            code=Code.RECEIPT_NOT_DEPOSITED,
            ledger_hash=None,
            message=f"{ENV_RECEIPT_LOG} is not set; this search was not recorded.",
        )
    try:
        line = Ledger(target, lock_timeout=lock_timeout).append(entry)
    except Timeout:
        message = f"the receipt ledger stayed locked for {lock_timeout:g} s"
    except LedgerError as exc:
        message = f"the receipt ledger is damaged: {exc}"
    except OSError as exc:
        message = f"the receipt ledger could not be written ({exc.__class__.__name__})"
    except (TypeError, ValueError) as exc:
        message = f"the receipt could not be serialised ({exc.__class__.__name__})"
    else:
        return DepositOutcome(deposited=True, code=None, ledger_hash=line["hash"])
    log.warning("receipt not written: %s", message)
    return DepositOutcome(
        deposited=False, code=Code.RECEIPT_WRITE_FAILED, ledger_hash=None, message=message
    )
