"""What a server of the suite declares about itself: one :class:`ServerInfo` per server package.

A server is its folder plus one line in ``readingroom/catalog.py``. Its package exports
``SERVER = ServerInfo(...)``; hosts, setup, the self-test command, the freezer, the ``--help``
text and the docs tables all read that declaration and nothing else of the server. This module
imports only the standard library, so a server's ``__main__`` can read its declaration before
fd 1 is reserved and before anything heavy loads: callables are named by ``"module:attribute"``
references and imported only when used.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any, Protocol

from .settings import ENV_RECEIPT_LOG, ENV_SERVER_CONCURRENCY, ENV_TOOL_DEADLINE

__all__ = [
    "COMMON_SETTINGS",
    "DATA_DIR",
    "Credential",
    "Gate",
    "GateKeeper",
    "GateStatus",
    "InstanceRequest",
    "Instances",
    "Library",
    "Program",
    "ServerInfo",
    "Setting",
    "expand_data_args",
    "help_text",
    "resolve",
    "unique_names",
]


@dataclass(frozen=True)
class Setting:
    """A non-secret environment variable a program reads, with the line that explains it."""

    name: str
    help: str
    default: str = ""
    """The value used when the variable is unset or empty ("" means: unset has a meaning)."""


COMMON_SETTINGS: tuple[Setting, ...] = (
    Setting(ENV_RECEIPT_LOG, "path of the suite's shared receipt ledger (JSONL); unset: no "
            "receipts, and responses say so"),
    Setting(ENV_TOOL_DEADLINE, "per-call server deadline in seconds (1-900)", "90"),
    Setting(ENV_SERVER_CONCURRENCY, "tool calls a server runs at once (1-16); an upstream's "
            "own serial rule (ndl-mcp's) holds regardless", "4"),
)
"""Read by every server (through :func:`readingroom.core.mcpkit.build_server` and the ledger)."""


@dataclass(frozen=True)
class GateStatus:
    """Whether a gate is open, and the sentence that says why."""

    open: bool
    detail: str


class GateKeeper(Protocol):
    """The implementation behind a :class:`Gate` (named by :attr:`Gate.keeper`)."""

    def status(self, data_dir: Path) -> GateStatus:
        """Whether the gate is open for this data folder (never raises)."""
        ...

    def record(self, data_dir: Path, value: str, *, today: date | None = None) -> GateStatus:
        """Record ``value`` (the option's argument) and open the gate.

        Raises:
            ValueError: ``value`` is not acceptable; the message says why (nothing written).
        """
        ...

    def check(self, value: str, *, today: date | None = None) -> None:
        """Validate ``value`` without recording anything.

        Raises:
            ValueError: as :meth:`record`.
        """
        ...

    def explanation(self) -> list[str]:
        """Paragraphs shown when the server is held back: what to do to open the gate."""
        ...


@dataclass(frozen=True)
class Gate:
    """A condition the user must meet before the server is registered with any host.

    ndl-mcp's gate is the notification the NDL asks of continuous API users: ``readingroom
    setup --notification-filed YYYY-MM-DD`` records its date, and only then is ndl-mcp written
    into host configs.
    """

    option: str
    """The ``readingroom setup`` option that records it, e.g. ``--notification-filed``."""
    metavar: str
    help: str
    keeper: str
    """``"module:attribute"`` of the :class:`GateKeeper`."""

    def resolve(self) -> GateKeeper:
        """Import and return the keeper."""
        keeper: GateKeeper = resolve(self.keeper)
        return keeper


@dataclass(frozen=True)
class Library:
    """The server that keeps the user's own library of files: ``readingroom setup --books DIR``
    and ``--zotero [DATA_DIR]`` hand them to its installed executable, so an install ends
    with the books searchable (book-agent's ``add``).

    Setup finds the server by this field (at most one of the catalogue declares it) and runs,
    for each argument list :attr:`runs` gives, ``<executable> <data_args> <arguments>``.
    """

    runs: str
    """``"module:function"`` of a plain function of the server's, ``(books, zotero) ->
    list[list[str]]``: the argument lists that import folder ``books`` (absolute, or None) and
    the Zotero library ``zotero`` (an absolute data folder, ``""`` for the default one, or
    None). Imported only when setup is given ``--books`` or ``--zotero``."""
    refused_exit: int
    """The exit status of a run that finished but refused some files (reported, not a
    failure); any other non-zero status is a failure."""

    def resolve(self) -> Callable[[str | None, str | None], list[list[str]]]:
        """Import and return :attr:`runs`."""
        runs: Callable[[str | None, str | None], list[list[str]]] = resolve(self.runs)
        return runs


@dataclass(frozen=True)
class InstanceRequest:
    """A neutral description of one host entry a server's own command asks for (:class:`Instances`).

    The suite turns it into the entry (the declaration gives command, data arguments and
    environment; this adds the rest) and hands it to the host modules.
    """

    server: str
    """The catalogue name (``book-agent``)."""
    host: str
    """The host module's name (``codex``)."""
    mode: str = "install"
    """``install``, ``print``, ``verify`` or ``remove``."""
    instance: str | None = None
    """None for the server's plain entry; else the entry is ``<server>-<instance>``."""
    data_dir: Path | None = None
    """The server's own data folder (replaces the ``{data_dir}/…`` of its ``data_args``)."""
    launch: tuple[str, ...] = ()
    """Arguments after the declared ``args``."""
    deadline_s: float | None = None
    """The per-call deadline the entry carries (None: the declared one)."""
    secret_names: tuple[str, ...] = ()
    """Secret variable *names* the launch options read; never values."""
    config: Path | None = None
    """The host's config file, when not in its documented place."""
    install_dir: str | None = None
    """The folder holding the executable (None: the running program's)."""
    suite_data_dir: Path | None = None
    """The suite's data folder, for the shared receipt ledger (None: the default)."""
    force: bool = False
    """Replace an entry of that name even when it points at another program."""
    skills: Callable[[Path | None], int] | None = None
    """Run after a successful ``install`` or ``print``: the server exports its skill files
    into the host's skill folder (the argument; None when the host has none: the server
    then makes what it offers for manual upload). Its exit status becomes the command's."""


@dataclass(frozen=True)
class Instances:
    """A server command that registers one entry *per instance* with a host (book-agent's
    ``install-host``: an all-books entry, or one serving a single book).

    The server's console script and frozen executable go through the suite
    (``readingroom.programs``): a command line whose word :attr:`command` appears is first
    shown to :attr:`describe`; what it describes, the suite registers (``setup.instance``).
    Every other command line runs the server's own entry point. So the server names no
    suite module, and the suite runs the command for any server that declares it.
    """

    command: str
    """The sub-command's word, e.g. ``install-host``."""
    describe: str
    """``"module:function"`` of a plain function of the server's, ``(argv, hosts) ->
    InstanceRequest | int | None``: ``argv`` is the whole command line (after the program
    name), ``hosts`` the host names to choose from. None: not this command after all (the
    server's entry point runs it); an int: finished with that exit status (``--help``, a
    usage error, a refused argument); an :class:`InstanceRequest`: register it."""

    def resolve(self) -> Callable[[Sequence[str], Sequence[str]], InstanceRequest | int | None]:
        """Import and return :attr:`describe`."""
        describe: Callable[[Sequence[str], Sequence[str]], InstanceRequest | int | None] = \
            resolve(self.describe)
        return describe


@dataclass(frozen=True)
class Program:
    """An executable of the suite: console script, frozen executable and entry point."""

    name: str
    """Console script and executable name (``ndl-mcp`` → ``ndl-mcp.exe``)."""
    entry_point: str
    """``"module:function"`` as in ``pyproject.toml``'s ``[project.scripts]``."""

    @property
    def module(self) -> str:
        """The ``python -m`` module that runs it (the entry point's package for ``__main__``)."""
        module = self.entry_point.partition(":")[0]
        return module.removesuffix(".__main__")

    def command(self, *, frozen: bool | None = None) -> list[str]:
        """How to start it from here: the frozen executable beside this one, else ``python -m``."""
        if getattr(sys, "frozen", False) if frozen is None else frozen:
            exe = f"{self.name}.exe" if os.name == "nt" else self.name
            return [str(Path(sys.executable).with_name(exe))]
        return [sys.executable, "-m", self.module]


@dataclass(frozen=True)
class Credential:
    """A secret the upstream requires (named in :attr:`ServerInfo.secrets` too).

    The server is registered and starts without it, and answers ``NOT_CONFIGURED`` until it
    is stored; ``readingroom setup`` and ``--help`` say what it is and where to obtain it.
    """

    name: str
    what: str
    """What it is, for a sentence: "NII's application id for the CiNii Web API"."""
    obtain: str
    """Where to get it (a registration page)."""


@dataclass(frozen=True)
class ServerInfo(Program):
    """Everything the suite outside a server needs to know about it."""

    title: str = ""
    description: str = ""
    """One sentence: what the server gives the assistant."""
    settings: tuple[Setting, ...] = ()
    """The server's own non-secret environment variables (those of every server are in
    :data:`COMMON_SETTINGS`); ``--help`` and the docs tables are generated from them."""
    secrets: tuple[str, ...] = ()
    """Secret environment variable *names* (never values), resolved at run time from the
    environment, then the OS keyring."""
    credentials: tuple[Credential, ...] = ()
    """The secrets of :attr:`secrets` the upstream requires, with what each is and where it
    is obtained."""
    credit: tuple[str, ...] = ()
    """The licence and credit lines every response of this server carries."""
    deadline_s: float = 90.0
    """The default per-call deadline (``READINGROOM_TOOL_DEADLINE`` overrides it)."""
    gate: Gate | None = None
    library: Library | None = None
    """Set by the one server that imports the user's library at set-up (:class:`Library`)."""
    instances: Instances | None = None
    """Set by a server whose own command registers per-instance host entries
    (:class:`Instances`); its console script then goes through ``readingroom.programs``."""
    self_test: str | None = None
    """``"module:function"`` of its self-test, ``run(command=None, *, progress=None)`` returning
    a :class:`readingroom.core.selftest.SelfTestReport`; None when it has none."""
    args: tuple[str, ...] = ()
    """Extra command-line arguments of the host entry."""
    data_args: tuple[str, ...] = ()
    """Arguments host entries put before :attr:`args`, where an argument ``{data_dir}`` or
    ``{data_dir}/a/b`` stands for the suite's data folder (or that path inside it), written in
    the platform's native form: ``("--data-dir", "{data_dir}/book-agent")``. ``python -m`` and
    the contract start the server with :attr:`args` alone (it then finds its data as without
    a host)."""
    tool_prefix: str = ""
    """What every tool name starts with, e.g. ``ndl_`` (default: the name up to ``-mcp`` or
    ``-agent``, hyphens as underscores, then ``_``)."""

    @property
    def prefix(self) -> str:
        """The declared :attr:`tool_prefix`, or the one derived from the name."""
        if self.tool_prefix:
            return self.tool_prefix
        stem = self.name.removesuffix("-mcp").removesuffix("-agent")
        return stem.replace("-", "_") + "_"

    @property
    def all_settings(self) -> tuple[Setting, ...]:
        """The common settings, then the server's own."""
        return (*COMMON_SETTINGS, *self.settings)


DATA_DIR = "{data_dir}"
"""The placeholder of :attr:`ServerInfo.data_args` for the suite's data folder."""


def expand_data_args(args: Sequence[str], join: Callable[[str], str]) -> tuple[str, ...]:
    """``args`` with each ``{data_dir}[/relative/path]`` replaced by ``join(relative/path)``.

    ``join`` turns a ``/``-separated path inside the data folder ("" for the folder itself)
    into the absolute path a host entry carries.
    """
    out = []
    for arg in args:
        if arg == DATA_DIR or arg.startswith(DATA_DIR + "/"):
            out.append(join(arg[len(DATA_DIR):].strip("/")))
        else:
            out.append(arg)
    return tuple(out)


def help_text(info: ServerInfo, version: str) -> str:
    """The ``--help`` text of a server, generated from its declaration."""
    lines = [
        f"{info.name} {version}: {info.title}",
        info.description,
        "",
        f"An MCP stdio server: run it from an MCP host (stdout carries JSON-RPC only; logs go "
        f"to stderr). `{info.name} --version` prints the version.",
        "",
        "Environment:",
    ]
    width = max(len(s.name) for s in info.all_settings)
    for s in info.all_settings:
        value = f"{info.deadline_s:g}" if s.name == ENV_TOOL_DEADLINE else s.default
        default = f" (default {value})" if value else ""
        lines.append(f"  {s.name.ljust(width)}  {s.help}{default}")
    if info.secrets:
        lines += ["", "Secrets (environment first, then the OS keyring; `readingroom secrets "
                      "set NAME`):"]
        required = {c.name: c for c in info.credentials}
        for name in info.secrets:
            need = required.get(name)
            lines.append(f"  {name}" + (f"  required: {need.what} (get it at {need.obtain}); "
                                        "without it every call answers NOT_CONFIGURED"
                                        if need else ""))
    if info.gate is not None:
        lines += ["", f"Registered with hosts only after `readingroom setup {info.gate.option} "
                      f"{info.gate.metavar}`: {info.gate.help}"]
    return "\n".join(lines) + "\n"


def resolve(reference: str | Callable[..., Any]) -> Any:
    """Import ``"package.module:attribute"`` and return the attribute (callables pass through)."""
    if not isinstance(reference, str):
        return reference
    module_name, _, attribute = reference.partition(":")
    if not module_name or not attribute:
        raise ValueError(f"{reference!r} is not a 'module:attribute' reference")
    target: Any = importlib.import_module(module_name)
    for part in attribute.split("."):
        target = getattr(target, part)
    return target


def unique_names(programs: Sequence[Program]) -> dict[str, Program]:
    """Programs by name; a repeated name is a declaration error."""
    by_name: dict[str, Program] = {}
    for program in programs:
        if program.name in by_name:
            raise ValueError(f"two programs of the suite are named {program.name!r}")
        by_name[program.name] = program
    return by_name
