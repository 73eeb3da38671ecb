"""``readingroom``: the suite's admin command line (not an MCP server; stdout is for people)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from . import __version__

__all__ = ["build_parser", "main"]


def _cmd_schema(args: argparse.Namespace) -> int:
    import json

    from .core.envelope import response_schema

    text = json.dumps(response_schema(), ensure_ascii=False, indent=2) + "\n"
    if args.out:
        from .core.files import write_atomically

        write_atomically(args.out, text)
    else:
        sys.stdout.write(text)
    return 0


def _cmd_version(_args: argparse.Namespace) -> int:
    print(f"readingroom {__version__}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``readingroom``."""
    from .admin import receipts, secrets
    from .hosts import cli as hosts_cli
    from .setup import command as setup_command
    from .setup import self_tests

    parser = argparse.ArgumentParser(
        prog="readingroom",
        description="Administer the readingroom suite of MCP servers.",
    )
    parser.add_argument("--version", action="version", version=f"readingroom {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    self_tests.register(sub)
    setup_command.register(sub)
    hosts_cli.register(sub)
    secrets.register(sub)
    receipts.register(sub)

    sch = sub.add_parser("schema", help="print the response envelope's JSON Schema")
    sch.add_argument("--out", help="write to this file (docs/response-schema.json)")
    sch.set_defaults(func=_cmd_schema)

    ver = sub.add_parser("version", help="print the version")
    ver.set_defaults(func=_cmd_version)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``readingroom`` console script."""
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(encoding="utf-8", errors="backslashreplace")
    args = build_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
