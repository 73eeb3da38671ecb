"""``book-agent [--data-dir DATA] mcp [BOOK_ID] [options]``: the MCP stdio server's launch.

Standard library only at import time (and the declaration, and core's data-folder rule): the
options are checked and fd 1 is reserved for JSON-RPC before the SDK, pydantic models or
PyMuPDF load, as :func:`readingroom.core.entry.server_main` does for every server.
Out-of-range options are refused here, at launch, with one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ...core.declaration import help_text
from ...core.settings import ENV_SERVER_CONCURRENCY, ENV_TOOL_DEADLINE
from .. import SERVER
from . import data_folder, split_command

__all__ = ["MCP_USAGE", "mcp_main", "split_mcp_argv"]

MCP_USAGE = """\
Usage: book-agent [--data-dir DATA] mcp [BOOK_ID] [--timeout S] [--concurrency N]
                  [--image-results standard|compat]
                  [--semantic-model DIR | --embeddings-url URL --embeddings-model NAME
                   [--embeddings-key-env NAME]]
                  [--rerank-url URL --rerank-model NAME [--rerank-key-env NAME]]

  BOOK_ID            serve this book only; every other id is refused (BOOK_NOT_ALLOWED).
                     Without it: every registered book.
  --timeout S        per-call deadline, 1-900 seconds (default 90; overrides
                     READINGROOM_TOOL_DEADLINE). The host's own tool timeout is separate:
                     set it above this.
  --concurrency N    calls run at once and worker threads, 1-16 (default 4; overrides
                     READINGROOM_CONCURRENCY).
  --image-results    standard (default): image tools return JSON text, structuredContent
                     and the image. compat: no structuredContent on image tools, because
                     some hosts (Claude Code) drop the content blocks, and so the image,
                     whenever structuredContent is present.

Semantic search (optional; lexical search always runs; nothing is ever downloaded):
  --semantic-model DIR     a local model2vec folder (the one the books were initialised with)
  --embeddings-url URL     or an OpenAI-compatible embeddings endpoint (Ollama, LM Studio,
  --embeddings-model NAME  vLLM, OpenAI), with its model name
  --embeddings-key-env NAME  the variable (or OS keyring entry) holding its API key
  The model loads once, in the background after initialize: until it is ready, searches
  answer lexically and say semantic: warming.
Rerank (optional; per call off | auto | on, skipped when the deadline would be missed):
  --rerank-url URL         a Cohere/Jina-style /rerank endpoint
  --rerank-model NAME, --rerank-key-env NAME
Network calls stop after 120 s whatever the deadline. Keys are read from the environment or
the OS keyring, never from a command line or a config file.

No tool initialises books, runs programs, changes configuration or reads paths outside the
registered packages: use the book-agent command line for init, replace and remove.
"""


def split_mcp_argv(argv: Sequence[str]) -> tuple[Path | None, list[str]] | None:
    """``(data_dir, arguments after 'mcp')`` when ``argv`` is an ``mcp`` command, else None."""
    return split_command(argv, "mcp")


class _Refused(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise _Refused(message)


def _parser() -> _Parser:
    p = _Parser(prog="book-agent mcp", add_help=False)
    p.add_argument("book_id", nargs="?")
    p.add_argument("--timeout", type=float)
    p.add_argument("--concurrency", type=int)
    p.add_argument("--image-results", choices=("standard", "compat"), default="standard")
    p.add_argument("--semantic-model", type=Path)
    p.add_argument("--embeddings-url")
    p.add_argument("--embeddings-model")
    p.add_argument("--embeddings-key-env")
    p.add_argument("--rerank-url")
    p.add_argument("--rerank-model")
    p.add_argument("--rerank-key-env")
    return p


def _check(args: argparse.Namespace, data_dir: Path) -> None:
    if args.timeout is not None and not (1.0 <= args.timeout <= 900.0):
        raise _Refused(f"--timeout {args.timeout:g} is outside 1-900 seconds")
    if args.concurrency is not None and not (1 <= args.concurrency <= 16):
        raise _Refused(f"--concurrency {args.concurrency} is outside 1-16")
    for name, lo, hi in ((ENV_TOOL_DEADLINE, 1, 900), (ENV_SERVER_CONCURRENCY, 1, 16)):
        raw = os.environ.get(name, "").strip()
        given = args.timeout if name == ENV_TOOL_DEADLINE else args.concurrency
        if raw and given is None:
            try:
                ok = lo <= float(raw) <= hi
            except ValueError:
                ok = False
            if not ok:
                raise _Refused(f"{name}={raw!r} is outside {lo}-{hi}")
    if args.semantic_model is not None and args.embeddings_url is not None:
        raise _Refused("choose --semantic-model or --embeddings-url, not both")
    if args.embeddings_url is not None and not args.embeddings_model:
        raise _Refused("--embeddings-url needs --embeddings-model")
    if args.embeddings_url is None and (args.embeddings_model or args.embeddings_key_env):
        raise _Refused("--embeddings-model and --embeddings-key-env need --embeddings-url")
    if args.rerank_url is not None and not args.rerank_model:
        raise _Refused("--rerank-url needs --rerank-model")
    if args.rerank_url is None and (args.rerank_model or args.rerank_key_env):
        raise _Refused("--rerank-model and --rerank-key-env need --rerank-url")
    # A missing model folder is not refused here: the server starts, and every search and
    # book_status says semantic: unavailable, with the reason.
    if args.book_id is not None:
        from ..package import Registry, check_book_id

        check_book_id(args.book_id)
        # A damaged book is served: its tools answer BOOK_DAMAGED, naming the file.
        if not Registry(data_dir).is_registered(args.book_id):
            raise _Refused(f"no registered book {args.book_id!r} in {data_dir} "
                           f"(book-agent --data-dir {data_dir} list)")


def mcp_main(data_dir: Path | None, argv: Sequence[str]) -> int:
    """Serve MCP on stdio until stdin closes; options refused at launch exit 2."""
    from ... import __version__
    from ...core.errors import CoreError

    if any(a in ("-h", "--help") for a in argv):
        sys.stderr.write(help_text(SERVER, __version__) + "\n" + MCP_USAGE)
        return 0
    if "--version" in argv:
        sys.stderr.write(f"{SERVER.name} {__version__}\n")
        return 0
    folder = data_folder(data_dir)
    try:
        args = _parser().parse_args(list(argv))
        _check(args, folder)
    except (_Refused, CoreError) as exc:
        why = exc.message if isinstance(exc, CoreError) else str(exc)
        sys.stderr.write(f"book-agent mcp: {why}; see book-agent mcp --help\n")
        return 2
    from ...core.entry import serve_stdio

    def build() -> Any:
        from ..server import build_book_server

        return build_book_server(folder, book_id=args.book_id, deadline_s=args.timeout,
                                 concurrency=args.concurrency, image_results=args.image_results,
                                 semantic=_semantic(args), reranker=_reranker(args))

    serve_stdio(build)
    return 0


def _semantic(args: argparse.Namespace) -> Any:
    """The launch-time semantic model (loaded later, in the background), or None."""
    if args.semantic_model is None and args.embeddings_url is None:
        return None
    from ..search.semantic import SemanticConfig

    return SemanticConfig(model_dir=args.semantic_model, url=args.embeddings_url,
                          model=args.embeddings_model, key_name=args.embeddings_key_env)


def _reranker(args: argparse.Namespace) -> Any:
    if args.rerank_url is None:
        return None
    from ..search.rerank import HttpReranker

    return HttpReranker(args.rerank_url, args.rerank_model, key_name=args.rerank_key_env)
