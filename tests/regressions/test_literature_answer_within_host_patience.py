"""Issue 17 §1: an answer within the host's patience.

Before: one provider that accepted and never answered held ``literature_search`` for 85 s (the
tool deadline minus a margin), past the 60 s hosts commonly give a call; a ``Retry-After: 3600``
was cut to 30 s, retried early and ended as a timeout ``error`` after 85 s; ``Retry-After: 10``
made the whole search take 30 s. Now the fan-out has its own budgets (per provider, for
retries, overall), declared and shown by ``literature_sources``; a Retry-After that does not fit
what is left makes that source ``rate_limited`` at once, with the seconds asked.

The real 45 s figures are measured by ``bench/literature_budget.py`` (a real stdio server);
here the budgets are passed in small so the property costs a second.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path

import anyio
import pytest
from tests.literature import conftest as literature_fixtures

from readingroom.catalog import SERVERS
from readingroom.core.clock import SystemClock
from readingroom.core.errors import Code
from readingroom.core.platform import Machine
from readingroom.hosts import build_entries
from readingroom.hosts.codex import CodexHost
from readingroom.literature import SERVER
from readingroom.literature.budget import DEFAULT_BUDGETS, Budgets, fanout_deadline
from readingroom.literature.history import History
from readingroom.literature.models import PROVIDER_ORDER, SearchRequest
from readingroom.literature.service import LiteratureService

fake = literature_fixtures.fake
make_service = literature_fixtures.make_service

pytestmark = pytest.mark.anyio

HOST_PATIENCE_S = 60.0


def statuses(env) -> dict[str, str]:
    return {s.id: str(s.status) for s in env.sources}


def reason(env, provider: str):
    (found,) = [d for d in env.diagnostics if d.message.startswith(f"{provider}:")]
    return found


async def test_a_hung_provider_is_abandoned_at_its_budget_and_the_rest_kept(fake, tmp_path):
    # The real clock: a hang is real time (on a fake clock, every provider's pacing sleeps would
    # add up on the one shared fake time and spend each other's budgets).
    service = LiteratureService(env=fake.env(), clock=SystemClock(), secret_lookup=lambda n: None,
                                history=History(tmp_path),
                                budgets=Budgets(provider_s=3.0, retry_wait_s=0.2, fanout_s=4.0))
    fake.modes["arxiv"] = "hang"
    began = time.monotonic()
    with anyio.fail_after(20):
        env = await service.search(SearchRequest(query="readingroom"))
    took = time.monotonic() - began
    assert took < 6.0, f"answered after {took:.1f} s with a 3 s provider budget"
    got = statuses(env)
    assert got.pop("arxiv") == "error"
    assert set(got.values()) == {"ok"} and env.items
    note = reason(env, "arxiv")
    assert note.code == Code.DEADLINE_EXCEEDED and "timeout" in note.message


async def test_retry_after_beyond_the_budget_is_rate_limited_at_once(make_service, fake):
    fake.modes["semantic-scholar"] = "rate_limited"
    fake.retry_after["semantic-scholar"] = "3600"
    service = make_service()
    began = service.clock.monotonic()
    env = await service.search(SearchRequest(query="readingroom"))
    spent = service.clock.monotonic() - began
    assert statuses(env)["semantic-scholar"] == "rate_limited"
    assert len(fake.requests("semantic-scholar")) == 1  # never retried before it said so
    note = reason(env, "semantic-scholar")
    assert note.code == Code.RATE_LIMITED and "3600" in note.message
    assert spent < 5.0, f"the search waited {spent:.0f} s (fake clock) for a 3600 s Retry-After"


async def test_retry_after_10_does_not_hold_the_search_for_30_s(make_service, fake):
    fake.modes["semantic-scholar"] = "rate_limited"
    fake.retry_after["semantic-scholar"] = "10"
    service = make_service()
    began = service.clock.monotonic()
    env = await service.search(SearchRequest(query="readingroom"))
    spent = service.clock.monotonic() - began
    assert statuses(env)["semantic-scholar"] == "rate_limited"
    assert spent <= DEFAULT_BUDGETS.retry_wait_s + 1.0 < 30.0
    assert len(fake.requests("semantic-scholar")) <= 2
    assert "10" in reason(env, "semantic-scholar").message


async def test_the_budgets_are_shown_by_literature_sources(make_service):
    data = make_service().sources().data
    budgets = data["budgets"]
    assert budgets["provider_s"] == DEFAULT_BUDGETS.provider_s
    assert budgets["retry_wait_s"] == DEFAULT_BUDGETS.retry_wait_s
    assert budgets["fanout_s"] <= DEFAULT_BUDGETS.fanout_s
    assert budgets["tool_deadline_s"] == SERVER.deadline_s


def test_declared_numbers_sit_inside_the_hosts_patience_and_under_host_entries(tmp_path: Path):
    # The search's own bound, then the tool deadline, then the host entry's timeout.
    search_bound = min(DEFAULT_BUDGETS.fanout_s, fanout_deadline(SERVER.deadline_s))
    assert DEFAULT_BUDGETS.provider_s <= search_bound < 45.0
    assert search_bound < SERVER.deadline_s < HOST_PATIENCE_S
    ctx = Machine(home=tmp_path / "home", platform="linux",
                  now=lambda: datetime(2026, 1, 1, tzinfo=UTC), env={})
    entries = {e.name: e for e in build_entries(SERVERS.values(), tmp_path / "install",
                                                tmp_path / "data", ctx)}
    table = CodexHost(ctx).desired_value(entries[SERVER.name])
    assert table["tool_timeout_sec"] > SERVER.deadline_s


async def test_every_provider_is_asked_once_per_search_when_all_answer(make_service, fake):
    # The budgets change nothing for providers that answer.
    env = await make_service(budgets=Budgets(provider_s=5, retry_wait_s=1, fanout_s=6)).search(
        SearchRequest(query="readingroom"))
    assert statuses(env) == {p: "ok" for p in PROVIDER_ORDER}
