"""Fixtures of the literature server tests: the loopback fake and a service pointed at it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from readingroom.core.clock import FakeClock
from readingroom.literature.fake import FakeProviders
from readingroom.literature.history import History
from readingroom.literature.service import LiteratureService


@pytest.fixture
def fake() -> Iterator[FakeProviders]:
    """The seven providers on loopback, answering at once."""
    with FakeProviders(slow_seconds=5.0) as f:
        yield f


@pytest.fixture
def make_service(fake: FakeProviders, tmp_path: Path):
    """Build a service against ``fake`` on a FakeClock (pacing floors cost no real time)."""

    def make(**kw) -> LiteratureService:
        env = {**fake.env(), "MCP_RECEIPT_LOG": str(tmp_path / "receipts.jsonl"),
               **kw.pop("env", {})}
        kw.setdefault("secret_lookup", lambda name: None)
        kw.setdefault("history", History(tmp_path / "state"))
        return LiteratureService(env=env, clock=FakeClock(), **kw)

    return make
