"""The search service against the loopback fake: statuses, fusion end to end, filters, cache."""

from __future__ import annotations

import json

import anyio
import pytest

from readingroom.core import secrets
from readingroom.core.errors import Code
from readingroom.literature.models import PROVIDER_ORDER, SearchRequest
from readingroom.literature.service import fanout_deadline

pytestmark = pytest.mark.anyio


def statuses(env) -> dict[str, str]:
    return {s.id: str(s.status) for s in env.sources}


async def test_all_seven_answer_and_duplicates_merge(make_service, fake):
    env = await make_service().search(SearchRequest(query="readingroom"))
    assert env.error is None
    assert statuses(env) == {p: "ok" for p in PROVIDER_ORDER}
    first = env.items[0]
    assert first["doi"] == "10.5555/rr.2024.0001"
    assert first["pmid"] == "90000001" and first["pmcid"] == "PMC9000001"
    assert [e["provider"] for e in first["evidence"]] == [
        "pubmed", "europepmc", "crossref", "openalex", "semantic-scholar"]
    assert first["open_access"] is True and first["open_access_evidence"]
    assert first["pdf_url"].startswith("https://europepmc.org/articles/PMC9000001")
    assert first["authors"] == ["Mira Okafor", "Jun Tanaka"]
    # The arXiv paper: arXiv, OpenAlex (arXiv DOI) and Semantic Scholar (ArXiv id) as one.
    arxiv = next(i for i in env.items if i.get("arxiv_id") == "2401.00001")
    assert {e["provider"] for e in arxiv["evidence"]} == {"openalex", "semantic-scholar",
                                                         "arxiv"}
    assert arxiv["arxiv_version"] == "v2"
    # Paper D: DOI-only at Crossref, PMID-only at Semantic Scholar, linked by PubMed/EPMC.
    d = next(i for i in env.items if i.get("pmid") == "90000042")
    assert {e["provider"] for e in d["evidence"]} == {"pubmed", "europepmc", "crossref",
                                                     "semantic-scholar"}
    assert d.get("open_access") is False  # Crossref's TDM licence is not OA evidence
    # E1/E2: one title, two DOIs: two results.
    reviews = [i for i in env.items if i["title"].startswith("Gene editing in reading rooms")]
    assert len(reviews) == 2
    assert [i["rank"] for i in env.items] == list(range(1, len(env.items) + 1))
    scores = [i["rrf_score"] for i in env.items]
    assert scores == sorted(scores, reverse=True)
    assert env.result.by_provider["crossref"] == 4


async def test_biorxiv_and_europepmc_share_one_vote_and_requests_are_disjoint(make_service,
                                                                            fake):
    env = await make_service().search(SearchRequest(query="readingroom"))
    preprint = next(i for i in env.items if i.get("doi", "").startswith("10.1101/"))
    assert preprint["evidence"][0] == {"provider": "biorxiv", "rank": 1,
                                       "votes_with": "europepmc"}
    epmc = [r.params["query"] for r in fake.requests("europepmc")]
    bio = [r.params["query"] for r in fake.requests("biorxiv")]
    assert all("NOT (SRC:PPR" in q for q in epmc) and all("AND SRC:PPR" in q for q in bio)


@pytest.mark.parametrize(("mode", "status", "code"), [
    ("rate_limited", "rate_limited", Code.RATE_LIMITED),
    ("error", "error", Code.TRANSPORT_ERROR),
    ("malformed", "error", Code.API_ERROR),
    ("empty", "empty", None),
])
async def test_one_provider_failing_never_fails_the_search(make_service, fake, mode, status,
                                                          code):
    fake.modes["semantic-scholar"] = mode
    env = await make_service().search(SearchRequest(query="readingroom"))
    assert env.error is None and env.items
    got = statuses(env)
    assert got.pop("semantic-scholar") == status
    assert set(got.values()) == {"ok"}
    reasons = [d for d in env.diagnostics if d.field == "sources"]
    if code is None:
        assert not reasons
    else:
        assert [d.code for d in reasons] == [code]
        assert reasons[0].message.startswith("semantic-scholar:")
    if mode == "rate_limited":
        assert "not 'no results'" in reasons[0].message
        assert len(fake.requests("semantic-scholar")) == 4  # first attempt + three retries


async def test_a_slow_provider_is_its_own_error_with_the_reason(make_service, fake):
    fake.modes["arxiv"] = "slow"
    service = make_service(deadline=2.0)
    assert fanout_deadline(2.0) == pytest.approx(1.8)
    with anyio.fail_after(4):
        env = await service.search(SearchRequest(query="readingroom"))
    assert env.error is None
    assert statuses(env)["arxiv"] == "error"
    (reason,) = [d for d in env.diagnostics if d.field == "sources"]
    assert reason.code == Code.DEADLINE_EXCEEDED and "no answer within" in reason.message


async def test_no_provider_answering_is_an_unknown_result_not_an_empty_one(make_service, fake):
    env = await make_service().search(SearchRequest(query="__429__"))
    assert env.error is not None and env.error.code == Code.RATE_LIMITED
    assert env.result is None and not env.items
    assert set(statuses(env).values()) == {"rate_limited"}


async def test_unchosen_sources_are_skipped_and_not_asked(make_service, fake):
    env = await make_service().search(SearchRequest(query="readingroom"), ["crossref", "arxiv"])
    got = statuses(env)
    assert got["crossref"] == got["arxiv"] == "ok"
    assert {p for p, s in got.items() if s == "skipped"} == set(PROVIDER_ORDER) - {"crossref",
                                                                                   "arxiv"}
    assert {r.prefix for r in fake.log} == {"crossref", "arxiv"}
    assert len(env.attribution) == 2


async def test_refusals_send_nothing(make_service, fake):
    service = make_service()
    bad_years = await service.search(SearchRequest(query="x", year_from=2020, year_to=2010))
    blank = await service.search(SearchRequest(query="   "))
    for env in (bad_years, blank):
        assert env.error.code == Code.INVALID_INPUT and env.attribution
    assert fake.log == []


async def test_keyword_only_providers_are_skipped_for_a_query_without_words(make_service):
    env = await make_service().search(SearchRequest(query="[tiab]"))
    got = statuses(env)
    assert got["crossref"] == got["openalex"] == got["semantic-scholar"] == "skipped"


async def test_filters_limit_and_abstract_cap(make_service):
    service = make_service()
    env = await service.search(SearchRequest(query="readingroom", year_from=2024, limit=2,
                                             abstract_max_chars=20))
    assert len(env.items) == 2 and env.result.has_more
    assert all(i["year"] >= 2024 for i in env.items)
    capped = [i for i in env.items if "abstract" in i]
    assert capped and all(len(i["abstract"]) <= 20 and i["abstract_truncated"] for i in capped)
    oa = await service.search(SearchRequest(query="readingroom", open_access=True))
    assert oa.items and all(i.get("open_access") or i.get("pdf_url") for i in oa.items)
    assert not any(i["title"].startswith("Gene editing in reading rooms") for i in oa.items)


async def test_a_repeated_search_is_answered_from_the_cache(make_service, fake):
    service = make_service()
    first = await service.search(SearchRequest(query="readingroom"))
    sent = len(fake.log)
    again = await service.search(SearchRequest(query="readingroom"))
    assert len(fake.log) == sent
    assert [i["doi"] for i in again.items if "doi" in i] == \
        [i["doi"] for i in first.items if "doi" in i]


async def test_history_has_no_abstracts_authors_or_secrets(make_service, tmp_path):
    secret = "s3cr3t-openalex-key"
    service = make_service(secret_lookup=lambda n: secrets.SecretValue(n, secret, "keyring")
                           if n == "OPENALEX_API_KEY" else None)
    env = await service.search(SearchRequest(query="readingroom"))
    text = service.history.path.read_text("utf-8")
    (line,) = [json.loads(x) for x in text.splitlines()]
    assert line["parameters"]["query"] == "readingroom"
    assert line["sources"] == {p: "ok" for p in PROVIDER_ORDER}
    assert line["results"][0]["evidence"][0] == {"provider": "pubmed", "rank": 1}
    assert line["results"][0]["doi"] == "10.5555/rr.2024.0001"
    assert line["results"][0]["url"]
    for leaked in ("Okafor", "Tanaka", "made-up locus", '"abstract"', '"authors"', '"title"',
                   secret):
        assert leaked not in text
    ledger = (tmp_path / "receipts.jsonl").read_text("utf-8")
    assert secret not in ledger and secret not in env.to_json()
    assert env.receipt is not None and env.receipt.deposited


async def test_sources_say_where_a_variable_is_configured_never_its_value(make_service, fake):
    found = {"NCBI_API_KEY": secrets.SecretValue("NCBI_API_KEY", "k-123", "keyring"),
             "CROSSREF_MAILTO": secrets.SecretValue("CROSSREF_MAILTO", "me@example.org",
                                                    "environment")}
    env = make_service(secret_lookup=found.get).sources()
    text = env.to_json()
    assert "k-123" not in text and "me@example.org" not in text
    variables = {v["name"]: v for v in env.data["optional_variables"]}
    assert variables["NCBI_API_KEY"] == {"name": "NCBI_API_KEY", "configured": True,
                                         "from": "keyring", "used_by": ["pubmed"]}
    assert variables["CROSSREF_MAILTO"]["from"] == "environment"
    assert variables["OPENALEX_API_KEY"]["configured"] is False
    providers = env.data["providers"]
    assert [p["id"] for p in providers] == list(PROVIDER_ORDER)
    biorxiv = providers[2]
    assert biorxiv["searches_index_of"] == "europepmc"
    assert any("no keyword search" in s for s in biorxiv["limitations"])
    assert fake.log == []


def test_the_query_is_stripped_once_where_the_request_is_made():
    assert SearchRequest(query="  readingroom \n").query == "readingroom"


async def test_a_padded_query_asks_every_provider_what_the_bare_one_does(make_service, fake):
    """The query is stripped at the boundary, so no provider, key or record sees the padding."""
    bare = await make_service().search(SearchRequest(query="readingroom"))
    asked_bare = sorted((r.prefix, sorted(r.params.items())) for r in fake.log)
    fake.clear()
    padded = await make_service().search(SearchRequest(query=" \t readingroom  "))
    assert sorted((r.prefix, sorted(r.params.items())) for r in fake.log) == asked_bare
    assert padded.query.normalized == bare.query.normalized == "readingroom"
    assert [i["title"] for i in padded.items] == [i["title"] for i in bare.items]
