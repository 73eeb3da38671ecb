"""``book-agent [--data-dir DATA] install-host --host HOST [BOOK_ID] [options]``.

Registers ``book-agent mcp`` with one MCP host through the suite's host modules (their write
discipline: parse or refuse, backup, atomic replace, read back): an all-books entry
``book-agent``, or with BOOK_ID a per-book entry ``book-agent-BOOK_ID`` serving only that book.
The entry runs ``book-agent --data-dir DATA mcp [BOOK_ID] [launch options]`` with an absolute
command; the deadline goes in ``READINGROOM_TOOL_DEADLINE`` so each host derives its own
timeouts (Codex ``tool_timeout_sec`` = deadline + 30, ``startup_timeout_sec`` 30; Claude
Desktop's entry caps it at 50 s, under its fixed 60 s); API keys of the semantic options are
named (Codex ``env_vars``), never written. For hosts that load Agent Skills (Codex, Claude
Code) the Book Skill of each served book is exported into the host's skill folder; for the
others, into a zip for manual upload.

The host side is the suite's: the declaration names :func:`describe_install`
(``SERVER.instances``), the ``book-agent`` program (``readingroom.programs``) shows it the
command line with the suite's host names, and ``readingroom.setup.instance`` registers the
:class:`~readingroom.core.declaration.InstanceRequest` it returns, then calls its ``skills``
with the host's skill folder. This package imports ``core`` only, like every server.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ...core.declaration import InstanceRequest
from ...core.errors import CoreError
from . import data_folder, split_command

__all__ = ["describe_install", "split_install_argv"]


def split_install_argv(argv: Sequence[str]) -> tuple[Path | None, list[str]] | None:
    """``(data_dir, arguments after 'install-host')`` for an install-host command, else None."""
    return split_command(argv, "install-host")


def _parser(hosts: Sequence[str]) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="book-agent [--data-dir DATA] install-host",
        description="Register book-agent's MCP server with one host: an all-books entry "
        "(book-agent), or a per-book entry (book-agent-BOOK_ID) serving only BOOK_ID. Codex "
        "and Claude Code also get the Book Skill in their skill folder; other hosts a zip to "
        "upload. Exit 0 done, 1 nothing done or verify failed, 2 usage or a host file that "
        "does not parse (untouched).")
    p.add_argument("--host", required=True, choices=tuple(hosts))
    p.add_argument("book_id", nargs="?", help="serve this book only (default: every book)")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--print", dest="mode", action="store_const", const="print",
                      help="print the entry (or claude commands); change nothing")
    mode.add_argument("--remove", dest="mode", action="store_const", const="remove",
                      help="remove the entry (exported skills stay)")
    mode.add_argument("--verify", dest="mode", action="store_const", const="verify",
                      help="check the entry is there and points at the executable")
    p.set_defaults(mode="install")
    p.add_argument("--config", type=Path, metavar="FILE",
                   help="the host's config file, when not in its documented place")
    p.add_argument("--install-dir", metavar="DIR",
                   help="folder holding book-agent(.exe) (default: this program's folder)")
    p.add_argument("--suite-data-dir", type=Path, metavar="DIR",
                   help="the suite's data folder, for the shared receipt ledger (default: as "
                   "readingroom setup)")
    p.add_argument("--force", action="store_true",
                   help="replace an entry of that name even when it points at another program")
    p.add_argument("--timeout", type=float, metavar="S",
                   help="per-call deadline, 1-900 s (default 90; Claude Desktop: at most 50)")
    p.add_argument("--concurrency", type=int, metavar="N", help="calls at once, 1-16")
    p.add_argument("--image-results", choices=("standard", "compat"),
                   help="compat: image tools without structuredContent (see book-agent mcp "
                   "--help)")
    p.add_argument("--semantic-model", type=Path, metavar="DIR")
    p.add_argument("--embeddings-url", metavar="URL")
    p.add_argument("--embeddings-model", metavar="NAME")
    p.add_argument("--embeddings-key-env", metavar="NAME",
                   help="the key's variable name (the entry names it; never its value)")
    p.add_argument("--rerank-url", metavar="URL")
    p.add_argument("--rerank-model", metavar="NAME")
    p.add_argument("--rerank-key-env", metavar="NAME")
    p.add_argument("--no-skill", action="store_true", help="do not export the Book Skill")
    p.add_argument("--skill-zip-dir", type=Path, metavar="DIR",
                   help="where zips go for hosts without a skill folder (default: "
                   "DATA/skill-exports)")
    return p


def _launch(args: argparse.Namespace) -> list[str]:
    """The arguments after ``mcp``, checked as ``book-agent mcp`` would check them."""
    out = [args.book_id] if args.book_id else []
    if args.timeout is not None and not 1 <= args.timeout <= 900:
        raise ValueError(f"--timeout {args.timeout:g} is outside 1-900 seconds")
    if args.concurrency is not None:
        if not 1 <= args.concurrency <= 16:
            raise ValueError(f"--concurrency {args.concurrency} is outside 1-16")
        out += ["--concurrency", str(args.concurrency)]
    if args.image_results:
        out += ["--image-results", args.image_results]
    if args.semantic_model is not None and args.embeddings_url:
        raise ValueError("choose --semantic-model or --embeddings-url, not both")
    if args.semantic_model is not None:
        out += ["--semantic-model", str(args.semantic_model.expanduser().resolve())]
    if bool(args.embeddings_url) != bool(args.embeddings_model):
        raise ValueError("--embeddings-url and --embeddings-model go together")
    if args.embeddings_url:
        out += ["--embeddings-url", args.embeddings_url, "--embeddings-model",
                args.embeddings_model]
        if args.embeddings_key_env:
            out += ["--embeddings-key-env", args.embeddings_key_env]
    if bool(args.rerank_url) != bool(args.rerank_model):
        raise ValueError("--rerank-url and --rerank-model go together")
    if args.rerank_url:
        out += ["--rerank-url", args.rerank_url, "--rerank-model", args.rerank_model]
        if args.rerank_key_env:
            out += ["--rerank-key-env", args.rerank_key_env]
    return out


def describe_install(argv: Sequence[str],
                     hosts: Sequence[str]) -> InstanceRequest | int | None:
    """The entry ``book-agent ... install-host ...`` asks for (``SERVER.instances``).

    None when ``argv`` is not an install-host command; an exit status when it finished here
    (``--help`` 0, a usage error 2, an unknown book 1); else the request, whose ``skills``
    exports the served books' Skills once the entry is written.
    """
    from ..service import BookService

    command = split_install_argv(argv)
    if command is None:
        return None
    data_dir, words = command
    parser = _parser(hosts)
    try:
        args = parser.parse_args(words)
    except SystemExit as exc:  # argparse: --help is 0, a usage error 2
        return int(exc.code or 0)
    folder = data_folder(data_dir).expanduser().resolve()
    service = BookService(folder)
    try:
        launch = _launch(args)
        books = [args.book_id] if args.book_id else service.registry.list_ids()
        if args.book_id and args.mode != "remove":
            service.registry.get(args.book_id)  # BOOK_NOT_FOUND, with the remediation
    except ValueError as exc:
        print(f"install-host: {exc}", file=sys.stderr)
        return 2
    except CoreError as err:
        print(f"install-host: {err.code}: {err.message} — {err.remediation}", file=sys.stderr)
        return 1
    secrets = tuple(n for n in (args.embeddings_key_env, args.rerank_key_env) if n)

    def skills(target: Path | None) -> int:
        return _skills(service, books, args, folder, target)

    wants_skills = not args.no_skill and args.mode in ("install", "print")
    return InstanceRequest(
        server="book-agent", host=args.host, mode=args.mode, instance=args.book_id,
        data_dir=folder, launch=tuple(launch), deadline_s=args.timeout, secret_names=secrets,
        config=args.config, install_dir=args.install_dir, suite_data_dir=args.suite_data_dir,
        force=args.force, skills=skills if wants_skills else None)


def _skills(service: Any, books: list[str], args: argparse.Namespace, folder: Path,
            target: Path | None) -> int:
    """Export each served book's Skill for the host: its skill folder ``target``, else a zip."""
    zips = (args.skill_zip_dir or folder / "skill-exports").expanduser()
    if not books:
        print("No book is registered yet: no Book Skill to export (book-agent init FILE).")
        return 0
    failed = 0
    for book_id in books:
        if args.mode == "print":
            where = f"into {target}" if target else f"as a zip in {zips}"
            print(f"# the Book Skill of {book_id} would be exported {where}", file=sys.stderr)
            continue
        try:
            if target is not None:
                env = service.skill_export(book_id, dir=target)
                print(f"Book Skill of {book_id}: {env.data['path']} (loaded by the host)")
            else:
                zips.mkdir(parents=True, exist_ok=True)
                name = service.registry.get(book_id).skill_dir().name
                env = service.skill_export(book_id, zip_path=zips / f"{name}.zip",
                                           overwrite=True)
                print(f"Book Skill of {book_id}: {env.data['path']} (upload it to the host "
                      "by hand; it has no skill folder)")
        except CoreError as err:
            # One damaged book does not keep the others' Skills from their host.
            print(f"install-host: the Book Skill of {book_id} was not exported: {err.code}: "
                  f"{err.message}", file=sys.stderr)
            failed += 1
    return 1 if failed else 0
