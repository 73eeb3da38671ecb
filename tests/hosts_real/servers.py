"""What the real hosts do with each server of the catalogue: one :class:`HostCase` per server.

The layer is parametrised over :data:`readingroom.catalog.SERVERS`. Each server reuses its
contract line (``tests/contract/catalog.py``: the environment that points it at its loopback
fakes, and its sample call) and adds here one valid call per tool, one call with invalid
arguments and, when it has a gate, the value that opens it. A server without a line fails its
own tests, saying where to add it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from readingroom.catalog import SERVERS
from readingroom.core.declaration import ServerInfo
from readingroom.heritage.selftest import CALLS as HERITAGE_CALLS

from ..contract.catalog import CASES, Call, ContractCase

__all__ = ["HOST_CASES", "HostCase", "catalogue", "host_case"]


@dataclass(frozen=True)
class HostCase:
    """How the real hosts exercise one server."""

    contract: ContractCase
    tool_calls: Mapping[str, dict[str, Any]]
    """One valid call per tool, by tool name; it must cover exactly the tools listed."""
    invalid_call: Call
    """A call whose arguments the input schema rejects."""
    gate_value: Callable[[], str] | None = None
    """The argument of the server's gate option that opens it (None: no gate)."""
    unchecked_tools: Mapping[str, str] = field(default_factory=dict)
    """Tools no static call can exercise, each with the reason (their contract tests cover
    them); with :attr:`tool_calls` they must cover exactly the tools listed."""
    prepare_data: Callable[[Path], None] | None = None
    """Fills the world's suite data folder before any host starts the server (book-agent: its
    entry's ``--data-dir`` points there, so the book it serves must be in it)."""
    host_call: Call | None = None
    """The call made through a host that starts the server from its written entry (Codex);
    default: the contract's sample call. Needed when the entry's arguments (a ``--data-dir``
    into the world's empty data folder) override the fake's environment."""

    @property
    def call_through_host(self) -> Call:
        """:attr:`host_call`, or the contract's sample call."""
        return self.host_call or self.contract.sample_call

    @property
    def server(self) -> ServerInfo:
        """The server's declaration."""
        return self.contract.server

    @property
    def name(self) -> str:
        """The server's name."""
        return self.server.name


def _tiny_book(data_dir: Path) -> None:
    """The contract's tiny PDF book, registered where book-agent's host entry looks."""
    from readingroom.book.service import BookService
    from tests.book.make_books import make_pdf

    source = make_pdf(data_dir / "tiny.pdf", ["Whales swim in the cold sea.", "Ships sail."])
    BookService(data_dir / "book-agent").init(source, book_id="tiny")


def _line(name: str, **how: Any) -> HostCase | None:
    # A server joins the contract and this table in separate commits: a line whose contract
    # case has not landed yet waits here, and host_case() names what is missing meanwhile.
    return HostCase(CASES[name], **how) if name in CASES else None


HOST_CASES: dict[str, HostCase] = {c.name: c for c in (
    _line(
        "ndl-mcp",
        tool_calls={
            "ndl_search_books": {"title": "吾輩は猫である", "count": 2},
            "ndl_search_national_bibliography": {"title": "吾輩は猫である"},
            "ndl_search_articles": {"title": "漱石"},
            "ndl_search_digital_open": {"title": "吾輩は猫である"},
            "ndl_search_all": {"title": "吾輩は猫である", "providers": ["iss-ndl-opac"]},
            "ndl_get_record": {"jpno": "20000001"},
        },
        invalid_call=("ndl_search_books", {"count": "many"}),
        # The NDL notification date: today is always valid (a future date is refused).
        gate_value=lambda: date.today().isoformat(),
    ),
    _line(
        "literature-search-mcp",
        tool_calls={
            "literature_search": {"query": "readingroom", "limit": 5},
            "literature_sources": {},
            "literature_get_fulltext": {"pmcid": "PMC9000001"},
        },
        invalid_call=("literature_search", {"query": "readingroom", "limit": "many"}),
    ),
    _line(
        "book-agent",
        tool_calls={
            "book_list": {},
            "book_status": {"book_id": "tiny"},
            "book_get_skill": {"book_id": "tiny"},
            "book_search": {"book_id": "tiny", "query": "whales"},
            "book_read_entry": {"book_id": "tiny", "record_id": "r0001"},
            "book_read_markdown": {"book_id": "tiny", "start_line": 1, "end_line": 20},
            "book_locate_source": {"book_id": "tiny", "text": "Whales swim in the cold sea."},
            "book_render_page": {"book_id": "tiny", "page_index": 0},
        },
        unchecked_tools={
            "book_read_source": "takes a locator that book_locate_source returned",
            "book_read_epub_image": "needs an EPUB book; the contract's library holds a PDF",
        },
        invalid_call=("book_search", {"book_id": "tiny", "query": ""}),
        prepare_data=_tiny_book,
        host_call=("book_render_page", {"book_id": "tiny", "page_index": 0, "dpi": 36}),
    ),
    _line(
        "swiss-cultural-heritage-mcp",
        tool_calls={name: {**args, "response_format": "json"}
                    for name, args in HERITAGE_CALLS.items()},
        invalid_call=("heritage_search_artists", {"query": "Probe", "limit": "many"}),
    ),
    _line(
        "cinii-mcp",
        tool_calls={
            "cinii_search_articles": {"q": "漱石", "count": 2},
            "cinii_search_books": {"title": "読書室"},
            "cinii_search_dissertations": {"q": "読書室"},
            "cinii_search_projects": {"q": "読書室"},
            "cinii_search_all": {"q": "漱石", "from": "1990"},
            "cinii_get_record": {"crid": "9990000000000000001"},
        },
        invalid_call=("cinii_search_articles", {"q": "漱石", "count": "many"}),
    ),
    _line(
        "jstage-mcp",
        tool_calls={
            "jstage_search_articles": {"article": "漱石", "count": 2},
            "jstage_get_article_by_doi": {"doi": "10.99999/rrkiyo.12.1_21"},
            "jstage_list_issues": {"cdjournal": "rrkiyo"},
        },
        invalid_call=("jstage_search_articles", {"article": "漱石", "count": "many"}),
    ),
) if c is not None}
"""One line per server of the catalogue."""


def host_case(server: ServerInfo) -> HostCase:
    """The host case of ``server``; a server without one fails, saying where to add it."""
    try:
        return HOST_CASES[server.name]
    except KeyError:
        raise LookupError(
            f"{server.name} has no HostCase: add one line for it to HOST_CASES in "
            f"tests/hosts_real/servers.py (and its ContractCase in tests/contract/catalog.py)"
        ) from None


def catalogue() -> list[ServerInfo]:
    """The servers the layer is parametrised over: the real catalogue."""
    return list(SERVERS.values())
