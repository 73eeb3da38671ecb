"""``readingroom setup``: record the NDL notification, register the suite with hosts, self-test.

Hosts (``--hosts``, comma-separated): by default ``codex`` and ``claude-desktop`` (their files
are created when missing) plus every other supported host whose config file already exists
(Claude Code: its state file or its CLI). Every server of the catalogue is registered with each
of them, pointing at one receipt ledger, ``<data>/receipts.jsonl``; ndl-mcp only once the NDL
notification date is recorded. Then the installed ndl-mcp is self-tested.

Exit status: 0 done (also when ndl-mcp was held back for want of a notification date: that is
the gate working, and the message says how to go on); 1 a host could not be written (or its file
does not parse), an executable is missing, or the self-test failed; 2 usage (a malformed or
future date, an unknown host; nothing written).
``--remove`` removes our entries from the chosen hosts (default: every host whose config
exists); the uninstaller uses it.
"""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
import textwrap
from collections.abc import Callable, Sequence
from datetime import date
from pathlib import Path
from typing import Any

from ..catalog import SERVERS, ServerInfo
from ..hosts import HOSTS, get_host
from ..hosts.base import (
    Action,
    ConfigParseError,
    HostContext,
    HostError,
    HostOutcome,
    build_entries,
    ledger_path,
)
from .gate import (
    NDL_FORM_URL,
    SECTION_17_REQUEST,
    NotificationDateError,
    NotificationRecord,
    NotificationRecordError,
    default_data_dir,
    parse_filed_date,
    read_notification,
    record_notification,
)

__all__ = [
    "DEFAULT_HOSTS",
    "EXIT_FAILED",
    "EXIT_OK",
    "EXIT_USAGE",
    "cmd_setup",
    "default_hosts",
    "register",
    "rerun_command",
]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2

DEFAULT_HOSTS = ("codex", "claude-desktop")
"""Registered with even when their config file does not exist yet."""

SELF_TESTED_SERVER = "ndl-mcp"

SelfTest = Callable[[list[str]], Any]
"""Runs the self-test against a server command; returns a report with ``ok`` and ``render()``."""


def register(subparsers: Any) -> None:
    """Add ``setup`` to the ``readingroom`` argparse subparsers."""
    parser = subparsers.add_parser(
        "setup",
        help="record the NDL notification, register the servers with hosts, self-test",
        description="Record the date of the NDL notification, register every server of the "
        "suite with the chosen hosts (ndl-mcp only once that date is recorded), point them all "
        "at one receipt ledger in the data folder, and self-test the installed ndl-mcp. "
        "Exit 0 done (ndl-mcp held back without a notification date counts as done), "
        "1 a host or the self-test failed, 2 usage (nothing written).",
    )
    gate = parser.add_mutually_exclusive_group()
    gate.add_argument("--notification-filed", metavar="YYYY-MM-DD",
                      help="the date you sent the NDL's API form (" + NDL_FORM_URL + ")")
    gate.add_argument("--remove", action="store_true",
                      help="remove our entries from the hosts instead (default hosts: every "
                      "host whose config exists)")
    parser.add_argument("--hosts", metavar="LIST",
                        help=f"comma-separated hosts ({', '.join(HOSTS)}); default: "
                        f"{', '.join(DEFAULT_HOSTS)} plus every other host whose config exists")
    parser.add_argument("--data-dir", metavar="DIR",
                        help="data folder for the receipt ledger and the notification record "
                        "(default: %%USERPROFILE%%\\ReadingRoom on Windows, the platform's user "
                        "data folder elsewhere)")
    parser.add_argument("--install-dir", metavar="DIR",
                        help="folder holding the server executables (default: the folder of "
                        "the running program)")
    parser.add_argument("--no-self-test", action="store_true",
                        help="skip the self-test of the installed ndl-mcp")
    parser.set_defaults(func=cmd_setup)


def default_hosts(ctx: HostContext) -> list[str]:
    """``codex``, ``claude-desktop`` and every other host whose config exists here."""
    others = [name for name in HOSTS
              if name not in DEFAULT_HOSTS and get_host(name, ctx).config_exists()]
    return [*DEFAULT_HOSTS, *others]


def _parse_hosts(value: str | None) -> list[str] | None:
    if value is None:
        return None
    names = list(dict.fromkeys(h.strip() for h in value.split(",") if h.strip()))
    unknown = [n for n in names if n not in HOSTS]
    if unknown or not names:
        raise ValueError(f"unknown host(s) {', '.join(unknown) or '(none given)'}; "
                         f"choose from {', '.join(HOSTS)}")
    return names


def rerun_command(argv: Sequence[str], ctx: HostContext) -> str:
    """``argv`` as one command line, quoted for this platform's shell."""
    return subprocess.list2cmdline(list(argv)) if ctx.is_windows else shlex.join(argv)


def _rerun_argv(args: argparse.Namespace, data_dir: Path, install_dir: str) -> list[str]:
    """The setup command to run once the NDL form has been sent (absolute folders)."""
    program = sys.executable if getattr(sys, "frozen", False) else "readingroom"
    argv = [program, "setup", "--notification-filed", "YYYY-MM-DD"]
    if args.hosts:
        argv += ["--hosts", args.hosts]
    if args.data_dir:
        argv += ["--data-dir", str(data_dir)]
    if args.install_dir:
        argv += ["--install-dir", install_dir]
    if args.no_self_test:
        argv.append("--no-self-test")
    return argv


def _default_self_test(command: list[str]) -> Any:
    from .selftest import run_self_test

    return run_self_test(command, progress=lambda m: print(f"... {m}", file=sys.stderr))


def cmd_setup(
    args: argparse.Namespace,
    *,
    ctx: HostContext | None = None,
    today: date | None = None,
    self_test: SelfTest | None = None,
) -> int:
    """Run ``setup``; ``ctx``, ``today`` and ``self_test`` are injectable for tests."""
    context = ctx or HostContext.current()
    try:
        hosts = _parse_hosts(args.hosts)
        filed = (parse_filed_date(args.notification_filed, today=today)
                 if args.notification_filed else None)
    except (ValueError, NotificationDateError) as exc:
        print(f"setup: {exc}; nothing was written", file=sys.stderr)
        return EXIT_USAGE
    data_dir = Path(context.absolute(args.data_dir or default_data_dir(context)))
    install_dir = context.absolute(args.install_dir or Path(sys.executable).parent)
    if args.remove:
        return _remove(hosts, context)
    return _install(args, context, hosts or default_hosts(context), data_dir, install_dir,
                    filed, today, self_test or _default_self_test)


def _remove(hosts: list[str] | None, ctx: HostContext) -> int:
    chosen = hosts or [n for n in HOSTS if get_host(n, ctx).config_exists()]
    if not chosen:
        print("No host config found: nothing to remove.")
        return EXIT_OK
    failed = False
    for name in chosen:
        host = get_host(name, ctx)
        outcome = _guarded(lambda host=host: host.remove(list(SERVERS)), name)
        failed |= outcome is None or not outcome.ok
    return EXIT_FAILED if failed else EXIT_OK


def _guarded(operation: Callable[[], HostOutcome], name: str) -> HostOutcome | None:
    """Run one host operation and print its report; None (after saying why) when it failed."""
    try:
        outcome = operation()
    except ConfigParseError as exc:
        print(f"{name}: refused: {exc}")
        return None
    except HostError as exc:
        print(f"{name}: failed: {exc}")
        return None
    print(outcome.render())
    return outcome


def _install(
    args: argparse.Namespace,
    ctx: HostContext,
    hosts: list[str],
    data_dir: Path,
    install_dir: str,
    filed: date | None,
    today: date | None,
    self_test: SelfTest,
) -> int:
    print(f"data folder: {data_dir} (receipt ledger {ledger_path(data_dir, ctx)})")
    print(f"install folder: {install_dir}")
    record = _notification(data_dir, filed, today)
    servers = [s for s in SERVERS.values() if record or not s.requires_ndl_notification]
    held_back = [s.name for s in SERVERS.values() if s not in servers]
    failed = False
    if servers:
        failed = not _register(servers, hosts, ctx, data_dir, install_dir)
    else:
        print("Nothing to register with hosts yet.")
    if held_back:
        _explain_gate(held_back, _rerun_argv(args, data_dir, install_dir), ctx)
    if not failed and any(s.name == SELF_TESTED_SERVER for s in servers):
        if args.no_self_test:
            print("self-test skipped (--no-self-test)")
        else:
            command = [ctx.join(install_dir, ctx.executable_name(SELF_TESTED_SERVER))]
            report = self_test(command)
            print(report.render())
            failed |= not report.ok
    return EXIT_FAILED if failed else EXIT_OK


def _notification(data_dir: Path, filed: date | None, today: date | None
                  ) -> NotificationRecord | None:
    if filed is not None:
        record = record_notification(data_dir, filed, today=today)
    else:
        try:
            record = read_notification(data_dir)
        except NotificationRecordError as exc:
            print(f"warning: ignoring an unreadable notification record: {exc}")
            record = None
    if record is not None:
        print(f"NDL notification: filed {record.filed.isoformat()}, recorded "
              f"{record.recorded.isoformat()} ({record.path})")
    return record


def _register(servers: Sequence[ServerInfo], hosts: list[str], ctx: HostContext,
              data_dir: Path, install_dir: str) -> bool:
    """Register ``servers`` with every host; False when something failed."""
    entries = build_entries(servers, install_dir, data_dir, ctx)
    missing = [e.command for e in entries if not Path(e.command).is_file()]
    if missing:
        print(f"setup: not found: {', '.join(missing)}; pass --install-dir with the folder "
              "holding the server executables. No host was changed", file=sys.stderr)
        return False
    data_dir.mkdir(parents=True, exist_ok=True)
    print(f"Registering {', '.join(s.name for s in servers)} with {', '.join(hosts)}.")
    ok = True
    for name in hosts:
        host = get_host(name, ctx)
        outcome = _guarded(lambda host=host: host.install(entries), name)
        if outcome is None or not outcome.ok:
            ok = False
        elif any(e.action is Action.PRINTED for e in outcome.entries):
            print(f"  {host.title}: run the command(s) above to finish registering.")
    return ok


def _explain_gate(held_back: list[str], rerun: list[str], ctx: HostContext) -> None:
    wrap = textwrap.TextWrapper(width=92, initial_indent="  ", subsequent_indent="  ",
                                break_on_hyphens=False)
    print()
    print(f"{', '.join(held_back)} was NOT registered: no NDL notification date is recorded.")
    print(wrap.fill(SECTION_17_REQUEST))
    print(f"  Form: {NDL_FORM_URL}")
    print("  When you have sent it, re-run with the date you sent it:")
    print(f"    {rerun_command(rerun, ctx)}")
