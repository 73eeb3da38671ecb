"""book-agent: a user's own book as a registered, versioned, verifiable book package.

``SERVER`` is the whole of what the rest of the suite knows about it: the ``book-agent``
command line, whose ``mcp`` command is the catalogue's MCP stdio server.
"""

from __future__ import annotations

from ..core.declaration import DATA_DIR, Instances, Library, ServerInfo, Setting

__all__ = ["ENV_DATA_DIR", "SERVER", "library_runs"]

ENV_DATA_DIR = "BOOK_AGENT_DATA_DIR"
"""The data folder when ``--data-dir`` is not given (``commands.data_folder`` reads it)."""

SERVER = ServerInfo(
    name="book-agent",
    entry_point="readingroom.book.commands.cli:main",
    title="Your own books (PDF, EPUB, Markdown) as verifiable book packages",
    description="Search, read, cite with verified source locators, and look at pages and "
    "images of the books you registered with `book-agent init`; read-only.",
    settings=(
        Setting(ENV_DATA_DIR, "book-agent's data folder when --data-dir is not given "
                "(default: the suite's data folder + book-agent)"),
    ),
    deadline_s=90.0,
    # Host entries run `book-agent --data-dir <suite data>/book-agent mcp`: the folder where
    # `book-agent init` registers books by default, named explicitly so that a host starting
    # the server with another environment (Claude Desktop's is bare) still finds them.
    data_args=("--data-dir", f"{DATA_DIR}/book-agent"),
    args=("mcp",),
    self_test="readingroom.book.selftest:run_self_test",
    # `readingroom setup --books/--zotero`: book-agent add, whose exit status 3 is "finished,
    # some files refused" (the CLI's _exit_status).
    library=Library(runs="readingroom.book:library_runs", refused_exit=3),
    # `book-agent install-host`: the suite registers the entry this function describes.
    instances=Instances(command="install-host",
                        describe="readingroom.book.commands.install:describe_install"),
)


def library_runs(books: str | None, zotero: str | None) -> list[list[str]]:
    """The ``book-agent`` arguments that add folder ``books`` (recursively) and the Zotero
    library in ``zotero`` (its data folder; ``""``: the default ``~/Zotero``) to the library."""
    runs = []
    if books is not None:
        runs.append(["add", books, "--recursive"])
    if zotero is not None:
        runs.append(["add", "--zotero", *([zotero] if zotero else [])])
    return runs
