"""The declaration, the exact tool registration, the GET cache, history and clear-history."""

from __future__ import annotations

import httpx
import pytest

from readingroom.core.clock import FakeClock
from readingroom.literature import ENV_STATE_DIR, OPTIONAL_VARIABLES, SERVER, URL_SETTINGS
from readingroom.literature.__main__ import main
from readingroom.literature.cache import MAX_BYTES, MAX_ENTRIES, TTL_SECONDS, ResultCache
from readingroom.literature.fake import canned
from readingroom.literature.history import History, history_line, state_dir
from readingroom.literature.models import PROVIDER_ORDER, SearchRequest
from readingroom.literature.server import tool_specs
from readingroom.literature.service import LiteratureService
from readingroom.literature.upstreams import PROVIDERS
from readingroom.literature.upstreams.base import Page, ProviderSettings


def test_exactly_three_tools_with_the_prefix_and_read_only_hints(tmp_path):
    service = LiteratureService(env={}, secret_lookup=lambda n: None,
                                history=History(tmp_path))
    specs = tool_specs(service)
    assert [s.name for s in specs] == ["literature_search", "literature_sources",
                                       "literature_get_fulltext"]
    for spec in specs:
        assert spec.name.startswith(SERVER.prefix)
        assert spec.read_only and spec.idempotent and not spec.destructive
    search = specs[0].input_model.model_json_schema()["properties"]
    assert search["limit"]["maximum"] == 50 and search["limit"]["default"] == 10
    assert search["abstract_max_chars"]["maximum"] == 3000
    full = specs[2].input_model.model_json_schema()["properties"]
    assert (full["max_chars"]["minimum"], full["max_chars"]["maximum"],
            full["max_chars"]["default"]) == (1000, 1_000_000, 100_000)


def test_declared_url_settings_are_the_providers_and_in_order():
    assert [name for name, _what, _default in URL_SETTINGS] == [
        PROVIDERS[p].info.url_setting for p in PROVIDER_ORDER]
    assert [default for _n, _w, default in URL_SETTINGS] == [
        PROVIDERS[p].info.default_url for p in PROVIDER_ORDER]
    used = {n for p in PROVIDERS.values() for n in p.info.optional_settings}
    assert used == set(OPTIONAL_VARIABLES) == set(SERVER.secrets)
    assert ENV_STATE_DIR in {s.name for s in SERVER.settings}


def test_state_dir_is_platformdirs_unless_relocated(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    assert state_dir({}).name == "literature-search-mcp"
    assert state_dir({ENV_STATE_DIR: str(tmp_path / "x")}) == tmp_path / "x"


def test_history_line_keeps_only_identifiers_ranks_evidence_and_urls():
    item = {"rank": 1, "title": "T", "doi": "10.1/a", "authors": ["A"], "abstract": "secret",
            "url": "https://x", "rrf_score": 0.01,
            "evidence": [{"provider": "pubmed", "rank": 1, "votes_with": "x"}]}
    line = history_line(at="now", parameters={"query": "q"}, statuses={"pubmed": "ok"},
                        items=[item])
    assert line["results"] == [{"rank": 1, "rrf_score": 0.01, "doi": "10.1/a",
                                "url": "https://x",
                                "evidence": [{"provider": "pubmed", "rank": 1}]}]


def test_clear_history_command(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(ENV_STATE_DIR, str(tmp_path))
    history = History(tmp_path)
    history.append({"a": 1})
    history.append({"a": 2})
    assert main(["clear-history"]) == 0
    assert "cleared 2 searches" in capsys.readouterr().out
    assert not history.path.exists() and history.entries() == []
    assert main(["clear-history"]) == 0
    assert "cleared 0 searches" in capsys.readouterr().out
    assert main(["clear-history", "now"]) == 2


def test_help_names_clear_history(capsys):
    assert main(["--help"]) == 0
    err = capsys.readouterr().err
    assert "clear-history" in err and "LITERATURE_SEARCH_STATE_DIR" in err


def test_cache_expires_keeps_at_most_256_and_never_more_than_its_bytes():
    clock = FakeClock()
    cache = ResultCache(clock=clock)
    page = Page(records=(), total=0)
    assert cache.put(("p", "q"), page) and cache.get(("p", "q")) is page
    clock.advance(TTL_SECONDS + 1)
    assert cache.get(("p", "q")) is None and len(cache) == 0 and cache.bytes == 0
    for i in range(MAX_ENTRIES + 10):
        cache.put(("p", f"u{i}"), page)
    assert len(cache) == MAX_ENTRIES
    assert cache.get(("p", "u0")) is None
    assert cache.get(("p", f"u{MAX_ENTRIES + 9}")) is page
    assert cache.max_bytes == MAX_BYTES and cache.bytes <= MAX_BYTES


@pytest.mark.anyio
async def test_a_repeated_page_is_answered_before_pacing_and_keys_keep_settings_apart(tmp_path):
    clock = FakeClock()
    calls: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        calls.append(str(request.url))
        return httpx.Response(200, content=canned("arxiv_feed.xml"))

    service = LiteratureService(env={"ARXIV_URL": "https://arxiv.test"}, clock=clock,
                                transport=httpx.MockTransport(answer),
                                secret_lookup=lambda n: None, history=History(tmp_path))
    await service.search(SearchRequest(query="readingroom"), ["arxiv"])
    sleeps = len(clock.sleeps)
    await service.search(SearchRequest(query="readingroom"), ["arxiv"])
    assert len(calls) == 1 and len(clock.sleeps) == sleeps  # no 3 s floor waited for a hit
    await service.search(SearchRequest(query="readingroom", year_from=2020), ["arxiv"])
    assert len(calls) == 2
    other = LiteratureService(env={"ARXIV_URL": "https://arxiv.test"}, clock=clock,
                              transport=httpx.MockTransport(answer),
                              secret_lookup=lambda n: None, history=History(tmp_path))
    other.cache = service.cache  # one cache, another configuration: the key differs
    other._settings["arxiv"] = ProviderSettings(base_url="https://arxiv.test",
                                                values={"X": "1"})
    await other.search(SearchRequest(query="readingroom"), ["arxiv"])
    assert len(calls) == 3
