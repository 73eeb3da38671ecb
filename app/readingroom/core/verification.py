"""Verifying the receipt ledger: the chain, the ``.head`` sidecar and a cited head.

:func:`verify` reads a ledger (:mod:`.ledger` writes it) with the same bounded line reader
and says what it finds: a count and the head when intact, else each problem by line. What a
verified ledger proves, and what it cannot, is :data:`PROOF_LIMITS`; with ``head=`` it checks
that the ledger still holds exactly the history up to a cited head (see :class:`Anchor`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from .ledger import (
    GENESIS_HASH,
    decode_line,
    ledger_snapshot,
    line_acks,
    line_hash,
    open_regular,
    read_lines,
)

__all__ = ["PROOF_LIMITS", "Anchor", "Problem", "ProblemKind", "VerifyReport", "is_head_hash",
           "verify"]

PROOF_LIMITS = (
    "A hash chain without a key detects accidental damage, lines cut from the end (while the "
    ".head file is kept) and edits by anyone who does not recompute the hashes. It does not "
    "detect a deliberate rewrite: whoever can write the file can recompute every hash and the "
    "head. To show later that the history was not rewritten, cite the head hash (a methods "
    "section, a lab notebook, an e-mail) and check it with `readingroom receipts verify --head "
    "HASH`."
)
"""What a verified ledger proves and what it does not, in the words every output uses."""


_HEX64 = re.compile(r"[0-9a-f]{64}")


class ProblemKind(StrEnum):
    """What is wrong with a ledger line."""

    edited = "edited"
    broken_chain = "broken_chain"
    torn = "torn"
    truncated = "truncated"
    unparseable = "unparseable"
    anchor_missing = "anchor_missing"


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


@dataclass(frozen=True)
class Anchor:
    """Whether a ledger still holds the exact history up to a head hash cited earlier.

    Attributes:
        hash: the cited head (64 hex digits).
        found: a line with that hash is in the ledger.
        line: that line's number in the file, when found.
        seq: that line's receipt number, when found.
        holds: found, and every line up to it is unedited and chained from the start, so the
            receipts up to it are exactly those the cited hash was computed over.
    """

    hash: str
    found: bool
    line: int | None = None
    seq: int | None = None
    holds: bool = False


@dataclass
class VerifyReport:
    """The result of :func:`verify`.

    ``head_hash`` and ``head_seq`` are the last receipt's hash and number: the head to cite.
    ``anchor`` is the check of a cited head when :func:`verify` was given one.
    """

    ok: bool
    count: int
    problems: list[Problem] = field(default_factory=list)
    first_bad_line: int | None = None
    head_hash: str | None = None
    lines: int = 0
    head_seq: int = 0
    anchor: Anchor | None = None

    @property
    def errors(self) -> list[Problem]:
        """Problems that make the ledger not intact."""
        return [p for p in self.problems if p.level == "error"]

    @property
    def warnings(self) -> list[Problem]:
        """Problems noted that do not break the proof."""
        return [p for p in self.problems if p.level != "error"]


def verify(path: os.PathLike[str] | str, *, head: str | None = None) -> VerifyReport:
    """Check a ledger's hash chain, torn lines and head file, and optionally a cited head.

    Reading follows a symbolic link, and the head file is read beside the file it points to.
    Memory stays bounded whatever the file holds (lines are streamed and capped).

    Args:
        path: the ledger file.
        head: a head hash cited earlier (64 hex digits); the report's ``anchor`` says whether
            the ledger still holds exactly the history up to it. A cited head that is not
            there, or whose history was changed, is an error.

    Raises:
        OSError: the ledger file cannot be read; :class:`NotARegularFileError` (an OSError)
            when it is a FIFO, folder or device, which is refused without blocking.

    Returns:
        A report whose ``ok`` is False when any line was edited, removed, reordered or
        inserted, a line is not a receipt, a torn line is not acknowledged, lines were cut
        from the end, or the cited head does not hold.
    """
    path = Path(os.path.realpath(path))
    with open_regular(path):
        pass  # refuse a FIFO or device before anything waits on it
    size, head_file, head_bad = ledger_snapshot(path)
    problems: list[Problem] = []
    count = 0
    prev_hash, expected_seq, prev_line = GENESIS_HASH, 1, 0
    pending: list[_Pending] = []
    last_seq, last_hash = 0, None
    seq_lines: dict[int, tuple[int, str]] = {}
    lines = 0
    anchor_at: tuple[int, int] | None = None
    cited = head.lower() if head is not None else None

    with open_regular(path) as fh:
        for entry in read_lines(fh, size):
            number = lines = entry.number
            obj, reason = decode_line(entry.raw)
            if obj is None:
                pending.append((number, entry.sha256, entry.ends_nl, reason))
                continue
            problems += _acknowledged(pending, line_acks(obj), number)
            pending = []
            found = _chain_problems(obj, number, prev_hash, expected_seq, prev_line)
            problems += found
            if not found:
                count += 1
            if cited is not None and anchor_at is None and obj["hash"] == cited:
                anchor_at = (number, obj["seq"])
            # Resynchronise on the line as found, so one damage is reported once, not cascaded.
            prev_hash, expected_seq, prev_line = obj["hash"], obj["seq"] + 1, number
            last_seq, last_hash = obj["seq"], obj["hash"]
            seq_lines[obj["seq"]] = (number, obj["hash"])

    problems += _unacknowledged(pending)
    problems.extend(_head_problems(head_file, head_bad, last_seq, seq_lines, lines))
    anchor = None if cited is None else _anchor(cited, anchor_at, problems, lines)

    problems.sort(key=lambda p: (p.line, p.level != "error"))
    errors = [p for p in problems if p.level == "error"]
    return VerifyReport(
        ok=not errors,
        count=count,
        problems=problems,
        first_bad_line=min(p.line for p in errors) if errors else None,
        head_hash=last_hash,
        lines=lines,
        head_seq=last_seq,
        anchor=anchor,
    )


_Pending = tuple[int, str, bool, str]
"""A line that is not a receipt: its number, SHA-256, whether it ends in a newline, why."""


def _acknowledged(pending: list[_Pending], acks: list[tuple[Any, Any]],
                  number: int) -> list[Problem]:
    """The findings for the unreadable lines before receipt line ``number``: torn lines it
    acknowledges (a warning), else lines that are not receipts; an acknowledgement of torn
    lines that are not there breaks the chain."""
    if pending:
        if acks == [(bad, digest) for bad, digest, _, _ in pending]:
            return [Problem(bad, ProblemKind.torn, f"incomplete line from an interrupted write, "
                            f"acknowledged by line {number}", level="warning")
                    for bad, _digest, _nl, _why in pending]
        return [Problem(bad, ProblemKind.unparseable, f"not a receipt line ({why}) and not "
                        "acknowledged by the next line")
                for bad, _digest, _nl, why in pending]
    if acks:
        return [Problem(number, ProblemKind.broken_chain,
                        "acknowledges a torn line that is not there")]
    return []


def _chain_problems(obj: dict[str, Any], number: int, prev_hash: str, expected_seq: int,
                    prev_line: int) -> list[Problem]:
    """What is wrong with receipt line ``number`` itself: its hash, its link, its number."""
    problems = []
    if line_hash(obj) != obj["hash"]:
        problems.append(Problem(number, ProblemKind.edited, "hash does not match its content"))
    if obj["prev_hash"] != prev_hash:
        where = f"line {prev_line}'s hash" if prev_line else "the start of the ledger"
        problems.append(Problem(number, ProblemKind.broken_chain, f"prev_hash does not match "
                                f"{where} (a line was removed, inserted or moved)"))
    elif obj["seq"] != expected_seq:
        problems.append(Problem(number, ProblemKind.broken_chain,
                                f"seq {obj['seq']} where {expected_seq} was expected"))
    return problems


def _unacknowledged(pending: list[_Pending]) -> list[Problem]:
    """The unreadable lines at the end, with no receipt after them to acknowledge them."""
    return [Problem(bad, ProblemKind.unparseable, f"not a receipt line ({why})") if ends_nl
            else Problem(bad, ProblemKind.torn, "incomplete line (an interrupted write or a cut "
                         "file), not acknowledged by a following line")
            for bad, _digest, ends_nl, why in pending]


def _head_problems(
    head: dict[str, Any] | None,
    head_bad: bool,
    last_seq: int,
    seq_lines: Mapping[int, tuple[int, str]],
    lines: int,
) -> list[Problem]:
    """What the head file says about the end of the ledger."""
    if head_bad:
        return [
            Problem(
                lines,
                ProblemKind.truncated,
                "the head file exists but cannot be read; truncation from the end cannot be "
                "ruled out",
                level="warning",
            )
        ]
    if head is None:
        return []
    if last_seq < head["count"]:
        return [
            Problem(
                lines + 1,
                ProblemKind.truncated,
                f"the head file records {head['count']} receipts but the ledger ends at "
                f"receipt {last_seq}: lines were cut from the end",
            )
        ]
    if head["count"] > 0:
        found = seq_lines.get(head["count"])
        if found is None or found[1] != head["hash"]:
            return [
                Problem(
                    found[0] if found else lines,
                    ProblemKind.truncated,
                    f"receipt {head['count']} does not have the hash the head file records: "
                    "the end of the ledger was cut and rewritten",
                )
            ]
    return []


def _anchor(
    cited: str, at: tuple[int, int] | None, problems: list[Problem], lines: int
) -> Anchor:
    """Judge a cited head against the findings, adding a problem when it does not hold."""
    if at is None:
        problems.append(
            Problem(
                max(lines, 1),
                ProblemKind.anchor_missing,
                f"no receipt has the cited head hash {cited[:12]}…: the history up to it was "
                "rewritten or cut, or this is another ledger",
            )
        )
        return Anchor(hash=cited, found=False)
    line, seq = at
    broken = [p for p in problems if p.level == "error" and p.line <= line]
    if broken:
        problems.append(
            Problem(
                line,
                ProblemKind.anchor_missing,
                f"the cited head is receipt {seq}, but the history up to it does not verify "
                f"(first at line {min(p.line for p in broken)}): it was changed after the head "
                "was cited",
            )
        )
        return Anchor(hash=cited, found=True, line=line, seq=seq, holds=False)
    return Anchor(hash=cited, found=True, line=line, seq=seq, holds=True)


def is_head_hash(text: str) -> bool:
    """Whether ``text`` is a full head hash as :func:`verify` takes it (64 hex digits)."""
    return _HEX64.fullmatch(text.lower()) is not None
