"""The contract's catalogue: the servers it holds, and how to exercise each one.

The contract runs over the real catalogue (:data:`readingroom.catalog.SERVERS`) plus
:data:`TEST_SERVERS`, servers that exist only in the tests. Each of them needs one
:class:`ContractCase` line in :data:`CASES`: a valid call that succeeds, and the environment
that points its upstreams at loopback fakes. A new server adds its folder, its line in the
real catalogue, and one line here.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from readingroom.book import ENV_DATA_DIR
from readingroom.book import SERVER as BOOK
from readingroom.catalog import SERVERS
from readingroom.cinii import ENV_APPID
from readingroom.cinii import SERVER as CINII
from readingroom.cinii.fake import FakeCinii
from readingroom.core.declaration import ServerInfo
from readingroom.heritage import SERVER as HERITAGE
from readingroom.heritage.fake import FakeUpstreams
from readingroom.jstage import SERVER as JSTAGE
from readingroom.jstage.fake import FakeJstage
from readingroom.literature import SERVER as LITERATURE
from readingroom.literature.fake import FakeProviders
from readingroom.ndl import ENV_NDL_SRU_URL
from readingroom.ndl import SERVER as NDL
from readingroom.ndl.fake import FakeSru

from .toy_server import SERVER as TOY

__all__ = [
    "CASES",
    "CONTRACT_SERVERS",
    "HERE",
    "PENDING_SERVERS",
    "TEST_SERVERS",
    "Call",
    "ContractCase",
    "case_for",
    "cinii_upstream",
    "jstage_upstream",
    "ndl_upstream",
]

CONTRACT_APPID = "contract-test-appid-5e1d"
"""A made-up CiNii application id: the fake accepts any, and no answer may show it."""

HERE = Path(__file__).resolve().parent
"""``tests/contract``: the ``PYTHONPATH`` entry that makes the test servers importable."""

Call = tuple[str, dict[str, Any]]
"""A tool name and its arguments."""

Upstream = Callable[[ExitStack], Mapping[str, str]]
"""Starts the server's upstream fakes inside the stack; returns the variables that point the
server at them."""


def no_upstream(_stack: ExitStack) -> Mapping[str, str]:
    """For a server that calls nothing outside itself."""
    return {}


def book_library(stack: ExitStack) -> Mapping[str, str]:
    """A data folder holding one tiny generated PDF book (``tiny``), for book-agent."""
    import tempfile

    from readingroom.book.service import BookService
    from tests.book.make_books import make_pdf

    folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="contract-book-")))
    source = make_pdf(folder / "tiny.pdf", ["Whales swim in the cold sea.", "Ships sail."])
    BookService(folder / "data").init(source, book_id="tiny")
    return {ENV_DATA_DIR: str(folder / "data")}


def ndl_upstream(stack: ExitStack) -> Mapping[str, str]:
    """A loopback fake of NDL Search's SRU endpoint, for ndl-mcp."""
    # A __slow__ query takes 30 s here, long enough that only a real cancel frees the slot.
    fake = stack.enter_context(FakeSru(slow_seconds=30.0))
    return {ENV_NDL_SRU_URL: fake.url}


def literature_upstreams(stack: ExitStack) -> Mapping[str, str]:
    """One loopback fake of the seven literature providers; history in a temporary folder."""
    import tempfile

    # A __slow__ query takes 30 s at every provider: only a real cancel frees the slot.
    fake = stack.enter_context(FakeProviders(slow_seconds=30.0))
    state = stack.enter_context(tempfile.TemporaryDirectory(prefix="contract-literature-"))
    return {**fake.env(), "LITERATURE_SEARCH_STATE_DIR": state}


def heritage_upstreams(stack: ExitStack) -> Mapping[str, str]:
    """One loopback fake of CKAN, Helveticat SRU/OAI, Memobase and Dodis."""
    # A __slow__ query takes 30 s at every upstream: only a real cancel frees the slot.
    fake = stack.enter_context(FakeUpstreams(slow_seconds=30.0))
    return fake.env()


def cinii_upstream(stack: ExitStack) -> Mapping[str, str]:
    """A loopback fake of CiNii Research, and a made-up application id."""
    # A __slow__ query takes 30 s here, long enough that only a real cancel frees the slot.
    fake = stack.enter_context(FakeCinii(slow_seconds=30.0))
    return {**fake.env(), ENV_APPID: CONTRACT_APPID}


def jstage_upstream(stack: ExitStack) -> Mapping[str, str]:
    """A loopback fake of the J-STAGE WebAPI."""
    fake = stack.enter_context(FakeJstage(slow_seconds=30.0))
    return fake.env()


@dataclass(frozen=True)
class ContractCase:
    """How the contract exercises one server."""

    server: ServerInfo
    sample_call: Call
    """A valid call that succeeds against the fakes."""
    upstream: Upstream = no_upstream
    slow_call: Call | None = None
    """A call that runs for at least ten seconds once begun (core.mcpkit sends a progress
    notification when a call with a progress token leaves the admission queue); the cancel
    point needs it."""
    pythonpath: tuple[Path, ...] = field(default=())
    """Folders the server needs on ``PYTHONPATH`` (test servers live outside the package)."""

    @property
    def name(self) -> str:
        """The server's name."""
        return self.server.name

    def command(self) -> list[str]:
        """``python -m <module>`` and the declared arguments, as a host entry starts it."""
        return [*self.server.command(frozen=False), *self.server.args]

    def environment(self, stack: ExitStack, **extra: str) -> dict[str, str]:
        """The process environment: ours without the suite's settings, plus fakes and extra.

        Settings the developer may have set (deadline, concurrency, receipt log, upstream URLs)
        are dropped so every run sees the defaults.
        """
        env = dict(os.environ)
        for setting in self.server.all_settings:
            env.pop(setting.name, None)
        paths = [str(p) for p in self.pythonpath]
        if env.get("PYTHONPATH"):
            paths.append(env["PYTHONPATH"])
        if paths:
            env["PYTHONPATH"] = os.pathsep.join(paths)
        env.update(self.upstream(stack))
        env.update(extra)
        return env


TEST_SERVERS: dict[str, ServerInfo] = {s.name: s for s in (
    TOY,
)}
"""Servers that exist only in the tests, one line each."""

CASES: dict[str, ContractCase] = {c.name: c for c in (
    ContractCase(NDL, ("ndl_search_books", {"title": "吾輩は猫である"}), ndl_upstream,
                 slow_call=("ndl_search_books", {"title": "__slow__"})),
    ContractCase(LITERATURE, ("literature_search", {"query": "readingroom", "limit": 5}),
                 literature_upstreams, slow_call=("literature_search", {"query": "__slow__"})),
    # No slow_call: a book-agent call that has begun runs to its end in its worker thread
    # (Python cannot stop it), so with one slot the call after a cancel would wait behind it;
    # tests/stdio/test_book_stdio.py cancels a blocked read and releases it instead.
    ContractCase(BOOK, ("book_search", {"book_id": "tiny", "query": "whales"}), book_library),
    ContractCase(HERITAGE, ("heritage_search_artists", {"query": "Probe",
                                                         "response_format": "json"}),
                 heritage_upstreams, slow_call=("heritage_search_artists",
                                                {"query": "__slow__"})),
    ContractCase(CINII, ("cinii_search_articles", {"q": "漱石", "count": 5}), cinii_upstream,
                 slow_call=("cinii_search_articles", {"q": "__slow__"})),
    ContractCase(JSTAGE, ("jstage_search_articles", {"article": "漱石", "count": 5}),
                 jstage_upstream, slow_call=("jstage_search_articles", {"article": "__slow__"})),
    ContractCase(TOY, ("toy_echo", {"text": "hello"}), pythonpath=(HERE,),
                 slow_call=("toy_wait", {"seconds": 60, "label": "slow"})),
)}
"""One line per server of the real and the test catalogue."""

PENDING_SERVERS: dict[str, ServerInfo] = {s.name: s for s in (
) if s.name not in SERVERS}
"""Real servers held to the contract before their catalogue line lands (none now)."""

CONTRACT_SERVERS: tuple[ServerInfo, ...] = (*SERVERS.values(), *PENDING_SERVERS.values(),
                                            *TEST_SERVERS.values())
"""What the contract is parametrised over: the real catalogue, pending servers, test servers."""


def case_for(server: ServerInfo) -> ContractCase:
    """The contract case of ``server``; a server without one fails, saying where to add it."""
    try:
        return CASES[server.name]
    except KeyError:
        raise LookupError(
            f"{server.name} has no ContractCase: add one line for it to CASES in "
            f"tests/contract/catalog.py"
        ) from None
