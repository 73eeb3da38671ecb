"""Issue 17 §3: queries sent as typed.

Before, ``cancer NOT review`` reached Crossref, OpenAlex, Semantic Scholar and bioRxiv as
``cancer review`` (Semantic Scholar also turned ``-review`` into ``review``), and arXiv received
``all:NOT`` as a search word: the query builders inverted the user's meaning. Now each provider
gets its own exclusion where it has one — PubMed and Europe PMC ``NOT``, bioRxiv (Europe PMC's
index) ``NOT``, OpenAlex ``NOT`` (uppercase, its documented Boolean search), arXiv ``ANDNOT`` —
and Crossref and Semantic Scholar, whose relevance search has no exclusion, get the query
without the negated term and a diagnostic naming the provider.

Also: the year filter keeps records with no year, and now says how many; ``pmcid`` and
``pmid`` together say which one was used.
"""

from __future__ import annotations

import json

import pytest
from tests.literature import conftest as literature_fixtures

from readingroom.core.errors import Code
from readingroom.literature.fake import canned
from readingroom.literature.models import SearchRequest

fake = literature_fixtures.fake
make_service = literature_fixtures.make_service

pytestmark = pytest.mark.anyio


def sent(fake) -> dict[str, str]:
    keys = {"pubmed": "term", "europepmc": "query", "biorxiv": "query", "crossref": "query",
            "openalex": "search", "semantic-scholar": "query", "arxiv": "search_query"}
    out = {}
    for record in fake.log:
        if record.path.endswith(("esearch.fcgi", "search", "works", "paper/search", "query")):
            out[record.prefix] = record.params[keys[record.prefix]]
    return out


@pytest.mark.parametrize("query", ["cancer NOT review", "cancer -review"])
async def test_the_negated_term_is_excluded_or_named_never_searched_for(make_service, fake,
                                                                       query):
    env = await make_service().search(SearchRequest(query=query))
    got = sent(fake)
    assert got["pubmed"] == "cancer NOT review"
    assert got["europepmc"].startswith("(cancer NOT review)")
    assert got["biorxiv"].startswith("(cancer NOT review)")
    assert got["openalex"] == "cancer NOT review"
    assert got["arxiv"] == "all:cancer ANDNOT all:review"
    for provider in ("crossref", "semantic-scholar"):
        assert got[provider] == "cancer", f"{provider} was sent {got[provider]!r}"
        (note,) = [d for d in env.diagnostics if d.message.startswith(f"{provider}:")
                   and d.field == "query"]
        assert "review" in note.message and note.code == Code.CAPABILITY_UNAVAILABLE


async def test_a_quoted_negated_phrase_stays_a_phrase(make_service, fake):
    await make_service().search(SearchRequest(query='gene editing NOT "base editing"'))
    got = sent(fake)
    assert got["openalex"] == 'gene editing NOT "base editing"'
    assert got["arxiv"] == 'all:gene AND all:editing ANDNOT all:"base editing"'
    assert got["crossref"] == "gene editing"


async def test_hyphenated_words_are_not_negations(make_service, fake):
    env = await make_service().search(SearchRequest(query="COVID-19 T-cell"))
    got = sent(fake)
    assert got["crossref"] == "COVID-19 T-cell" and got["pubmed"] == "COVID-19 T-cell"
    assert "ANDNOT" not in got["arxiv"] and "NOT" not in got["openalex"]
    assert not [d for d in env.diagnostics if d.field == "query"]


async def test_plain_words_reach_every_provider_unchanged(make_service, fake):
    await make_service().search(SearchRequest(query="readingroom gene"))
    got = sent(fake)
    assert got["crossref"] == got["openalex"] == got["semantic-scholar"] == "readingroom gene"
    assert got["arxiv"] == "all:readingroom AND all:gene"


async def test_the_year_filter_says_how_many_records_without_a_year_it_kept(make_service, fake):
    payload = json.loads(canned("crossref_works.json"))
    for name in ("issued", "published", "published-print", "published-online", "posted"):
        payload["message"]["items"][0].pop(name, None)  # hand-made: one record without a date
    fake.bodies[("crossref", "works")] = (200, {"Content-Type": "application/json"},
                                          json.dumps(payload).encode())
    env = await make_service().search(SearchRequest(query="readingroom", year_from=2000),
                                      ["crossref"])
    undated = [i for i in env.items if "year" not in i]
    assert len(undated) == 1
    (note,) = [d for d in env.diagnostics if d.field == "year_from"]
    assert "1 " in note.message and "no publication year" in note.message
    dated = await make_service().search(SearchRequest(query="readingroom", year_from=2000),
                                        ["openalex"])
    assert not [d for d in dated.diagnostics if d.field == "year_from"]


async def test_pmcid_and_pmid_together_say_which_one_was_used(make_service, fake):
    env = await make_service().fulltext(pmcid="PMC9000001", pmid="90000042")
    assert env.data["pmcid"] == "PMC9000001"
    (note,) = [d for d in env.diagnostics if d.field == "pmid"]
    assert "pmcid" in note.message and "90000042" in note.message
