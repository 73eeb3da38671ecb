"""The receipt ledger: an append-only, hash-chained JSONL file shared by every server.

Each line is one JSON object: the caller's receipt fields plus the ledger's own ``v``, ``seq``
(1-based), ``prev_hash`` (the previous line's ``hash``; 64 zeros for the first line) and
``hash``, the SHA-256 of the canonical JSON of the line without ``hash``. A line never holds
a bibliographic record, only identifiers.

Appends from many processes are serialised by a cross-process file lock around
read-tail + append + fsync, so the chain never forks. A crash mid-write leaves a torn last
line; the next append terminates it and names it (``after_torn``) instead of chaining onto
garbage. A sidecar ``<ledger>.head`` file records the count and hash of the last line so that
:func:`.verification.verify` can see whole lines cut from the end, which a chain alone cannot.

Lines are read with a bounded parser (at most :data:`MAX_LINE_BYTES` a line and
:data:`MAX_DEPTH` levels of nesting, no ``NaN``/``Infinity``, no number out of range), streamed
so no line is held in memory past the limit: a hostile line is a finding of
:func:`.verification.verify` that names it, never an exception. Verification (what the chain
proves, a cited head) is :mod:`.verification`; this module writes and reads.
"""

from __future__ import annotations

import errno
import hashlib
import json
import logging
import math
import os
import re
import stat
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from time import monotonic as _monotonic
from typing import Any

from filelock import FileLock, Timeout

from .bounds import json_nests_deeper
from .envelope import utc_now_iso
from .errors import Code
from .files import write_atomically
from .redaction import redact
from .settings import ENV_RECEIPT_LOG

__all__ = [
    "GENESIS_HASH",
    "LEDGER_VERSION",
    "MAX_DEPTH",
    "MAX_LINE_BYTES",
    "DepositOutcome",
    "Ledger",
    "LedgerError",
    "NotARegularFileError",
    "canonical_json",
    "decode_line",
    "deposit",
    "describe_os_error",
    "iter_receipts",
    "ledger_snapshot",
    "line_acks",
    "line_hash",
    "open_regular",
    "read_lines",
]

log = logging.getLogger(__name__)

LEDGER_VERSION = 1
GENESIS_HASH = "0" * 64
LOCK_TIMEOUT = 10.0
READ_LOCK_TIMEOUT = 2.0
"""How long :func:`verify` waits for a busy ledger's lock before reading it unlocked (an
append-only file read up to a size taken first is consistent either way)."""

_LEDGER_FIELDS = ("v", "seq", "prev_hash", "hash", "after_torn")
# Defence in depth: the ledger holds identifiers, never the records themselves.
_RECORD_FIELDS = ("items", "records")
_TAIL_BLOCK = 8192
_READ_CHUNK = 65536

MAX_LINE_BYTES = 1024 * 1024
"""The longest line the ledger reads or writes, in bytes; a receipt line is a few KiB."""
MAX_DEPTH = 32
"""The deepest nesting of arrays and objects a ledger line may have (a receipt uses four)."""


_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89abcdefABCDEF]")

# flock is per open file, so two threads of one process could in principle each hold their
# own FileLock; one in-process lock keeps appends of this process strictly one at a time.
_PROCESS_LOCK = threading.Lock()


class LedgerError(Exception):
    """The ledger is in a state an append must not build on (e.g. cut below its head)."""


class NotARegularFileError(LedgerError, OSError):
    """A ledger path (or its ``.head`` or ``.lock``) exists and is not a regular file.

    Opening a FIFO blocks until its other end is opened, and a device or socket is no ledger:
    such a path is refused, before any lock is taken, like a symbolic link. An ``OSError`` too,
    so a reader that reports unreadable ledgers reports this one.
    """

    def __init__(self, path: os.PathLike[str] | str, kind: str, role: str = "ledger") -> None:
        self.kind = kind
        what = "the receipt ledger" if role == "ledger" else f"the receipt ledger's {role} file"
        message = (f"{what} path {path} is not a regular file (it is a {kind}); receipts are "
                   f"kept only in regular files (set {ENV_RECEIPT_LOG} to a file's path)")
        LedgerError.__init__(self, message)
        self.errno = errno.EINVAL
        self.strerror = message
        self.filename = str(path)

    def __str__(self) -> str:
        return str(self.strerror)


def _file_kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "FIFO (named pipe)"
    if stat.S_ISDIR(mode):
        return "folder"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    return "special file"


def _refuse_special(path: Path, role: str = "ledger") -> None:
    """Raise :class:`NotARegularFileError` when ``path`` exists and is neither a file nor a link.

    Links are not judged here: the ledger path's own link rule is :meth:`Ledger._refuse_link`,
    and a link elsewhere is judged by what the non-blocking open finds.
    """
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return  # absent (created later) or unreachable (the open will say so)
    if not stat.S_ISREG(mode) and not stat.S_ISLNK(mode):
        raise NotARegularFileError(path, _file_kind(mode), role)


_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_BINARY = getattr(os, "O_BINARY", 0)


def open_regular(path: Path, *, role: str = "ledger", follow: bool = True) -> Any:
    """``path`` opened for binary reading, never blocking, only when it is a regular file.

    The open itself does not block (``O_NONBLOCK``: a FIFO would wait for a writer), and the
    open file is checked with ``fstat``, so nothing can swap a FIFO in between.
    """
    flags = os.O_RDONLY | _NONBLOCK | _BINARY
    if not follow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotARegularFileError(path, _file_kind(mode), role)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


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


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"holds {name}, which JSON does not allow")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"holds the number {text[:20]}, out of range")
    return value


def _bounded_json(raw: bytes) -> tuple[Any, str]:
    """``raw`` parsed as strict JSON within the ledger's limits, or ``(None, why not)``.

    Nothing here recurses on the input or holds more than ``raw``: a too-long line, deep
    nesting, ``NaN``/``Infinity``, an out-of-range number or a lone surrogate is a reason,
    never an exception.
    """
    if len(raw) > MAX_LINE_BYTES:
        return None, f"longer than the {MAX_LINE_BYTES} bytes a ledger line may be"
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None, "not UTF-8"
    if json_nests_deeper(raw, MAX_DEPTH):
        return None, f"nested deeper than {MAX_DEPTH} levels"
    try:
        obj = json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
    except ValueError as exc:
        reason = str(exc)
        return None, reason if reason.startswith("holds") else "not JSON"
    except RecursionError:  # unreachable after json_nests_deeper; kept so no input can raise
        return None, f"nested deeper than {MAX_DEPTH} levels"
    if _SURROGATE_ESCAPE.search(raw):
        try:
            canonical_json(obj)
        except ValueError:
            return None, "holds text that is not valid Unicode (a lone surrogate)"
    return obj, ""


def decode_line(raw: bytes | None) -> tuple[dict[str, Any] | None, str]:
    """The line as a ledger-shaped object, or ``(None, why it cannot be one)``.

    ``raw`` is None for a line the reader stopped holding because it was too long.
    """
    if raw is None:
        return None, f"longer than the {MAX_LINE_BYTES} bytes a ledger line may be"
    obj, reason = _bounded_json(raw)
    if reason:
        return None, reason
    if not isinstance(obj, dict):
        return None, "not a JSON object"
    seq, prev, own = obj.get("seq"), obj.get("prev_hash"), obj.get("hash")
    if not isinstance(seq, int) or isinstance(seq, bool):
        return None, "missing seq, prev_hash or hash"
    if not isinstance(prev, str) or not isinstance(own, str):
        return None, "missing seq, prev_hash or hash"
    return obj, ""


def _parse_line(raw: bytes | None) -> dict[str, Any] | None:
    """The line as a ledger-shaped object, or None when it cannot be one."""
    return decode_line(raw)[0]


@dataclass(frozen=True)
class _RawLine:
    """One line as the streaming reader saw it; ``raw`` is None past :data:`MAX_LINE_BYTES`."""

    number: int
    raw: bytes | None
    sha256: str
    ends_nl: bool


def read_lines(fh: Any, limit: int | None = None) -> Iterator[_RawLine]:
    """Stream the lines of ``fh`` (the first ``limit`` bytes) holding at most one capped line.

    A line longer than :data:`MAX_LINE_BYTES` is still hashed and counted, but its bytes are
    dropped as soon as it passes the limit, so a hostile file cannot fill memory.
    """
    number, remaining = 0, limit
    held = bytearray()
    digest = hashlib.sha256()
    size = 0
    while remaining is None or remaining > 0:
        chunk = fh.read(_READ_CHUNK if remaining is None else min(_READ_CHUNK, remaining))
        if not chunk:
            break
        if remaining is not None:
            remaining -= len(chunk)
        start = 0
        while True:
            cut = chunk.find(b"\n", start)
            piece = chunk[start:] if cut < 0 else chunk[start:cut]
            digest.update(piece)
            size += len(piece)
            if size <= MAX_LINE_BYTES:
                held += piece
            elif held:
                held.clear()
            if cut < 0:
                break
            number += 1
            yield _RawLine(number, bytes(held) if size <= MAX_LINE_BYTES else None,
                           digest.hexdigest(), True)
            held.clear()
            digest, size = hashlib.sha256(), 0
            start = cut + 1
    if size:
        yield _RawLine(number + 1, bytes(held) if size <= MAX_LINE_BYTES else None,
                       digest.hexdigest(), False)


def line_acks(obj: Mapping[str, Any]) -> list[tuple[Any, Any]]:
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
    """The head file's content, and whether a head file exists but cannot be read.

    Raises:
        NotARegularFileError: the head path is a FIFO, folder or device (an append must not
            go on; :func:`verify` reports it as an unreadable head).
    """
    try:
        with open_regular(head_path, role="head") as fh:
            raw = fh.read(MAX_LINE_BYTES + 1)
    except FileNotFoundError:
        return None, False
    head, reason = _bounded_json(raw)
    if reason or not isinstance(head, dict):
        return None, True
    count, digest = head.get("count"), head.get("hash")
    if not isinstance(count, int) or isinstance(count, bool) or not isinstance(digest, str):
        return None, True
    return {"count": count, "hash": digest}, False


@contextmanager
def _exclusive(lock_path: Path, timeout: float) -> Iterator[None]:
    """Hold the in-process lock and then the cross-process file lock, both within timeout.

    The timeout bounds the whole wait: what the in-process lock took is not given again to
    the file lock.
    """
    began = _monotonic()
    if not _PROCESS_LOCK.acquire(timeout=timeout if timeout >= 0 else -1):
        raise Timeout(str(lock_path))
    try:
        left = timeout if timeout < 0 else max(0.0, timeout - (_monotonic() - began))
        with FileLock(str(lock_path), timeout=left):
            yield
    finally:
        _PROCESS_LOCK.release()


class Ledger:
    """An append-only hash-chained JSONL receipt ledger.

    The path names the ledger file itself: a path that is a symbolic link is refused for
    writing (see :meth:`append`). Its folder may be reached through links.

    Args:
        path: the ledger file; ``<path>.lock`` and ``<path>.head`` live beside it.
        lock_timeout: seconds to wait for the cross-process lock before giving up.
    """

    def __init__(self, path: os.PathLike[str] | str, *, lock_timeout: float = LOCK_TIMEOUT):
        self.path = Path(path)
        self.lock_path = Path(str(path) + ".lock")
        self.head_path = Path(str(path) + ".head")
        self.lock_timeout = lock_timeout

    def append(
        self, entry: Mapping[str, Any], *, proceed: Callable[[], bool] | None = None
    ) -> dict[str, Any]:
        """Append one receipt and return the full line written.

        ``proceed``, when given, is asked once the lock is held: False (the search was
        answered without waiting for this receipt) writes nothing and raises LedgerError, so
        a receipt never appears that its answer said was not written.

        Ledger fields in ``entry`` are ignored, ``params`` is redacted again, and record
        bodies (``items``, ``records``) are dropped. Only a line the ledger's own reader
        accepts is written. A torn last line (no newline: an interrupted write) is
        acknowledged; a complete line that is not a receipt, lines cut below the head, or a
        ledger path that is a symbolic link or not a regular file (a FIFO: opening it would
        block) raise LedgerError and nothing is written.

        Raises:
            LedgerError: the ledger must not be built on (see above).
            OSError: the file or its lock could not be used (including ``filelock.Timeout``).
            ValueError, TypeError: the entry is not JSON-serialisable within the limits.
        """
        body = {k: v for k, v in entry.items() if k not in _LEDGER_FIELDS + _RECORD_FIELDS}
        if isinstance(body.get("params"), Mapping):
            body["params"] = redact(body["params"])
        body.setdefault("issued_at", utc_now_iso())
        self._refuse_link()
        self._refuse_special()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with _exclusive(self.lock_path, self.lock_timeout):
            if proceed is not None and not proceed():
                raise LedgerError("the receipt was not written: its search was answered "
                                  "without it")
            self._refuse_link()
            self._refuse_special()
            prefix, seq, prev_hash, torn = self._tail_state()
            line: dict[str, Any] = {"v": LEDGER_VERSION, "seq": seq, "prev_hash": prev_hash}
            line.update(body)
            if torn:
                line["after_torn"] = torn[0] if len(torn) == 1 else torn
            line["hash"] = line_hash(line)
            encoded = json.dumps(
                line, ensure_ascii=False, separators=(",", ":"), allow_nan=False
            ).encode("utf-8")
            _, reason = decode_line(encoded)
            if reason:
                # verify would refuse the line: writing it would damage the ledger.
                raise ValueError(f"the receipt line would be {reason}")
            self._write(prefix + encoded + b"\n")
            self._write_head(seq, line["hash"])
        return line


    def _refuse_special(self) -> None:
        _refuse_special(self.path)
        _refuse_special(self.head_path, "head")
        _refuse_special(self.lock_path, "lock")

    def _refuse_link(self) -> None:
        if self.path.is_symlink():
            raise LedgerError(
                f"the receipt ledger path {self.path} is a symbolic link; receipts are written "
                f"only to the file the path names (set {ENV_RECEIPT_LOG} to the file the link "
                "points to)"
            )

    def _write(self, data: bytes) -> None:
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | _BINARY
        # O_NOFOLLOW closes the gap between the link check and the open where it exists;
        # O_NONBLOCK the one before a FIFO (opening one for writing waits for a reader; with
        # it, the open fails at once or the fstat below refuses it).
        flags |= getattr(os, "O_NOFOLLOW", 0) | _NONBLOCK
        try:
            fd = os.open(self.path, flags, 0o666)
        except OSError as exc:
            if exc.errno == getattr(errno, "ELOOP", None):
                self._refuse_link()
            if exc.errno == getattr(errno, "ENXIO", None):  # a FIFO with no reader
                raise NotARegularFileError(self.path, "FIFO (named pipe)") from None
            raise
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            os.close(fd)
            raise NotARegularFileError(self.path, _file_kind(mode))
        with os.fdopen(fd, "ab") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())

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
            with open_regular(self.path, follow=False) as fh:
                raw, ends_nl = _read_last_line(fh, size)
                last = _parse_line(raw)
                if last is None:
                    # Rare path (a torn or damaged tail): find line numbers by a full read.
                    fh.seek(0)
                    last, bad, ends_nl = _scan_tail(fh, size)
                    for number, digest, torn_shaped, reason in bad:
                        if not torn_shaped:
                            # An interrupted write leaves a bad last line without its newline
                            # and no longer than a line we write; anything else is damage.
                            raise LedgerError(
                                f"the receipt ledger is damaged: line {number} is not a receipt "
                                f"({reason}); run `readingroom receipts verify`, then start a "
                                "new ledger (or remove that line knowingly)"
                            )
                        torn.append({"line": number, "sha256": digest})
            if not ends_nl:
                prefix = b"\n"
        last_seq = last["seq"] if last else 0
        last_hash = last["hash"] if last else GENESIS_HASH
        head, _ = _read_head(self.head_path)
        if head is not None and (
            head["count"] > last_seq or (head["count"] == last_seq and head["hash"] != last_hash)
        ):
            raise LedgerError(
                f"the receipt ledger is damaged: it ends at receipt {last_seq} but its head "
                f"file records receipt {head['count']}: lines were cut or rewritten; run "
                "`readingroom receipts verify` and start a new ledger (or remove "
                f"{self.head_path.name} knowingly)"
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


def _read_last_line(fh: Any, size: int) -> tuple[bytes | None, bool]:
    """The file's last line (no terminator; None past the line limit) and whether it ends LF."""
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
        if block > MAX_LINE_BYTES:
            return None, ends_nl
        block *= 2


def _scan_tail(
    fh: Any, size: int
) -> tuple[dict[str, Any] | None, list[tuple[int, str, bool, str]], bool]:
    """The last ledger-shaped line, the bad lines after it, and whether the data ends LF.

    Each bad line is ``(number, sha256, torn-shaped, why it is not a receipt)``; torn-shaped
    means what an interrupted write can leave: no newline, and within the line limit.
    """
    last: dict[str, Any] | None = None
    after: list[tuple[int, str, bool, str]] = []
    ends_nl = True
    for line in read_lines(fh, size):
        obj, reason = decode_line(line.raw)
        ends_nl = line.ends_nl
        if obj is None:
            torn_shaped = not line.ends_nl and line.raw is not None
            after.append((line.number, line.sha256, torn_shaped, reason))
        else:
            last, after = obj, []
    return last, after, ends_nl


def ledger_snapshot(path: Path) -> tuple[int, dict[str, Any] | None, bool]:
    """The ledger's size and head as of one moment, taken under the lock when there is one.

    The ledger is append-only, so its first ``size`` bytes can be read after the lock is
    released: an append meanwhile only adds bytes past them.
    """
    lock_path = Path(str(path) + ".lock")

    def read() -> tuple[int, dict[str, Any] | None, bool]:
        try:
            head, head_bad = _read_head(Path(str(path) + ".head"))
        except NotARegularFileError:
            head, head_bad = None, True
        return path.stat().st_size, head, head_bad

    # Only lock a live ledger (one whose lock file exists): verifying a copy must not litter
    # its folder, and a read-only or busy folder must not stop a verification.
    if lock_path.is_file():
        try:
            with _exclusive(lock_path, READ_LOCK_TIMEOUT):
                return read()
        except OSError:
            pass
    return read()


def iter_receipts(path: os.PathLike[str] | str) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, line)`` for each ledger-shaped line, skipping unreadable ones.

    Raises:
        OSError: as :func:`verify` (a FIFO or device is refused without blocking).
    """
    with open_regular(Path(path)) as fh:
        for line in read_lines(fh):
            obj = _parse_line(line.raw)
            if obj is not None:
                yield line.number, obj


def describe_os_error(exc: OSError) -> str:
    """What an OS error means for a file being written, in words (never just ``OSError``)."""
    plain = {
        errno.ENOSPC: "the disk is full",
        getattr(errno, "EDQUOT", -1): "the disk quota is exhausted",
        errno.EACCES: "permission denied",
        errno.EPERM: "the operation is not permitted",
        errno.EROFS: "the file system is read-only",
        errno.ENOENT: "a folder on the way does not exist",
        errno.ENOTDIR: "a part of the path is a file, not a folder",
        errno.EISDIR: "the path is a folder",
        errno.EEXIST: "a file of that name is in the way",
        errno.EIO: "an input/output error of the disk",
        errno.ENAMETOOLONG: "the path is too long",
    }.get(exc.errno or -2)
    name = errno.errorcode.get(exc.errno or -2)
    if plain:
        return f"{plain} ({name})" if name else plain
    reason = exc.strerror or type(exc).__name__
    return f"{reason} ({name})" if name else reason


def deposit(
    entry: Mapping[str, Any],
    *,
    env: Mapping[str, str] | None = None,
    lock_timeout: float = LOCK_TIMEOUT,
    proceed: Callable[[], bool] | None = None,
) -> DepositOutcome:
    """Append a receipt to the ledger named by ``MCP_RECEIPT_LOG``; never raises.

    Args:
        entry: the receipt fields (see :meth:`Ledger.append`).
        env: where to read ``MCP_RECEIPT_LOG`` (default ``os.environ``).
        lock_timeout: seconds to wait for the cross-process lock.
        proceed: asked once the lock is held; False writes nothing (see
            :meth:`Ledger.append`).
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
        line = Ledger(target, lock_timeout=lock_timeout).append(entry, proceed=proceed)
    except Timeout:
        message = f"the receipt ledger stayed locked for {lock_timeout:g} s"
    except LedgerError as exc:
        message = str(exc)
    except OSError as exc:
        message = f"the receipt ledger could not be written: {describe_os_error(exc)}"
    except (TypeError, ValueError) as exc:
        message = f"the receipt could not be serialised ({exc.__class__.__name__})"
    except Exception:  # a defect; the search it records must still be answered
        log.exception("receipt ledger append failed")
        message = "the receipt could not be written (a defect; the server's log has details)"
    else:
        return DepositOutcome(deposited=True, code=None, ledger_hash=line["hash"])
    log.warning("receipt not written: %s", message)
    return DepositOutcome(
        deposited=False, code=Code.RECEIPT_WRITE_FAILED, ledger_hash=None, message=message
    )
