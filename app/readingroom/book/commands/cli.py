"""``book-agent``: the command line over the Core (the MCP server shares the same Core).

Every command prints readable text, or with ``--json`` the same envelope the MCP tool returns.
Errors are one line on stderr (code, message, remediation) and a non-zero exit, under ``--json``
with the failure envelope on stdout as well. That holds for every failure: :func:`main` turns an
exception nobody expected into INTERNAL_ERROR (or PATH_UNUSABLE for a file system refusal) and
logs its traceback on stderr only with ``--debug`` (or ``BOOK_AGENT_DEBUG=1``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import math
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from ...core.envelope import Envelope
from ...core.errors import Code, CoreError
from .. import ENV_DATA_DIR
from . import data_folder

__all__ = ["ENV_DEBUG", "build_parser", "json_safe", "main", "render_text", "terminal_safe"]

ENV_DEBUG = "BOOK_AGENT_DEBUG"
MAX_LOCATOR_FILE_BYTES = 1 << 20
log = logging.getLogger("readingroom.book.commands.cli")
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e"
                     "\u2066-\u2069]")
"""What a book's text must not send to a terminal raw: C0 controls but tab and newline (ESC,
BEL, BS, CR …), DEL, C1 controls (CSI …) and bidi controls."""


def terminal_safe(text: str) -> str:
    """``text`` with every control character shown escaped (``\\x1b``, ``\\u202e``), so a
    title or heading cannot retitle, clear or colour the terminal or reorder what it shows."""
    return _UNSAFE.sub(lambda m: f"\\x{ord(m[0]):02x}" if ord(m[0]) < 0x100
                       else f"\\u{ord(m[0]):04x}", text)


def json_safe(text: str) -> str:
    """JSON text with the same characters as ``\\uXXXX`` escapes (still the same JSON)."""
    return _UNSAFE.sub(lambda m: f"\\u{ord(m[0]):04x}", text)


class _Progress:
    """Pages done / total on stderr: a bar on a terminal, a line per tenth otherwise."""

    def __init__(self) -> None:
        self.tty = sys.stderr.isatty()
        self.last_tenth = -1

    def __call__(self, what: str, done: int, total: int) -> None:
        if total <= 0:
            return
        if self.tty:
            width = 30
            filled = int(width * done / total)
            sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} {what}")
            if done >= total:
                sys.stderr.write("\n")
            sys.stderr.flush()
            return
        tenth = done * 10 // total
        if tenth != self.last_tenth:
            self.last_tenth = tenth
            print(f"book-agent: {done}/{total} {what}", file=sys.stderr, flush=True)


def _hints(pairs: Sequence[str] | None) -> dict[str, str]:
    hints: dict[str, str] = {}
    for pair in pairs or ():
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise CoreError(Code.INVALID_ARGUMENT, f"Hint {pair!r} is not KEY=VALUE.",
                            remediation="e.g. --hint pages=10-20 --hint heading=Einleitung")
        hints[key.strip()] = value.strip()
    return hints


def _locator_arg(value: str) -> Any:
    """A locator argument: JSON text, ``@FILE`` or ``-`` (stdin), read bounded and as UTF-8."""
    from ..paths import check_text, unusable

    try:
        if value == "-":
            raw = sys.stdin.buffer.read(MAX_LOCATOR_FILE_BYTES + 1)
        elif value.startswith("@"):
            with Path(value[1:]).open("rb") as fh:
                raw = fh.read(MAX_LOCATOR_FILE_BYTES + 1)
        else:
            return check_text(value, "The locator")
    except OSError as exc:
        raise unusable(value[1:] or "-", "The locator file",
                       exc.strerror or type(exc).__name__) from None
    if len(raw) > MAX_LOCATOR_FILE_BYTES:
        raise CoreError(Code.INVALID_LOCATOR, "The locator input is larger than 1 MiB; it is "
                        "not a book-agent locator.", remediation="Pass one locator object.")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise CoreError(Code.INVALID_LOCATOR, "The locator input is not UTF-8 text.",
                        remediation="Pass the locator JSON exactly as book-agent printed it."
                        ) from None


def _clip(value: str | None) -> tuple[float, float, float, float] | None:
    if value is None:
        return None
    try:
        x0, y0, x1, y1 = (float(v) for v in value.split(","))
    except ValueError:
        raise CoreError(Code.INVALID_ARGUMENT, f"--clip {value[:80]!r} is not x0,y0,x1,y1.",
                        remediation="e.g. --clip 0,0,300,200 (PDF points)") from None
    if not all(math.isfinite(v) for v in (x0, y0, x1, y1)):
        raise CoreError(Code.INVALID_ARGUMENT, "--clip takes finite numbers (no inf or nan).",
                        remediation="e.g. --clip 0,0,300,200 (PDF points)")
    return x0, y0, x1, y1


class _Parser(argparse.ArgumentParser):
    """argparse whose usage errors are typed, so they reach the one-line error and envelope."""

    def error(self, message: str) -> NoReturn:
        raise _UsageError(message, " ".join(self.format_usage().split()))


class _UsageError(Exception):
    def __init__(self, message: str, usage: str) -> None:
        super().__init__(message)
        self.message, self.usage = message, usage


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``book-agent``."""
    p = _Parser(prog="book-agent", description="Your own books as verifiable "
                "book packages: init, search, read, locate, render.")
    _common_options(p, default=None)
    # The same options after the command (`book-agent status ID --json`). Their default there
    # is SUPPRESS: a sub-parser's default would overwrite what was given before the command.
    common = _Parser(add_help=False)
    _common_options(common, default=argparse.SUPPRESS)
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True,
                           parser_class=_subparser(common))

    c = sub.add_parser("init", help="register a book (PDF, EPUB, Markdown)")
    c.add_argument("source", type=Path)
    c.add_argument("--id", dest="book_id")
    c.add_argument("--title")
    c.add_argument("--replace", action="store_true", help="build a new version of an id")
    c.add_argument("--allow-image-only", action="store_true",
                   help="register a book without any text layer (render only)")
    _ocr_arguments(c)
    _model_options(c, "embed every record with this model into the package")

    c = sub.add_parser("search", help="ranked records for a query, in one book or all (--all)")
    c.add_argument("book_id", nargs="?", help="the book (omit with --all, --book, "
                   "--collection or --tag)")
    c.add_argument("query")
    c.add_argument("--all", action="store_true", dest="all_books",
                   help="search every registered book at once, one ranked list")
    c.add_argument("--book", action="append", dest="book_ids", metavar="ID",
                   help="search these books together (repeat)")
    c.add_argument("--collection", help="search the books of a library collection")
    c.add_argument("--tag", help="search the books with a library tag")
    c.add_argument("--top-k", type=int, default=10)
    c.add_argument("--strict", action="store_true", help="every term (and quoted phrase)")
    c.add_argument("--include-contents", action="store_true",
                   help="also rank contents pages and navigation (left out by default)")
    c.add_argument("--include-index", action="store_true",
                   help="also rank a back-of-book index (left out by default)")
    c.add_argument("--hint", action="append", metavar="KEY=VALUE")
    _model_options(c, "embed the query with this model (the one the book was initialised "
                   "with) and fuse with lexical results")
    c.add_argument("--semantic", choices=("off", "auto", "on"), default="auto")
    c.add_argument("--rerank", choices=("off", "auto", "on"), default="auto")
    c.add_argument("--rerank-url", help="a Cohere/Jina-style /rerank endpoint")
    c.add_argument("--rerank-model")
    c.add_argument("--rerank-key-env", metavar="NAME",
                   help="name of the variable (or keyring entry) holding its API key")

    c = sub.add_parser("locate", help="find a passage in the raw source text")
    c.add_argument("book_id")
    g = c.add_mutually_exclusive_group(required=True)
    g.add_argument("--record", dest="record_id")
    g.add_argument("--text")
    c.add_argument("--hint", action="append", metavar="KEY=VALUE")

    c = sub.add_parser("read-source", help="the source text at a locator")
    c.add_argument("locator", help="locator JSON, @FILE, or - for stdin")
    c.add_argument("--max-chars", type=int)
    c.add_argument("--offset", type=int, default=0)

    c = sub.add_parser("read-entry", help="a record and its neighbours")
    c.add_argument("book_id")
    c.add_argument("record_id")
    c.add_argument("--neighbors", type=int, default=0)
    c.add_argument("--max-chars", type=int)
    c.add_argument("--offset", type=int, default=0,
                   help="start in the record here (a cut read says where to continue)")

    c = sub.add_parser("read-markdown", help="lines of book.md by range or heading")
    c.add_argument("book_id")
    c.add_argument("--start-line", type=int)
    c.add_argument("--end-line", type=int)
    c.add_argument("--heading")
    c.add_argument("--max-chars", type=int)
    c.add_argument("--offset", type=int, default=0,
                   help="start this many characters into the first line (a cut long line)")

    c = sub.add_parser("skill", help="read a Book Skill file, or `skill export`")
    c.add_argument("words", nargs="+", metavar="BOOK_ID [PATH] | export BOOK_ID")
    c.add_argument("--max-chars", type=int)
    c.add_argument("--dir", type=Path, help="export: copy the skill folder here")
    c.add_argument("--zip", type=Path, help="export: write the skill as this zip")
    c.add_argument("--overwrite", action="store_true",
                   help="export: replace whatever is at the destination")

    c = sub.add_parser("render-page", help="a PDF page as PNG")
    c.add_argument("book_id")
    c.add_argument("page_index", type=int, help="zero-based page index")
    c.add_argument("--dpi", type=float)
    c.add_argument("--clip", help="x0,y0,x1,y1 in PDF points")
    c.add_argument("--out", type=Path, required=True)

    c = sub.add_parser("epub-image", help="an image referenced by an EPUB chapter")
    c.add_argument("book_id")
    c.add_argument("locator", nargs="?", help="a chapter locator (JSON, @FILE, or -), for an "
                   "href relative to that chapter; not needed for an href as book.md prints it")
    c.add_argument("href", help="the image: as book.md prints it, as the chapter writes it, or "
                   "relative to the package document")
    c.add_argument("--out", type=Path, required=True)

    _library_commands(sub)

    sub.add_parser("list", help="registered books")
    c = sub.add_parser("status", help="package, counts and capabilities")
    c.add_argument("book_id", nargs="?")
    c = sub.add_parser("remove", help="unregister a book and delete its package")
    c.add_argument("book_id")
    sub.add_parser("mcp", add_help=False,
                   help="serve the books over MCP on stdio (book-agent mcp --help)")
    sub.add_parser("install-host", add_help=False, help="register the MCP server with a host "
                   "and export the Book Skill (book-agent install-host --help)")
    c = sub.add_parser("demo", help="the embedded demo: a book made from this project's docs")
    c.add_argument("--out", "--keep", dest="keep", type=Path, metavar="DIR",
                   help="write the demo here instead of its folder in the user cache "
                   "(emptied on every run; a folder holding other files is refused)")
    return p


def _library_commands(sub: Any) -> None:
    """``add``, ``sync`` and ``cite``: the library as the unit (see :mod:`.library`)."""
    c = sub.add_parser("add", help="register every PDF, EPUB and Markdown file of folders, "
                       "a Zotero library or a calibre library (new and changed files only)")
    c.add_argument("paths", nargs="*", type=Path, metavar="PATH",
                   help="files and folders (a folder: its files; with --recursive, all below)")
    c.add_argument("--recursive", "-r", action="store_true", help="folders: every level below")
    c.add_argument("--zotero", nargs="?", const="", metavar="DATA_DIR",
                   help="a Zotero data directory (default ~/Zotero): its PDF/EPUB attachments "
                   "with their parent items' metadata")
    c.add_argument("--collection", metavar="NAME", help="Zotero: only this collection (and "
                   "its subcollections)")
    c.add_argument("--tag", metavar="TAG", help="Zotero: only items with this tag")
    c.add_argument("--attachments-base", type=Path, metavar="DIR",
                   help="Zotero: the base folder of linked files (default: Zotero's "
                   "baseAttachmentPath preference)")
    c.add_argument("--calibre", type=Path, metavar="LIBRARY_DIR",
                   help="a calibre library folder (the one holding metadata.db)")
    c.add_argument("--formats", metavar="LIST", help="calibre: formats by preference "
                   "(default epub,pdf)")
    _batch_options(c)

    c = sub.add_parser("sync", help="run add again over every source add was given")
    _batch_options(c)

    c = sub.add_parser("cite", help="a book's reference as CSL-JSON, BibTeX or RIS")
    c.add_argument("book_id")
    c.add_argument("--locator", help="a locator (JSON, @FILE or -): adds the passage's page")
    c.add_argument("--format", dest="cite_format", choices=("csl-json", "bibtex", "ris"),
                   default="csl-json")


def _ocr_arguments(c: argparse.ArgumentParser) -> None:
    """--ocr [all] and --ocr-lang, for init and add alike."""
    c.add_argument("--ocr", nargs="?", const="missing", choices=("missing", "all"),
                   help="read PDF pages without a text layer by OCR (Tesseract, installed "
                   "locally); --ocr all: every page")
    c.add_argument("--ocr-lang", default="eng", metavar="LANGS",
                   help="Tesseract languages for --ocr, e.g. jpn+eng (default eng)")


def _batch_options(c: argparse.ArgumentParser) -> None:
    c.add_argument("--dry-run", action="store_true", help="list what would be done; change "
                   "nothing")
    c.add_argument("--jobs", type=int, metavar="N", help="books built at once (default: "
                   "cores - 1, at least 1)")
    c.add_argument("--allow-image-only", action="store_true",
                   help="register PDFs without any text layer too (render only)")
    c.add_argument("--prune", action="store_true", help="remove registered books whose item "
                   "or file left the source (reported otherwise)")
    c.add_argument("--max-size", type=float, metavar="MB", help="refuse files larger than "
                   "this (default 2048)")
    _ocr_arguments(c)


def _common_options(p: argparse.ArgumentParser, *, default: Any) -> None:
    """--data-dir, --json and --debug, accepted before and after the command."""
    p.add_argument("--data-dir", type=Path, default=default,
                   help=f"data folder (default ${ENV_DATA_DIR} or the suite's data folder)")
    flag: dict[str, Any] = {"default": default} if default is argparse.SUPPRESS else {}
    p.add_argument("--json", action="store_true", help="print the envelope as JSON", **flag)
    p.add_argument("--debug", action="store_true", **flag,
                   help=f"log tracebacks of unexpected failures on stderr (or ${ENV_DEBUG}=1)")


def _subparser(common: argparse.ArgumentParser) -> type[_Parser]:
    """A sub-command parser class that inherits the common options (except mcp/install-host,
    whose own options are parsed elsewhere)."""

    class _Sub(_Parser):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            if kwargs.get("add_help", True):
                kwargs["parents"] = [*kwargs.get("parents", ()), common]
            super().__init__(*args, **kwargs)

    return _Sub


_TEXT_ARGS = ("book_id", "title", "query", "record_id", "text", "href", "hint", "words",
              "heading", "collection", "tag", "formats")


def _check_text_args(args: argparse.Namespace) -> None:
    """Text arguments must be UTF-8; paths may hold any bytes the file system allows."""
    from ..paths import check_text

    for name in _TEXT_ARGS:
        value = getattr(args, name, None)
        for one in value if isinstance(value, list) else [value]:
            check_text(one, f"--{name.replace('_', '-')}" if name != "words" else "The "
                       "skill arguments")


def _model_options(c: argparse.ArgumentParser, what: str) -> None:
    g = c.add_argument_group("semantic model (optional, never downloaded)", what)
    g.add_argument("--semantic-model", type=Path, metavar="DIR",
                   help="a local model2vec folder (config.json, tokenizer.json, "
                   "model.safetensors)")
    g.add_argument("--embeddings-url", metavar="URL",
                   help="an OpenAI-compatible embeddings endpoint, e.g. "
                   "http://localhost:11434/v1")
    g.add_argument("--embeddings-model", metavar="NAME")
    g.add_argument("--embeddings-key-env", metavar="NAME",
                   help="name of the variable (or keyring entry) holding its API key")


def _semantic_config(args: argparse.Namespace) -> Any:
    if args.semantic_model is None and args.embeddings_url is None:
        return None
    from ..search.semantic import SemanticConfig

    return SemanticConfig(model_dir=args.semantic_model, url=args.embeddings_url,
                          model=args.embeddings_model, key_name=args.embeddings_key_env)


def _ocr_options(args: argparse.Namespace) -> Any:
    if not args.ocr:
        if args.ocr_lang != "eng":
            raise CoreError(Code.INVALID_ARGUMENT, "--ocr-lang needs --ocr.",
                            remediation="e.g. --ocr --ocr-lang jpn+eng")
        return None
    from ..ocr import OcrOptions

    return OcrOptions(mode=args.ocr, language=args.ocr_lang,
                      on_page=lambda line: print(f"book-agent: {line}", file=sys.stderr,
                                                 flush=True))


def _reranker(args: argparse.Namespace) -> Any:
    if not args.rerank_url:
        return None
    if not args.rerank_model:
        raise CoreError(Code.INVALID_ARGUMENT, "--rerank-url needs --rerank-model.",
                        remediation="e.g. --rerank-model rerank-v3.5")
    from ..search.rerank import HttpReranker

    return HttpReranker(args.rerank_url, args.rerank_model, key_name=args.rerank_key_env)


def _run(args: argparse.Namespace) -> Envelope:
    from ..paths import check_output_file, write_output
    from ..service import BookService, envelope_data

    _check_text_args(args)

    if args.command == "demo":
        from ..demo import run_demo

        return run_demo(keep=args.keep, say=lambda m: print(m, file=sys.stderr))
    service = BookService(data_folder(args.data_dir))
    cmd = args.command
    if cmd == "init":
        return service.init(args.source, book_id=args.book_id, title=args.title,
                            replace=args.replace, allow_image_only=args.allow_image_only,
                            progress=_Progress(), semantic=_semantic_config(args),
                            ocr=_ocr_options(args))
    if cmd == "search" and (args.all_books or args.book_ids or args.collection is not None
                            or args.tag is not None or args.book_id is None):
        return _search_library(service, args)
    if cmd == "search":
        if args.semantic_model or args.embeddings_url or args.rerank_url:
            service = BookService(service.registry.data_dir, semantic=_semantic_config(args),
                                  reranker=_reranker(args))
            service.warm_up(wait=None)  # one search per process: wait for the model
        return service.search(args.book_id, args.query, top_k=args.top_k, strict=args.strict,
                              hints=_hints(args.hint), semantic=args.semantic,
                              rerank=args.rerank, include_contents=args.include_contents,
                              include_index=args.include_index)
    if cmd == "locate":
        return service.locate(args.book_id, record_id=args.record_id, text=args.text,
                              hints=_hints(args.hint))
    if cmd == "read-source":
        return service.read_source(_locator_arg(args.locator), max_chars=args.max_chars,
                                   offset=args.offset)
    if cmd == "read-entry":
        return service.read_entry(args.book_id, args.record_id, neighbors=args.neighbors,
                                  max_chars=args.max_chars, offset=args.offset)
    if cmd == "read-markdown":
        return service.read_markdown(args.book_id, start_line=args.start_line,
                                     end_line=args.end_line, heading=args.heading,
                                     max_chars=args.max_chars, offset=args.offset)
    if cmd == "skill":
        words = args.words
        if words[0] == "export" and len(words) == 2:
            return service.skill_export(words[1], dir=args.dir, zip_path=args.zip,
                                        overwrite=args.overwrite)
        if len(words) > 2:
            raise CoreError(Code.INVALID_ARGUMENT, "skill takes BOOK_ID [PATH] or export "
                            "BOOK_ID.", remediation="e.g. book-agent skill my-book SKILL.md")
        return service.skill_file(words[0], words[1] if len(words) > 1 else "SKILL.md",
                                  max_chars=args.max_chars)
    if cmd == "render-page":
        check_output_file(args.out)  # before the work, so a bad --out costs nothing
        env, png = service.render_page(args.book_id, args.page_index, dpi=args.dpi,
                                       clip=_clip(args.clip))
        write_output(args.out, png)
        envelope_data(env)["out"] = str(args.out)
        return env
    if cmd == "epub-image":
        check_output_file(args.out)
        locator = None if args.locator is None else _locator_arg(args.locator)
        env, data, _mime = service.epub_image(args.book_id, locator, args.href)
        write_output(args.out, data)
        envelope_data(env)["out"] = str(args.out)
        return env
    if cmd in ("add", "sync"):
        return _run_batch(service, args)
    if cmd == "cite":
        locator = None if args.locator is None else _locator_arg(args.locator)
        return service.cite(args.book_id, locator=locator, format=args.cite_format)
    if cmd == "list":
        return service.list()
    if cmd == "status":
        return service.status(args.book_id)
    if cmd == "remove":
        return service.remove(args.book_id)
    raise AssertionError(cmd)


def _search_library(service: Any, args: argparse.Namespace) -> Envelope:
    """``search --all``/``--book``/``--collection``/``--tag``: every chosen book at once."""
    if args.book_id is not None:
        raise CoreError(Code.INVALID_ARGUMENT, "Give a BOOK_ID or --all/--book/--collection/"
                        "--tag, not both.", remediation="e.g. book-agent search --all "
                        "\"harbour light\"")
    if not (args.all_books or args.book_ids or args.collection is not None
            or args.tag is not None):
        raise CoreError(Code.INVALID_ARGUMENT, "search needs a BOOK_ID, or --all to search "
                        "every book.", remediation="book-agent search ID \"WORDS\", or "
                        "book-agent search --all \"WORDS\"")
    if args.hint:
        raise CoreError(Code.INVALID_ARGUMENT, "--hint narrows a search within one book.",
                        remediation="Drop --hint, or search one book: book-agent search ID "
                        "\"WORDS\" --hint KEY=VALUE")
    return service.search_library(
        args.query, book_ids=args.book_ids, collection=args.collection, tag=args.tag,
        top_k=args.top_k, strict=args.strict, include_contents=args.include_contents,
        semantic=args.semantic, rerank=args.rerank, wait=None, progress=_Progress())


def _library_text(env: Envelope, data: dict[str, Any]) -> list[str]:
    out = [f"{len(env.items)} of {data.get('total_matches')} matching records in "
           f"{data.get('books_searched')} of {data.get('books_selected')} books "
           f"({data.get('records_searched'):,} records searched)"]
    if data.get("contents_left_out"):
        out.append(f"  ({_count(data['contents_left_out'], 'contents or navigation record')}"
                   " matching too left out: they list titles, not the chapters)")
    for h in env.items:
        book = h.get("book") or {}
        who = ", ".join(book.get("authors") or [])
        cite = "; ".join(x for x in (who, str(book.get("year") or "")) if x)
        where = " > ".join(h.get("heading_path", []))
        pages = h.get("page_labels") or []
        out.append(f"  {h['book_id']}  {h['record_id']}  {h['score']:.3f}  "
                   f"{_cut(book.get('title') or '', 60)}" + (f" ({cite})" if cite else ""))
        out.append(f"      {where}" + (f"  p. {pages[0]}" if pages else ""))
        out.append(f"      {h.get('snippet', '')}")
    for skipped in data.get("books_skipped") or []:
        out.append(f"  not searched: {skipped['book_id']} ({skipped['reason']}): "
                   f"{skipped['message']}")
    return out


def _run_batch(service: Any, args: argparse.Namespace) -> Envelope:
    """``add`` or ``sync``: the sources from the arguments (or remembered), then the batch."""
    from ..library.batch import DEFAULT_MAX_BYTES, run_add
    from ..library.sources import LibraryStore, SourceSpec

    if args.command == "sync":
        specs = LibraryStore(service.registry.data_dir).sources()
        if not specs:
            raise CoreError(Code.NOT_FOUND, "Nothing to sync: book-agent add has not been "
                            "given a source in this data folder yet.",
                            remediation="Run book-agent add FOLDER (or --zotero, --calibre) "
                            "first.")
    else:
        specs = [SourceSpec("folder", os.path.abspath(p), recursive=args.recursive)
                 for p in args.paths]
        if args.zotero is not None:
            specs.append(SourceSpec(
                "zotero", os.path.abspath(args.zotero) if args.zotero else "",
                collection=args.collection, tag=args.tag,
                attachments_base=os.path.abspath(args.attachments_base)
                if args.attachments_base else None))
        elif args.collection or args.tag:
            raise CoreError(Code.INVALID_ARGUMENT, "--collection and --tag go with --zotero.",
                            remediation="e.g. book-agent add --zotero --collection Thesis")
        if args.calibre is not None:
            formats = tuple(f.strip().lower() for f in (args.formats or "").split(",")
                            if f.strip())
            specs.append(SourceSpec("calibre", os.path.abspath(args.calibre), formats=formats))
        if not specs:
            raise CoreError(Code.INVALID_ARGUMENT, "add needs a file or folder, --zotero or "
                            "--calibre.", remediation="e.g. book-agent add ~/Papers "
                            "--recursive")
    max_bytes = DEFAULT_MAX_BYTES if args.max_size is None else int(args.max_size * 2**20)
    if max_bytes < 1:
        raise CoreError(Code.INVALID_ARGUMENT, "--max-size must be positive.",
                        remediation="e.g. --max-size 500 (megabytes)")
    ocr = {"mode": args.ocr, "language": args.ocr_lang} if _ocr_options(args) else None
    return run_add(service, specs, jobs=args.jobs, dry_run=args.dry_run, ocr=ocr,
                   allow_image_only=args.allow_image_only, prune=args.prune,
                   max_bytes=max_bytes, progress=None if args.dry_run else _BatchProgress(),
                   operation="book_sync" if args.command == "sync" else "book_add")


class _BatchProgress:
    """Files done / total, the current file and the ETA on stderr: one bar redrawn on a
    terminal, one line per finished file otherwise."""

    def __init__(self) -> None:
        self.tty = sys.stderr.isatty()
        self.drawn = False

    def __call__(self, done: int, total: int, current: str, status: str,
                 eta: float | None) -> None:
        left = "" if eta is None else f" · ETA {_duration(eta)}"
        name = terminal_safe(current)
        if self.tty:
            width = 24
            filled = int(width * done / total) if total else width
            line = f"[{'#' * filled}{'.' * (width - filled)}] {done}/{total} {status} {name}"
            columns = 100
            with contextlib.suppress(OSError):
                columns = os.get_terminal_size(sys.stderr.fileno()).columns
            line = (line[: max(20, columns - len(left) - 1)] + left).ljust(columns - 1)
            sys.stderr.write("\r" + line)
            if done >= total and status != "building":
                sys.stderr.write("\n")
            sys.stderr.flush()
            return
        if status != "building":
            print(f"book-agent: [{done}/{total}] {status} {name}{left}".rstrip(),
                  file=sys.stderr, flush=True)


def _duration(seconds: float) -> str:
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def _exit_status(env: Envelope) -> int:
    """0; for ``add``/``sync``: 3 when a file was refused, 130 when interrupted."""
    if env.operation in ("book_add", "book_sync"):
        data = env.data or {}
        if data.get("interrupted"):
            return 130
        if (data.get("counts") or {}).get("refused"):
            return 3
    return 0


def render_text(env: Envelope) -> str:
    """A readable rendering of an envelope for a terminal (never a JSON dump of a result)."""
    data = env.data or {}
    op = env.operation
    out: list[str] = []
    if op == "book_search" and data.get("scope") == "library":
        out += _library_text(env, data)
    elif op == "book_search":
        out.append(f"{len(env.items)} of {data.get('total_matches')} matching records "
                   f"(modes: {', '.join(f'{k}={v}' for k, v in data.get('modes', {}).items())})")
        if data.get("index_left_out"):
            out.append(f"  ({_count(data['index_left_out'], 'back-of-book index record')} "
                       "matching too left out: --include-index to rank them)")
        if data.get("contents_left_out"):
            out.append(f"  ({_count(data['contents_left_out'], 'contents or navigation record')}"
                       " matching too left out: they list titles, not the chapters)")
        for h in env.items:
            where = " > ".join(h.get("heading_path", []))
            # The rank, not a bare BM25 score: in a one-record book every score is 0.000.
            score = f"  score {h['score']:.3f}" if round(h.get("score") or 0.0, 3) else ""
            out.append(f"  {h.get('rank') or '-'}. {h['record_id']}{score}  {where}")
            out.append(f"      {h.get('snippet', '')}")
            if h.get("folds"):
                out.append(f"      matched after folding: {', '.join(h['folds'])}")
            if h.get("text_source"):
                out.append(f"      text read by OCR ({h['text_source']}): machine-read, "
                           "check the page image")
    elif op == "book_locate_source":
        out += _locate_text(env, data)
    elif op == "book_read_markdown" and data.get("status") == "ambiguous":
        out.append(f"{len(env.items)} headings match {data['heading']!r}:")
        for c in env.items:
            out.append(f"  line {c['line']}: {'#' * c['level']} {c['heading']}")
    elif op in ("book_read_source", "book_get_skill", "book_read_markdown") and "text" in data:
        out.append(data["text"])
        if data.get("truncated") and op == "book_read_markdown":
            more = f" --offset {data['next_offset']}" if data.get("next_offset") else ""
            out.append(f"[truncated: continue with --start-line {data['next_line']}{more}]")
        elif data.get("truncated"):
            out.append(f"[truncated: continue with --offset {data['next_offset']}]")
    elif op == "book_read_entry":
        out += _entry_text(env, data)
    elif op in ("book_list", "book_status") and env.items is not None and data == {}:
        for b in env.items:
            if b.get("state") == "damaged":
                damage = b.get("damaged") or {}
                out.append(f"{b['book_id']}  v{b.get('version') or '?'}  DAMAGED: "
                           f"{damage.get('file')} {damage.get('problem')}")
                continue
            out.append(f"{b['book_id']}  v{b['version']}  {b['format']}  {b['units']} units  "
                       f"{b['title']}")
            origin = b.get("origin") or {}
            if origin.get("kind") not in (None, "init"):
                out.append(f"    from {origin['kind']}: {origin.get('path') or origin.get('key')}")
        if not env.items:
            out.append("no books registered")
    elif op == "book_status" and "counts" not in data and data.get("integrity"):
        out.append(f"book {data['book_id']}, version {data.get('version') or '?'}: DAMAGED")
        out += _integrity_text(data["integrity"])
    elif op in ("book_init", "book_status"):
        out += _package_text(op, data)
    elif op == "book_demo":
        out += _demo_text(env, data)
    elif op in ("book_render_page", "book_read_epub_image") and "out" in data:
        what = (f"page index {data['page_index']}" + _label(data.get("page_label"))
                + f", {data['width']}×{data['height']} px at {data['dpi']:g} dpi"
                if op == "book_render_page" else
                f"{data['path']} ({data['mime_type']}, {data['href_form']} href)")
        out.append(f"wrote {data['out']}: {what}, {data['bytes']:,} bytes")
    elif op in ("book_add", "book_sync"):
        out += _batch_text(env, data)
    elif op == "book_cite":
        out.append(data["text"].rstrip("\n"))
    elif op == "book_remove":
        out.append(f"removed {data['book_id']} (versions {data['versions_removed']})")
    elif op == "book_skill_export":
        out.append(f"exported the Book Skill of {data['book_id']} to {data['path']}")
    else:
        out.append(json.dumps(data, ensure_ascii=False, indent=2))
    out += _diagnostics_text(env)
    return "\n".join(out)


def _label(label: Any, *, end: Any = None, inferred: Any = False) -> str:
    """`` (p. 5)``, `` (pp. 5–6)`` or nothing: a printed label is shown only when there is one;
    one inferred from the printed folios (not the PDF's page labels) says so."""
    if label in (None, ""):
        return ""
    note = ", inferred from the printed folios" if inferred else ""
    if end not in (None, "", label):
        return f" (pp. {label}–{end}{note})"
    return f" (p. {label}{note})"


def _cut(text: str, limit: int, *, keep: str = "start", cut: bool = False) -> str:
    """``text`` within ``limit`` characters, with "…" where it was cut (or ``cut`` says so)."""
    text = " ".join(text.split())
    if len(text) > limit:
        return "…" + text[-limit:] if keep == "end" else text[:limit] + "…"
    if cut:
        return "…" + text if keep == "end" else text + "…"
    return text


def _where(loc: dict[str, Any]) -> str:
    if loc["kind"] == "pdf_page":
        first, last = loc.get("page_index"), loc.get("page_end_index")
        pages = (f"page index {first}" if last in (None, first)
                 else f"page indexes {first}–{last}")
        return pages + _label(loc.get("page_label"), end=loc.get("page_end_label"),
                              inferred=loc.get("page_label_inferred"))
    if loc["kind"] == "epub_chapter":
        return (loc.get("href") or f"chapter {loc['unit_index']}") + (
            f"#{loc['fragment']}" if loc.get("fragment") else "") + _label(
            loc.get("page_label"), end=loc.get("page_end_label"))
    return f"lines {loc.get('line_start')}-{loc.get('line_end')}"


def _locate_text(env: Envelope, data: dict[str, Any]) -> list[str]:
    against = f" against {data['verified_against']}" if data.get("verified_against") else ""
    out = [f"{data['status']}{against}: {data['match_count']} match(es)"]
    if data.get("folds"):
        out.append("  matched after folding: " + ", ".join(map(str, data["folds"])))
    for c in env.items:
        loc = c["locator"]
        quote = _cut(loc["quote"], 80, cut=bool(loc.get("quote_truncated")))
        before = _cut(c.get("prefix", ""), 40, keep="end")
        after = _cut(c.get("suffix", ""), 40)
        out.append(f"  {_where(loc)}: {before} «{quote}» {after}".rstrip())
        stepped = loc.get("stepped_over") or []
        if stepped:
            out.append("  stepped over: " + ", ".join(
                f"{s.get('kind', 'furniture').replace('_', ' ')} «{_cut(s.get('text', ''), 30)}»"
                for s in stepped[:8]) + (f" and {len(stepped) - 8} more" if len(stepped) > 8
                                         else ""))
        out.append("  locator: " + json.dumps(loc, ensure_ascii=False))
    return out


def _entry_text(env: Envelope, data: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for item in env.items:
        mark = ">>" if item["is_target"] else "  "
        start = f"  from character {item['offset']:,}" if item.get("offset") else ""
        out.append(f"{mark} {item['record_id']}  {' > '.join(item['heading_path'])}{start}")
        out.append(item["text"])
        if item.get("truncated"):
            out.append(f"[{item['record_id']} cut at character {item['next_offset']:,} of "
                       f"{item['total_chars']:,}]")
    left_out = [u["record_id"] for u in data.get("unread", ())
                if u["offset"] == 0 and u["record_id"] not in {i["record_id"] for i in env.items}]
    if left_out:
        out.append(f"[not shown for want of room: {', '.join(left_out)}]")
    nxt = data.get("next")
    if nxt:
        more = f" --neighbors {nxt['neighbors']}" if nxt.get("neighbors") else ""
        out.append(f"[truncated: continue with book-agent read-entry {data['book_id']} "
                   f"{nxt['record_id']} --offset {nxt['offset']}{more}]")
    return out


def _package_text(op: str, data: dict[str, Any]) -> list[str]:
    caps = data.get("capabilities") or {}
    counts = data.get("counts") or {}
    fmt = data.get("format") or (data.get("source") or {}).get("format") or "?"
    units = data.get("units", counts.get("units"))
    records = data.get("records", counts.get("records"))
    word = {"pdf": "page", "epub": "chapter"}.get(fmt, "section")
    verb = "registered" if op == "book_init" else "book"
    by = f" — {', '.join(data['authors'])}" if data.get("authors") else ""
    out = [f"{verb} {data['book_id']}, version {data['version']}: {data.get('title')}{by}",
           f"  {fmt}: {_count(units, word)}, {_count(records, 'record')}"
           + (f", {caps['epub_images']} images" if caps.get("epub_images") else "")
           + (f"; search index {caps['lexical_engine']}" if caps.get("lexical_engine") else "")
           + (f"; built in {data['seconds']:g} s" if "seconds" in data else ""),
           f"  package: {data.get('package')}"]
    blind = caps.get("no_text_layer_units") or []
    if blind:
        out.append(f"  no text layer ({_count(len(blind), word)}, render to read): "
                   + _indexes(blind))
    if caps.get("vertical_units"):
        out.append("  vertical writing: " + _indexes(caps["vertical_units"]))
    if caps.get("markdown_fallback_units"):
        out.append("  book.md shows raw text for: " + _indexes(caps["markdown_fallback_units"]))
    if op == "book_status" and data.get("search_modes"):
        modes = data["search_modes"]
        out.append("  search modes: " + ", ".join(f"{k} {v}" for k, v in modes.items()))
    if op == "book_status" and data.get("citation"):
        out.append(f"  reference: {data['citation']}")
        origin = data.get("origin") or {}
        if origin.get("kind") not in (None, "init"):
            out.append(f"  from {origin['kind']}: {origin.get('path') or origin.get('key')}")
    if op == "book_status" and data.get("integrity"):
        out += _integrity_text(data["integrity"])
    if op == "book_init":
        out.append(f"next: book-agent search {data['book_id']} \"WORDS\"  ·  "
                   f"book-agent skill {data['book_id']}")
    elif data.get("warnings"):
        out.append(f"warnings at init ({len(data['warnings'])}):")
        out += [f"  - {w}" for w in data["warnings"]]
    return out


_SHOWN_PER_STATUS = 50


def _batch_text(env: Envelope, data: dict[str, Any]) -> list[str]:
    """The summary of an add or sync: counts, then what happened to which file."""
    counts = data.get("counts") or {}
    shown = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in counts.items()
                      if v or k in ("added", "updated", "unchanged", "refused"))
    what = "dry run: " if data.get("dry_run") else ""
    out = [f"{what}{shown} ({len(env.items)} files, {data.get('seconds')} s, "
           f"{data.get('jobs')} job(s))"]
    for src in data.get("sources") or []:
        extra = ""
        if src.get("kind") == "zotero":
            extra = f": {src.get('items')} items, {src.get('book_attachments')} book files"
        elif src.get("kind") == "calibre":
            extra = f": {src.get('books')} books"
        elif src.get("kind") == "folder":
            extra = f": {src.get('files')} files"
        out.append(f"  source {src['kind']} {src.get('path') or ''}{extra}")
    by_status: dict[str, list[dict[str, Any]]] = {}
    for item in env.items:
        by_status.setdefault(item["status"], []).append(item)
    for status in ("added", "updated", "would_add", "would_update", "moved", "duplicate",
                   "not_built", "refused"):
        group = by_status.get(status) or []
        for item in group[:_SHOWN_PER_STATUS]:
            book = item.get("book_id") or "-"
            version = f" v{item['version']}" if item.get("version") else ""
            why = item.get("reason") or item.get("why") or ""
            why = f" — {why}" if why and status not in ("added", "would_add") else ""
            out.append(f"  {status.replace('_', ' ')}  {book}{version}  ← {item['path']}{why}")
        if len(group) > _SHOWN_PER_STATUS:
            out.append(f"  … and {len(group) - _SHOWN_PER_STATUS} more {status}")
    skipped = data.get("skipped_by_reason") or {}
    if skipped:
        out.append("skipped (reported, not fatal): " + ", ".join(
            f"{n} {reason}" for reason, n in sorted(skipped.items())))
        for s in (data.get("skipped") or [])[:20]:
            title = f" “{s['title']}”" if s.get("title") else ""
            out.append(f"  {s['source']} {s['where']}{title}: {s['reason']}")
    removed = data.get("removed") or []
    if removed:
        verb = "pruned" if data.get("pruned") else "kept (--prune removes them)"
        out.append(f"no longer in their source, {verb}:")
        out += [f"  {r['book_id']} ← {r.get('origin')}" for r in removed[:50]]
    if data.get("interrupted"):
        out.append("interrupted: run the same command again to continue")
    return out


def _integrity_text(integrity: dict[str, Any]) -> list[str]:
    if integrity.get("state") != "damaged":
        return [f"  files: intact ({integrity.get('checked')})"]
    out = ["  DAMAGED files:"]
    out += [f"    {d['file']}: {d['problem']}" for d in integrity.get("damaged", ())]
    return out


def _count(n: Any, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _indexes(values: Sequence[int]) -> str:
    shown = ", ".join(str(v) for v in values[:12])
    return shown + (f" and {len(values) - 12} more" if len(values) > 12 else "")


def _demo_text(env: Envelope, data: dict[str, Any]) -> list[str]:
    passed = sum(1 for c in env.items if c.get("ok"))
    out = [f"demo {'passed' if data.get('ok') else 'FAILED'}: {passed} of {len(env.items)} "
           f"checks", f"the demo's files, replaced on every run, are in {data['folder']}:"]
    out += [f"  {name}: {path}" for name, path in (data.get("files") or {}).items()]
    return out


def _diagnostics_text(env: Envelope) -> list[str]:
    """The diagnostics as a readable section after the result."""
    if not env.diagnostics:
        return []
    words = {"warning": "warnings", "info": "notes", "error": "errors"}
    out: list[str] = []
    for level in ("error", "warning", "info"):
        found = [d for d in env.diagnostics if str(d.level) == level]
        if found:
            out.append(f"{words[level]} ({len(found)}):")
            out += [f"  - {d.message}" + (f" ({d.hint})" if d.hint else "") for d in found]
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``book-agent`` console script.

    Never lets a traceback reach the user's screen: every failure is one line on stderr (and
    the failure envelope on stdout under ``--json``); an unexpected one is logged with its
    traceback at debug level only.
    """
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(encoding="utf-8", errors="backslashreplace")
    os.environ.setdefault("PYMUPDF_MESSAGE", "fd:2")
    os.environ.setdefault("PYMUPDF_LOG", "fd:2")
    words = list(sys.argv[1:] if argv is None else argv)
    from ..mcp_pool import RENDER_CHILD_FLAG
    from .mcp import mcp_main, split_mcp_argv

    if words == [RENDER_CHILD_FLAG]:  # the frozen executable as the MCP server's renderer
        from ..mcp_pool import child_main

        return child_main()
    debug = "--debug" in words or os.environ.get(ENV_DEBUG, "").strip() in ("1", "true", "yes")
    _configure_logging(debug)
    served = split_mcp_argv(words)
    if served is not None:  # the MCP server: fd 1 is reserved before anything heavy loads
        return mcp_main(*served)
    from .install import split_install_argv

    if split_install_argv(words) is not None:
        # The book-agent program (readingroom.programs) hands install-host to the suite before
        # this entry point runs; `python -m readingroom.book` does not go through it.
        print("install-host: run it as the book-agent program (`book-agent install-host ...`, "
              "or `python -m readingroom.programs book-agent install-host ...`)",
              file=sys.stderr)
        return 2
    want_json, command = "--json" in words, "book-agent"
    try:
        try:
            args = build_parser().parse_args(words)
        except _UsageError as usage:
            return _fail(CoreError(Code.INVALID_ARGUMENT, usage.message,
                                   remediation=f"{usage.usage} (book-agent --help says more)"),
                         command, want_json, status=2)
        want_json, command = args.json, args.command
        env = _run(args)
        out = json_safe(env.to_json()) if args.json else terminal_safe(render_text(env))
    except CoreError as err:
        return _fail(err, command, want_json)
    except KeyboardInterrupt:
        print("book-agent: interrupted; nothing was registered by an unfinished init.",
              file=sys.stderr)
        return 130
    except BrokenPipeError:
        return _quiet_stdout()
    except Exception as exc:  # the guard: whatever was not foreseen is still one line
        log.debug("unexpected failure in %s", command, exc_info=True)
        return _fail(_unexpected(exc, debug), command, want_json)
    try:
        print(out)
        sys.stdout.flush()
    except BrokenPipeError:  # e.g. piped into `head`: not an error of ours
        return _quiet_stdout()
    return _exit_status(env)


def _configure_logging(debug: bool) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("book-agent: %(levelname)s %(name)s: %(message)s"))
    log.handlers[:] = [handler]
    log.propagate = False
    log.setLevel(logging.DEBUG if debug else logging.WARNING)


def _unexpected(exc: Exception, debug: bool) -> CoreError:
    """The typed error for an exception no code path foresaw."""
    from ..paths import unusable

    see = "" if debug else " (run again with --debug for the traceback)"
    if isinstance(exc, OSError) and exc.filename is not None:
        return unusable(exc.filename, "The path", (exc.strerror or type(exc).__name__) + see)
    detail = " ".join(str(exc).split())
    detail = detail if len(detail) <= 160 else detail[:160] + "…"
    return CoreError(
        Code.INTERNAL_ERROR,
        f"book-agent failed unexpectedly ({type(exc).__name__}"
        + (f": {detail}" if detail else "") + f"){see}.",
        details={"exception": type(exc).__name__},
        remediation="Report this as a book-agent bug, with the --debug output.",
    )


def _fail(err: CoreError, command: str, want_json: bool, *, status: int = 1) -> int:
    """The one-line error on stderr, and the failure envelope on stdout under --json."""
    try:
        if want_json:
            print(json_safe(Envelope.failure("book-agent", command, err).to_json()))
            sys.stdout.flush()
    except BrokenPipeError:
        _quiet_stdout()
    message = " ".join(err.message.split())
    remedy = " ".join(err.remediation.split())
    print(terminal_safe(f"book-agent: {err.code}: {message}" + (f" — {remedy}" if remedy
                                                                else "")), file=sys.stderr)
    return status


def _quiet_stdout() -> int:
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


if __name__ == "__main__":
    sys.exit(main())
