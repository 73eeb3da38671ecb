"""``readingroom setup``: open each server's gate, register the suite with hosts, self-test.

Hosts (``--hosts``, comma-separated): by default ``codex`` and ``claude-desktop`` (their files
are created when missing) plus every other supported host whose config file already exists
(Claude Code: its state file or its CLI); ``--hosts none`` registers with no host (to record a
gate alone). Every server of the catalogue is registered with each of them, pointing at one
receipt ledger, ``<data>/receipts.jsonl`` — a server with a gate (a notification its upstream
asks for, say) only once its gate is open; each gate's option records what opens it. Then
every registered server that declares a self-test is self-tested. Nothing here names a
server: gates, self-tests and names come from the catalogue.

Exit status: 0 done (also when a server was held back by its gate: that is the gate working,
and the message says how to go on); 1 a host could not be written (or its file does not
parse), an executable is missing, or a self-test failed; 2 usage (a value a gate refuses, an
unknown host; nothing written).
``--remove`` removes our entries from the chosen hosts (default: every host whose config
exists); the uninstaller uses it.

``--books DIR`` and ``--zotero [DATA_DIR]`` then hand the user's library to the suite's
library server (the one whose declaration has a :class:`~readingroom.core.declaration.Library`,
:func:`library_server`): its installed executable runs the arguments the declaration's hook
gives (book-agent: ``add DIR --recursive``, ``add --zotero``) against the data folder its host
entries name, with its progress and summary on this console, so an install ends with the books
searchable. A file it refuses (the declared exit status) is reported, not a failure; a run that
cannot go on at all (any other non-zero status) is.
"""

from __future__ import annotations

import argparse
import errno
import shlex
import subprocess
import sys
import textwrap
from collections.abc import Callable, Sequence
from datetime import date
from functools import partial
from pathlib import Path
from typing import Any

from ..catalog import SERVERS, ServerInfo
from ..core.declaration import Gate, GateStatus, resolve
from ..core.ledger import describe_os_error
from ..core.platform import Machine, default_data_dir
from ..core.secrets import where
from ..hosts import HOSTS, get_host
from ..hosts.entries import build_entries, ledger_path
from ..hosts.outcome import Action, ConfigParseError, HostError, HostOutcome

__all__ = [
    "DEFAULT_HOSTS",
    "EXIT_FAILED",
    "EXIT_OK",
    "EXIT_USAGE",
    "NO_HOSTS",
    "cmd_setup",
    "default_hosts",
    "gates",
    "library_server",
    "register",
    "rerun_command",
]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2

DEFAULT_HOSTS = ("codex", "claude-desktop")
"""Registered with even when their config file does not exist yet."""

NO_HOSTS = "none"
"""``--hosts none``: change no host (record a gate, run nothing else)."""

SelfTest = Callable[[ServerInfo, list[str]], Any]
"""Runs a server's self-test against a command; returns a report with ``ok`` and ``render()``."""


def gates() -> dict[str, Gate]:
    """Each distinct gate of the catalogue by its option (servers may share one)."""
    return {s.gate.option: s.gate for s in SERVERS.values() if s.gate is not None}


def library_server() -> ServerInfo | None:
    """The catalogue's server that imports the user's library (``--books``, ``--zotero``).

    Raises:
        ValueError: more than one server declares a library.
    """
    found = [s for s in SERVERS.values() if s.library is not None]
    if len(found) > 1:
        raise ValueError(f"more than one server declares a library: "
                         f"{', '.join(s.name for s in found)}")
    return found[0] if found else None


def _dest(gate: Gate) -> str:
    return "gate_" + gate.option.lstrip("-").replace("-", "_")


def register(subparsers: Any) -> None:
    """Add ``setup`` to the ``readingroom`` argparse subparsers."""
    gated = [s.name for s in SERVERS.values() if s.gate is not None]
    parser = subparsers.add_parser(
        "setup",
        help="open the servers' gates, register the servers with hosts, self-test",
        description="Register every server of the suite with the chosen hosts (a server with "
        f"a gate — {', '.join(gated) or 'none now'} — only once its gate is open; the options "
        "below record what opens each), point them all at one receipt ledger in the data "
        "folder, and self-test the installed servers. Exit 0 done (a server held back by its "
        "gate counts as done), 1 a host or a self-test failed, 2 usage (nothing written).",
    )
    choice = parser.add_mutually_exclusive_group()
    for gate in gates().values():
        choice.add_argument(gate.option, dest=_dest(gate), metavar=gate.metavar, help=gate.help)
    choice.add_argument("--remove", action="store_true",
                        help="remove our entries from the hosts instead (default hosts: every "
                        "host whose config exists)")
    parser.add_argument("--hosts", metavar="LIST",
                        help=f"comma-separated hosts ({', '.join(HOSTS)}), or '{NO_HOSTS}' to "
                        "change no host; default: "
                        f"{', '.join(DEFAULT_HOSTS)} plus every other host whose config exists")
    parser.add_argument("--data-dir", metavar="DIR",
                        help="data folder for the receipt ledger and the notification record "
                        "(default: %%USERPROFILE%%\\ReadingRoom on Windows, the platform's user "
                        "data folder elsewhere)")
    parser.add_argument("--install-dir", metavar="DIR",
                        help="folder holding the server executables (default: the folder of "
                        "the running program)")
    parser.add_argument("--no-self-test", action="store_true",
                        help="skip the self-tests of the installed servers")
    library = library_server()
    if library is not None:
        parser.add_argument("--books", metavar="DIR",
                            help=f"then register every PDF, EPUB and Markdown file under DIR "
                            f"with {library.name} (new and changed files only)")
        parser.add_argument("--zotero", nargs="?", const="", metavar="DATA_DIR",
                            help=f"then register the PDF/EPUB attachments of the Zotero "
                            f"library (default ~/Zotero) with {library.name}")
    parser.set_defaults(func=cmd_setup)


def default_hosts(ctx: Machine) -> list[str]:
    """``codex``, ``claude-desktop`` and every other host whose config exists here."""
    others = [name for name in HOSTS
              if name not in DEFAULT_HOSTS and get_host(name, ctx).config_exists()]
    return [*DEFAULT_HOSTS, *others]


def _parse_hosts(value: str | None) -> list[str] | None:
    if value is None:
        return None
    names = list(dict.fromkeys(h.strip() for h in value.split(",") if h.strip()))
    if names == [NO_HOSTS]:
        return []
    unknown = [n for n in names if n not in HOSTS]
    if unknown or not names:
        raise ValueError(f"unknown host(s) {', '.join(unknown) or '(none given)'}; "
                         f"choose from {', '.join(HOSTS)}")
    return names


def rerun_command(argv: Sequence[str], ctx: Machine) -> str:
    """``argv`` as one command line, quoted for this platform's shell."""
    return subprocess.list2cmdline(list(argv)) if ctx.is_windows else shlex.join(argv)


def _rerun_argv(args: argparse.Namespace, gate: Gate, data_dir: Path, install_dir: str
                ) -> list[str]:
    """The setup command to run once the gate's condition is met (absolute folders)."""
    program = sys.executable if getattr(sys, "frozen", False) else "readingroom"
    argv = [program, "setup", gate.option, gate.metavar]
    if args.hosts:
        argv += ["--hosts", args.hosts]
    if args.data_dir:
        argv += ["--data-dir", str(data_dir)]
    if args.install_dir:
        argv += ["--install-dir", install_dir]
    if args.no_self_test:
        argv.append("--no-self-test")
    return argv


def _default_self_test(info: ServerInfo, command: list[str]) -> Any:
    assert info.self_test is not None
    run = resolve(info.self_test)
    return run(command, progress=lambda m: print(f"... {m}", file=sys.stderr))


def cmd_setup(
    args: argparse.Namespace,
    *,
    ctx: Machine | None = None,
    today: date | None = None,
    self_test: SelfTest | None = None,
) -> int:
    """Run ``setup``; ``ctx``, ``today`` and ``self_test`` are injectable for tests."""
    context = ctx or Machine.current()
    given: dict[str, str] = {}
    for option, gate in gates().items():
        value = getattr(args, _dest(gate), None)
        if value is not None:
            given[option] = str(value)
    try:
        hosts = _parse_hosts(args.hosts)
        for option, value in given.items():  # every value checked before anything is written
            gates()[option].resolve().check(value, today=today)
    except ValueError as exc:
        print(f"setup: {exc}; nothing was written", file=sys.stderr)
        return EXIT_USAGE
    data_dir = Path(context.absolute(args.data_dir or default_data_dir(context)))
    install_dir = context.absolute(args.install_dir or Path(sys.executable).parent)
    if args.remove:
        return _remove(hosts, context)
    chosen = default_hosts(context) if hosts is None else hosts
    return _install(args, context, chosen, data_dir, install_dir, given, today,
                    self_test or _default_self_test)


def _remove(hosts: list[str] | None, ctx: Machine) -> int:
    chosen = hosts or [n for n in HOSTS if get_host(n, ctx).config_exists()]
    if not chosen:
        print("No host config found: nothing to remove.")
        return EXIT_OK
    failed = False
    for name in chosen:
        host = get_host(name, ctx)
        outcome = _guarded(partial(host.remove, list(SERVERS)), name)
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
    ctx: Machine,
    hosts: list[str],
    data_dir: Path,
    install_dir: str,
    given: dict[str, str],
    today: date | None,
    self_test: SelfTest,
) -> int:
    if (given or hosts) and not _data_dir_usable(data_dir):
        return EXIT_FAILED
    print(f"data folder: {data_dir} (receipt ledger {ledger_path(data_dir, ctx)})")
    print(f"install folder: {install_dir}")
    statuses = _open_gates(data_dir, given, today)
    servers = [s for s in SERVERS.values() if s.gate is None or statuses[s.gate.option].open]
    held_back = [s for s in SERVERS.values() if s not in servers]
    failed = False
    if not hosts:
        print("No host chosen (--hosts none): no host config was changed.")
    elif servers:
        failed = not _register(servers, hosts, ctx, data_dir, install_dir)
        if not failed:
            _report_secrets(servers, ctx)
    else:
        print("Nothing to register with hosts yet.")
    for info in held_back:
        assert info.gate is not None
        _explain_gate(info, statuses[info.gate.option],
                      _rerun_argv(args, info.gate, data_dir, install_dir), ctx)
    tested = [s for s in servers if s.self_test is not None] if hosts else []
    if not failed and (getattr(args, "books", None) or getattr(args, "zotero", None)
                       is not None):
        failed |= not _add_library(args, ctx, data_dir, install_dir)
    if not failed and tested:
        if args.no_self_test:
            print("self-test skipped (--no-self-test)")
        else:
            for info in tested:
                command = [ctx.join(install_dir, ctx.executable_name(info.name))]
                report = self_test(info, command)
                print(report.render())
                failed |= not report.ok
    return EXIT_FAILED if failed else EXIT_OK


def _data_dir_usable(data_dir: Path) -> bool:
    """Create the data folder (gate records and the ledger live there), or say in one line
    why it cannot be, naming the folder and ``--data-dir``: the installer shows this line."""
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
        if not data_dir.is_dir():
            raise FileExistsError(errno.EEXIST, "a file of that name is in the way")
    except OSError as exc:
        print(f"setup: cannot create the data folder {data_dir}: {describe_os_error(exc)}; "
              "choose a folder you can write with --data-dir DIR. Nothing was written",
              file=sys.stderr)
        return False
    return True


def _add_library(args: argparse.Namespace, ctx: Machine, data_dir: Path,
                 install_dir: str) -> bool:
    """Run the library server's hook over ``--books`` / ``--zotero``; False if it failed."""
    from ..core.declaration import expand_data_args

    info = library_server()
    assert info is not None and info.library is not None  # the options exist only then
    exe = ctx.join(install_dir, ctx.executable_name(info.name))
    if not Path(exe).is_file():
        print(f"setup: not found: {exe}; pass --install-dir with the folder holding "
              f"{info.name}. No book was added", file=sys.stderr)
        return False
    base = [exe, *expand_data_args(info.data_args, lambda rel: str(
        data_dir / rel if rel else data_dir))]
    books = str(ctx.absolute(args.books)) if args.books else None
    zotero = None if args.zotero is None else (str(ctx.absolute(args.zotero))
                                               if args.zotero else "")
    runs = [[*base, *run] for run in info.library.resolve()(books, zotero)]
    ok = True
    for argv in runs:
        print(f"Adding books: {rerun_command(argv, ctx)}")
        code = subprocess.run(argv, check=False).returncode
        if code == info.library.refused_exit:
            print(f"  {info.name} refused some files (see the summary above); the rest are "
                  "registered.")
        elif code != 0:
            print(f"setup: {info.name} {argv[len(base)]} failed (exit {code}).",
                  file=sys.stderr)
            ok = False
    return ok


def _open_gates(data_dir: Path, given: dict[str, str], today: date | None
                ) -> dict[str, GateStatus]:
    """Record the values given, then read every gate's status (printed when open)."""
    statuses = {}
    for option, gate in gates().items():
        keeper = gate.resolve()
        if option in given:
            statuses[option] = keeper.record(data_dir, given[option], today=today)
        else:
            statuses[option] = keeper.status(data_dir)
        if statuses[option].open:
            print(statuses[option].detail)
    return statuses


def _register(servers: Sequence[ServerInfo], hosts: list[str], ctx: Machine,
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
        outcome = _guarded(partial(host.install, entries), name)
        if outcome is None or not outcome.ok:
            ok = False
        elif any(e.action is Action.PRINTED for e in outcome.entries):
            print(f"  {host.title}: run the command(s) above to finish registering.")
    return ok


def _report_secrets(servers: Sequence[ServerInfo], ctx: Machine) -> None:
    """Say, for each registered server with secrets, whether it was registered with them.

    Names only, never values. Host entries never carry a secret; the server reads it at run
    time from its environment, then the OS keyring, so storing one later needs no new setup.
    """
    for info in servers:
        if not info.secrets:
            continue
        found = {name: where(name, ctx.env) for name in info.secrets}
        for name, source in found.items():
            if source == "keyring":
                print(f"{info.name}: registered with {name} (found in the OS keyring).")
            elif source == "environment":
                print(f"{info.name}: registered with {name} (found in this environment: "
                      "assistants started without it will not see it; "
                      f"`readingroom secrets set {name}` keeps it in the OS keyring).")
        required = {c.name: c for c in info.credentials}
        for name in [n for n, source in found.items() if source is None and n in required]:
            need = required[name]
            print(f"{info.name}: registered without {name} (in neither the environment nor "
                  f"the OS keyring): its calls answer NOT_CONFIGURED until you store "
                  f"{need.what} (get it at {need.obtain}) with `readingroom secrets set "
                  f"{name}`; no new setup is needed.")
        missing = [name for name, source in found.items()
                   if source is None and name not in required]
        if missing:
            print(f"{info.name}: registered without {', '.join(missing)} (in neither the "
                  "environment nor the OS keyring); store "
                  f"{'it' if len(missing) == 1 else 'one'} with `readingroom secrets set NAME` "
                  "when you have it: no new setup is needed.")


def _explain_gate(info: ServerInfo, status: GateStatus, rerun: list[str], ctx: Machine
                  ) -> None:
    wrap = textwrap.TextWrapper(width=92, initial_indent="  ", subsequent_indent="  ",
                                break_on_hyphens=False)
    assert info.gate is not None
    print()
    print(f"{info.name} was NOT registered: {status.detail}.")
    for paragraph in info.gate.resolve().explanation():
        print(wrap.fill(paragraph))
    print(f"  When that is done, re-run with {info.gate.option} ({info.gate.help}):")
    print(f"    {rerun_command(rerun, ctx)}")
