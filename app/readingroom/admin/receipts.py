"""``readingroom receipts``: verify the receipt ledger and turn it into a disclosure.

``verify`` checks the hash chain, and with ``--head HASH`` that the ledger still holds exactly
the history up to a head cited earlier; ``report`` lists which terms were searched where and
when, as Markdown to paste into a methods section or as CSV for a spreadsheet, and gives the
head to cite. Both say what the chain proves and what it cannot
(:data:`~readingroom.core.verification.PROOF_LIMITS`). This is the admin CLI, not an MCP server, so
it writes to stdout.

The terms in the ledger are chosen by an assistant, which injected text can steer, so both
formats show what a reader must see, not what the bytes would do: C0 and C1 controls, DEL,
bidi controls, zero-width characters and line separators are shown escaped (``\x1b``,
``\u202e``), and a CSV cell that a spreadsheet would run as a formula (one starting with
``=``, ``+``, ``-``, ``@``, a tab or a carriage return: OWASP's CSV-injection list) gets a
leading single quote. The ledger itself keeps the raw bytes.
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import sys
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..core.files import write_atomically
from ..core.ledger import iter_receipts
from ..core.settings import ENV_RECEIPT_LOG
from ..core.verification import PROOF_LIMITS, VerifyReport, is_head_hash, verify
from .shown import csv_cell, visible

__all__ = [
    "CSV_COLUMNS",
    "cmd_report",
    "cmd_verify",
    "register",
    "render_csv",
    "render_markdown",
    "select_receipts",
]

CSV_COLUMNS = (
    "seq",
    "issued_at",
    "server",
    "operation",
    "terms",
    "query",
    "where",
    "endpoint",
    "total",
    "returned",
    "outcome",
    "query_hash_short",
    "query_hash",
    "ledger_hash",
)

_SHORT = 12

def register(subparsers: Any) -> None:
    """Add the ``receipts`` command group (``verify``, ``report``) to argparse subparsers."""
    group = subparsers.add_parser(
        "receipts",
        help="verify the receipt ledger or report the searches it records",
        description="Verify the receipt ledger or report the searches it records.",
    )
    commands = group.add_subparsers(dest="receipts_command", metavar="COMMAND", required=True)

    ver = commands.add_parser(
        "verify",
        help="check the ledger's hash chain (and a head cited earlier)",
        description=(
            "Check the ledger's hash chain; with --head, that the ledger still holds exactly "
            "the history up to a head hash cited earlier. Exit 0 intact, 1 not, 2 no file. "
            + PROOF_LIMITS
        ),
    )
    ver.add_argument("file", nargs="?", type=Path,
                     help=f"ledger file (default: ${ENV_RECEIPT_LOG})")
    ver.add_argument(
        "--head",
        type=_parse_head,
        metavar="HASH",
        help="a head hash cited earlier (64 hex digits, as `receipts report` prints it)",
    )
    ver.set_defaults(func=cmd_verify)

    rep = commands.add_parser(
        "report",
        help="disclose which terms were searched where and when",
        description=(
            "Disclose which terms were searched where and when, for a methods section. "
            "The ledger is verified first; exit 1 when it is not intact (the report is still "
            "written and says so)."
        ),
    )
    rep.add_argument("file", nargs="?", type=Path,
                     help=f"ledger file (default: ${ENV_RECEIPT_LOG})")
    rep.add_argument(
        "--since",
        type=_parse_since,
        metavar="DATE",
        help="only searches at or after this ISO date or date-time (UTC unless an offset)",
    )
    rep.add_argument("--format", choices=("md", "csv"), default="md", help="output format")
    rep.add_argument("--out", type=Path, metavar="FILE", help="write to FILE instead of stdout")
    rep.set_defaults(func=cmd_report)


def cmd_verify(args: argparse.Namespace) -> int:
    """Run ``receipts verify``: 0 intact, 1 not intact, 2 no ledger to verify."""
    path = _ledger_path(args)
    if path is None:
        return 2
    cited: str | None = getattr(args, "head", None)
    try:
        report = verify(path, head=cited)
    except OSError as exc:
        print(
            f"error: cannot read the receipt ledger {path}: {exc.strerror or exc}", file=sys.stderr
        )
        return 2
    if report.ok:
        if report.lines == 0:
            _emit(f"OK: 0 receipts, the ledger is empty ({path})\n")
        else:
            _emit(f"OK: {report.count} receipts, chain intact (head {_short(report.head_hash)})\n")
        for problem in report.warnings:
            _emit(f"note: {problem}\n")
    else:
        errors = report.errors
        _emit(
            f"NOT INTACT: {len(errors)} problem{'s' if len(errors) != 1 else ''} in {path}, "
            f"first bad line {report.first_bad_line}\n"
        )
        for problem in report.problems:
            prefix = "" if problem.level == "error" else "note: "
            _emit(f"{prefix}{problem}\n")
    anchor = report.anchor
    if anchor is not None and anchor.holds:
        _emit(
            f"cited head holds: receipt {anchor.seq} (line {anchor.line}) is in this ledger, and "
            f"the receipts up to it are exactly those its hash was computed over\n"
        )
    elif anchor is not None:
        _emit(f"cited head does NOT hold: {anchor.hash}\n")
    if report.ok and report.lines:
        _emit(f"head to cite: {_citation(report)}\n")
    _emit(f"what this proves: {PROOF_LIMITS}\n")
    return 0 if report.ok else 1


def cmd_report(args: argparse.Namespace) -> int:
    """Run ``receipts report``: 0 written from an intact ledger, 1 not intact, 2 no ledger."""
    path = _ledger_path(args)
    if path is None:
        return 2
    try:
        check = verify(path)
        receipts = select_receipts((line for _, line in iter_receipts(path)), args.since)
    except OSError as exc:
        print(
            f"error: cannot read the receipt ledger {path}: {exc.strerror or exc}", file=sys.stderr
        )
        return 2
    out: Path | None = getattr(args, "out", None)
    if out is not None and out.is_dir():
        print(f"error: cannot write the report to {out}: it is a folder; name a file",
              file=sys.stderr)
        return 2
    fmt = getattr(args, "format", "md") or "md"
    if fmt == "csv":
        text = render_csv(receipts)
    else:
        text = render_markdown(receipts, check, ledger_name=path.name, since=args.since)
    if out is not None:
        try:
            # A BOM lets spreadsheet programs read the CSV as UTF-8 (Japanese terms survive).
            write_atomically(out, ("\ufeff" if fmt == "csv" else "") + text)
        except OSError as exc:
            print(f"error: cannot write the report to {out}: {exc.strerror or exc}",
                  file=sys.stderr)
            return 2
        print(f"wrote {len(receipts)} receipts to {out}", file=sys.stderr)
    else:
        _emit(text)
    if check.ok and check.lines and (fmt == "csv" or out is not None):
        # The Markdown carries the head in the document; CSV has no place for it.
        print(f"head to cite: {_citation(check)}", file=sys.stderr)
    if not check.ok:
        print(
            f"warning: the ledger is NOT intact (first bad line {check.first_bad_line}); "
            "run `readingroom receipts verify`",
            file=sys.stderr,
        )
        return 1
    return 0


def select_receipts(
    lines: Iterable[Mapping[str, Any]], since: datetime | None = None
) -> list[Mapping[str, Any]]:
    """The receipts issued at or after ``since`` (all of them when ``since`` is None)."""
    if since is None:
        return list(lines)
    chosen = []
    for line in lines:
        when = _parse_time(line.get("issued_at"))
        if when is not None and when >= since:
            chosen.append(line)
    return chosen


def render_markdown(
    receipts: Sequence[Mapping[str, Any]],
    check: VerifyReport,
    *,
    ledger_name: str = "the receipt ledger",
    since: datetime | None = None,
) -> str:
    """The disclosure as Markdown: a heading, a summary paragraph and one table row a search."""
    out = io.StringIO()
    out.write("# Search disclosure\n\n")
    out.write(_summary(receipts, check, ledger_name, since) + "\n\n")
    out.write(_head_paragraph(check, ledger_name) + "\n")
    if receipts:
        out.write(
            "\n| Receipt | When (UTC) | Server | Operation | Terms searched (field → index, "
            "match) | Where | Results (total / returned) | Outcome | Query hash |\n"
        )
        out.write("|---:|---|---|---|---|---|---:|---|---|\n")
        for line in receipts:
            cells = [
                str(line.get("seq", "")),
                _when(line.get("issued_at")),
                str(line.get("server") or "—"),
                str(line.get("operation") or "—"),
                "; ".join(_term_texts(line)) or "—",
                _where(line),
                f"{_count(line.get('total'))} / {_count(line.get('returned'))}",
                str(line.get("outcome") or "—"),
                f"`{_short(line.get('query_hash'))}`" if line.get("query_hash") else "—",
            ]
            out.write("| " + " | ".join(_md_cell(c) for c in cells) + " |\n")
    from .crossindex import cross_index_markdown  # loaded when used

    out.write(cross_index_markdown(receipts))
    return out.getvalue()


def render_csv(receipts: Sequence[Mapping[str, Any]]) -> str:
    """The disclosure as CSV: a header row, then one row per receipt."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for line in receipts:
        qhash = line.get("query_hash") or ""
        writer.writerow([csv_cell(cell) for cell in
            [
                line.get("seq", ""),
                line.get("issued_at", ""),
                line.get("server", ""),
                line.get("operation", ""),
                " ; ".join(_term_texts(line)),
                line.get("query", "") or "",
                _where(line, empty=""),
                line.get("endpoint", "") or "",
                "" if line.get("total") is None else line.get("total"),
                "" if line.get("returned") is None else line.get("returned"),
                line.get("outcome", ""),
                qhash[:_SHORT],
                qhash,
                line.get("hash", ""),
            ]
        ])
    return out.getvalue()


def _summary(
    receipts: Sequence[Mapping[str, Any]],
    check: VerifyReport,
    ledger_name: str,
    since: datetime | None,
) -> str:
    n = len(receipts)
    times = sorted(t for t in (_parse_time(r.get("issued_at")) for r in receipts) if t)
    searches = f"{n} search{'es' if n != 1 else ''}"
    if n and times:
        span = f"between {_fmt_time(times[0])} and {_fmt_time(times[-1])} UTC"
    elif since is not None:
        span = f"since {_fmt_time(since)} UTC"
    else:
        span = "in total"
    by_server = Counter(visible(str(r.get("server") or "unknown")) for r in receipts)
    servers = ", ".join(f"{name} ({count})" for name, count in sorted(by_server.items()))
    text = f"{searches} {'was' if n == 1 else 'were'} recorded {span} in `{ledger_name}`"
    text += f" by {servers}." if n else "."
    if since is not None:
        text += f" Only searches at or after {_fmt_time(since)} UTC are listed."
    if check.ok:
        text += (
            f" Before this report the ledger was checked and found intact: its hash chain of "
            f"{check.count} receipts is unbroken (head `{_short(check.head_hash)}`; what that "
            "proves is stated below)."
        )
        if check.warnings:
            text += (
                f" Verification noted {len(check.warnings)} warning(s), e.g. {check.warnings[0]}."
            )
    else:
        text += (
            f" Before this report the ledger was verified and is NOT intact: "
            f"{len(check.errors)} problem(s), first at line {check.first_bad_line} "
            f"({check.errors[0].kind.value}); receipts from that line on cannot be relied on."
        )
    text += (
        " Each search is identified by a SHA-256 over the query and the parameters sent "
        "(query hash, shortened here; the CSV form gives it in full)."
    )
    return text


def _head_paragraph(check: VerifyReport, ledger_name: str) -> str:
    """The head to cite and what the chain proves, or why there is no head to cite."""
    if not check.lines:
        head = "The ledger is empty: there is no head to cite."
    elif not check.ok:
        head = (
            "No head is given to cite: the ledger is not intact. Start a new ledger for the "
            "searches to be cited."
        )
    else:
        head = f"**Ledger head to cite:** {_citation(check, code='`')}, in `{ledger_name}`."
    return f"{head} {PROOF_LIMITS}"


def _citation(check: VerifyReport, *, code: str = "") -> str:
    return f"receipt {check.head_seq}, SHA-256 {code}{check.head_hash}{code}"


def _parse_head(value: str) -> str:
    text = value.strip().lower()
    if not is_head_hash(text):
        raise argparse.ArgumentTypeError(
            f"not a head hash: {value[:80]!r} (give all 64 hex digits that `readingroom "
            "receipts report` prints; a shortened hash is not proof)"
        )
    return text


def _term_texts(line: Mapping[str, Any]) -> list[str]:
    terms = line.get("normalized_terms")
    texts = []
    if isinstance(terms, list):
        for term in terms:
            if not isinstance(term, Mapping):
                continue
            field, value = term.get("field") or "?", term.get("term", "")
            index, match = term.get("index") or "?", term.get("match") or "?"
            texts.append(f"{field}: “{value}” → {index}, {match}")
    if not texts and line.get("query"):
        texts.append(f"query: {line['query']}")
    return texts


def _where(line: Mapping[str, Any], empty: str = "—") -> str:
    providers = line.get("providers")
    if isinstance(providers, list) and providers:
        return ", ".join(str(p) for p in providers)
    if isinstance(providers, str) and providers:
        return providers
    endpoint = line.get("endpoint")
    if isinstance(endpoint, str) and endpoint:
        return urlsplit(endpoint).hostname or endpoint
    return empty


def _count(value: Any) -> str:
    if value is None or isinstance(value, bool):
        return "unknown"
    return f"{value:,}" if isinstance(value, int) else str(value)


def _md_cell(text: str) -> str:
    return visible(text.replace("\\", "\\\\").replace("|", "\\|"))


def _short(digest: Any) -> str:
    return str(digest)[:_SHORT] if digest else "—"


def _parse_time(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def _parse_since(value: str) -> datetime:
    moment = _parse_time(value.strip())
    if moment is None:
        raise argparse.ArgumentTypeError(f"not an ISO date or date-time: {value!r}")
    return moment


def _fmt_time(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")


def _when(value: Any) -> str:
    moment = _parse_time(value)
    return _fmt_time(moment) if moment else str(value or "—")


def _ledger_path(args: argparse.Namespace) -> Path | None:
    path = getattr(args, "file", None)
    if path:
        return Path(path)
    env_value = os.environ.get(ENV_RECEIPT_LOG, "").strip()
    if env_value:
        return Path(env_value)
    print(
        f"error: no ledger file given and {ENV_RECEIPT_LOG} is not set; pass FILE or set "
        f"{ENV_RECEIPT_LOG}",
        file=sys.stderr,
    )
    return None


def _emit(text: str) -> None:
    """Write text to stdout as UTF-8 even where the console's encoding is narrower."""
    stream = sys.stdout
    encoding = (getattr(stream, "encoding", None) or "utf-8").lower().replace("-", "")
    buffer = getattr(stream, "buffer", None)
    if encoding != "utf8" and buffer is not None:
        stream.flush()
        buffer.write(text.encode("utf-8"))
        buffer.flush()
    else:
        stream.write(text)
