"""One host entry of a catalogue server with launch options of its own: a server's ``install-host``.

``readingroom install-host`` registers each server as its declaration says. A server whose own
command line registers itself (``book-agent --data-dir DATA install-host --host codex
[BOOK_ID]``) needs more: an entry *per instance* (``book-agent-mybook`` serving one book beside
the all-books ``book-agent``), its own data folder, launch options after its declared
arguments (a book id, a semantic model), a deadline of its choosing and the *names* of the
secrets those options read. :func:`register_instance` builds that entry from the declaration
(:func:`readingroom.hosts.entries.build_entry`: absolute command, the shared receipt ledger)
and hands it to the suite's host modules, with their write discipline, printing, verifying
and removing as ``readingroom install-host`` does. Nothing here names a server: the server
declares the command (:class:`~readingroom.core.declaration.Instances`), its program
(``readingroom.programs``) asks the server's function to describe the entry
(:class:`~readingroom.core.declaration.InstanceRequest`) and :func:`register_request`
registers it, so a server package imports neither ``setup`` nor ``hosts``.

:func:`skill_folder` says where a host loads Agent Skills from (Codex, Claude Code), so the
server can export its skills there; hosts without one get a zip for manual upload.
"""

from __future__ import annotations

import dataclasses
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from ..catalog import SERVERS
from ..core.declaration import InstanceRequest, expand_data_args
from ..core.platform import Machine, default_data_dir
from ..core.settings import ENV_TOOL_DEADLINE
from ..hosts import HOSTS, get_host
from ..hosts.apply import EXIT_FAILED, EXIT_OK, EXIT_USAGE, apply_entries
from ..hosts.entries import ServerEntry, build_entry

__all__ = ["EXIT_FAILED", "EXIT_OK", "EXIT_USAGE", "SKILL_FOLDERS", "Instance", "entry_name",
           "instance_entry", "register_instance", "register_request", "skill_folder"]

SKILL_FOLDERS: dict[str, tuple[str, ...]] = {
    "codex": (".agents", "skills"),
    "claude-code": (".claude", "skills"),
}
"""User-level skill folders, under the home folder, of the hosts that load Agent Skills
(research book-agent.md §2.2-2.3): Codex reads ``~/.agents/skills`` (``~/.codex/skills`` is
its older place), Claude Code ``~/.claude/skills`` (``$CLAUDE_CONFIG_DIR/skills`` when set)."""

_NAME_SAFE = re.compile(r"[^A-Za-z0-9_-]")


@dataclass(frozen=True)
class Instance:
    """What the server asks to be registered (everything else comes from its declaration)."""

    server: str
    """The catalogue name (``book-agent``)."""
    instance: str | None = None
    """None for the server's plain entry; else the entry is ``<server>-<instance>``."""
    data_dir: Path | None = None
    """The server's own data folder, replacing the ``{data_dir}/…`` of its ``data_args``;
    None: as declared (inside the suite's data folder)."""
    launch: tuple[str, ...] = ()
    """Arguments after the declared ``args`` (``mcp BOOK_ID --semantic-model DIR``)."""
    deadline_s: float | None = None
    """The server's per-call deadline in the entry (None: the declared one). Written as
    ``READINGROOM_TOOL_DEADLINE``; hosts derive their own timeouts from it (Codex + 30 s,
    Gemini + 30 s, Claude Desktop caps it at 50 s)."""
    secret_names: tuple[str, ...] = ()
    """Secret variable *names* the launch options read (Codex ``env_vars``); never values."""


def entry_name(server: str, instance: str | None) -> str:
    """The host entry's name: the server's, or ``<server>-<instance>`` (host-safe characters)."""
    if instance is None:
        return server
    return f"{server}-{_NAME_SAFE.sub('-', instance)}"


def instance_entry(spec: Instance, install_dir: str, suite_data_dir: Path,
                   ctx: Machine) -> ServerEntry:
    """The host entry of ``spec``, built from the server's declaration.

    Raises:
        KeyError: the server is not in the catalogue.
        ValueError: a folder is not absolute.
    """
    info = SERVERS[spec.server]
    entry = build_entry(info, install_dir, suite_data_dir, ctx)
    if spec.data_dir is not None:
        own = ctx.absolute(spec.data_dir)

        def in_own(relative: str) -> str:
            # "{data_dir}/book-agent" names the server's own folder: the one the user chose.
            return own

        args = (*expand_data_args(info.data_args, in_own), *info.args, *spec.launch)
    else:
        args = (*entry.args, *spec.launch)
    env = dict(entry.env)
    deadline = info.deadline_s if spec.deadline_s is None else spec.deadline_s
    if spec.deadline_s is not None:
        env[ENV_TOOL_DEADLINE] = f"{deadline:g}"
    secrets = tuple(dict.fromkeys([*entry.secret_names, *spec.secret_names]))
    return dataclasses.replace(entry, name=entry_name(spec.server, spec.instance), args=args,
                               env=env, secret_names=secrets, deadline_s=deadline)


def skill_folder(host: str, ctx: Machine | None = None) -> Path | None:
    """Where ``host`` loads user-level Agent Skills from; None when it has no such folder."""
    context = ctx or Machine.current()
    if host == "claude-code":
        configured = context.env.get("CLAUDE_CONFIG_DIR", "").strip()
        if configured:
            return Path(configured) / "skills"
    parts = SKILL_FOLDERS.get(host)
    return context.home.joinpath(*parts) if parts else None


def _say(message: str) -> None:
    print(f"install-host: {message}", file=sys.stderr)


def register_instance(
    spec: Instance,
    *,
    host: str,
    mode: str = "install",
    config: Path | None = None,
    install_dir: str | None = None,
    suite_data_dir: Path | None = None,
    force: bool = False,
    ctx: Machine | None = None,
) -> int:
    """Install (or ``print``, ``verify``, ``remove``) one entry in one host; the exit status.

    Prints the host's report (or, for ``print``, the snippet on stdout and where it goes on
    stderr) as ``readingroom install-host`` does. Exit 0 done or already so; 1 verify failed
    or nothing done (an entry of that name belongs to another program, ``claude`` missing so
    its commands were printed, the executable missing, a write failed); 2 an unknown host, or
    a config file that does not parse (left untouched).
    """
    if host not in HOSTS:
        _say(f"unknown host {host!r}; choose from {', '.join(HOSTS)}")
        return EXIT_USAGE
    context = ctx or Machine.current()
    target = get_host(host, context)
    suite = Path(context.absolute(suite_data_dir or default_data_dir(context)))
    folder = context.absolute(install_dir or Path(sys.executable).parent)
    try:
        entry = instance_entry(spec, folder, suite, context)
    except ValueError as exc:
        _say(str(exc))
        return EXIT_FAILED
    return apply_entries(target, mode, [entry], config=config, force=force, say=_say)


def register_request(request: InstanceRequest, *, ctx: Machine | None = None) -> int:
    """Register what a server's instance command described; then its skills, if it has any.

    The exit status of :func:`register_instance`, or when that is 0 and the request carries
    ``skills``, theirs (called with the host's :func:`skill_folder`, None when it has none).
    """
    spec = Instance(server=request.server, instance=request.instance,
                    data_dir=request.data_dir, launch=request.launch,
                    deadline_s=request.deadline_s, secret_names=request.secret_names)
    status = register_instance(spec, host=request.host, mode=request.mode,
                               config=request.config, install_dir=request.install_dir,
                               suite_data_dir=request.suite_data_dir, force=request.force,
                               ctx=ctx)
    if status != EXIT_OK or request.skills is None:
        return status
    return request.skills(skill_folder(request.host, ctx))
