"""The docs tables generated from the declarations, and the check that the docs are current.

``python -m readingroom.admin.docs --write`` rewrites every generated block; the tests fail
when a block differs from what the catalogue says. A block sits between
``<!-- generated:NAME -->`` and ``<!-- /generated:NAME -->``.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

from ..catalog import SERVERS
from ..core.declaration import COMMON_SETTINGS, ServerInfo, Setting
from ..core.files import write_atomically
from ..core.settings import ENV_TOOL_DEADLINE

__all__ = [
    "BLOCKS",
    "DOCUMENTS",
    "main",
    "render_block",
    "server_page",
    "servers_table",
    "settings_table",
    "update_document",
]


def _row(setting: Setting, readers: str, default: str) -> str:
    shown = f"`{default}`" if default and not default.isdigit() else (default or "unset")
    return f"| `{setting.name}` | {readers} | {setting.help} | {shown} |"


def _deadline_defaults(servers: Sequence[ServerInfo]) -> str:
    """The declared deadlines: the most common one, then each server that declares another
    (``90; literature-search-mcp: 50``)."""
    counts = Counter(f"{s.deadline_s:g}" for s in servers)
    if not counts:
        return ""
    usual = max(sorted(counts), key=lambda d: counts[d])
    others = [f"{s.name}: {s.deadline_s:g}" for s in servers if f"{s.deadline_s:g}" != usual]
    return "; ".join([usual, *others])


def settings_table(servers: Sequence[ServerInfo] | None = None) -> str:
    """The environment-variable table of the given servers (default: the whole catalogue)."""
    chosen = list(SERVERS.values()) if servers is None else list(servers)
    lines = ["| environment variable | read by | meaning | default |", "|---|---|---|---|"]
    for setting in COMMON_SETTINGS:
        default = _deadline_defaults(chosen) if setting.name == ENV_TOOL_DEADLINE \
            else setting.default
        lines.append(_row(setting, "every server", default))
    for info in chosen:
        lines += [_row(s, f"`{info.name}`", s.default) for s in info.settings]
    return "\n".join(lines)


def server_page(info: ServerInfo) -> str:
    """The server's documentation page, relative to the repository root."""
    return f"docs/{info.name}.md"


def servers_table(servers: Sequence[ServerInfo] | None = None) -> str:
    """The README's table of servers (default: the whole catalogue, in its order), each with
    its declared title and description and a link to its page."""
    chosen = list(SERVERS.values()) if servers is None else list(servers)
    lines = ["| server | what it gives the assistant | documentation |", "|---|---|---|"]
    for info in chosen:
        gate = (f" Registered with hosts once `readingroom setup {info.gate.option} "
                f"{info.gate.metavar}` is given." if info.gate is not None else "")
        page = server_page(info)
        lines.append(f"| `{info.name}` | **{info.title}.** {info.description}{gate} "
                     f"| [{page}]({page}) |")
    return "\n".join(lines)


BLOCKS: dict[str, Callable[[], str]] = {
    "servers": servers_table,
    "settings": settings_table,
}
"""Every generated block by name."""

DOCUMENTS = ("README.md",)
"""The documents, relative to the repository root, that hold generated blocks."""

_BLOCK = re.compile(r"(<!-- generated:(?P<name>[a-z-]+) -->\n)(?P<body>.*?)(<!-- /generated:"
                    r"(?P=name) -->)", re.DOTALL)


def render_block(name: str) -> str:
    """The current text of block ``name``."""
    return BLOCKS[name]()


def update_document(text: str) -> str:
    """``text`` with every generated block replaced by its current rendering."""
    def fresh(match: re.Match[str]) -> str:
        return match.group(1) + render_block(match.group("name")) + "\n" + match.group(4)

    return _BLOCK.sub(fresh, text)


def main(argv: Sequence[str] | None = None) -> int:
    """Check (default) or ``--write`` the generated blocks of :data:`DOCUMENTS`."""
    parser = argparse.ArgumentParser(prog="python -m readingroom.admin.docs")
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="repository root")
    parser.add_argument("--write", action="store_true", help="rewrite stale blocks")
    args = parser.parse_args(argv)
    stale = []
    for name in DOCUMENTS:
        path = args.root / name
        text = path.read_text(encoding="utf-8")
        current = update_document(text)
        if current != text:
            stale.append(name)
            if args.write:
                write_atomically(path, current)
    for name in stale:
        print(f"{name}: {'rewritten' if args.write else 'stale (run with --write)'}",
              file=sys.stderr)
    return 0 if args.write or not stale else 1


if __name__ == "__main__":
    sys.exit(main())
