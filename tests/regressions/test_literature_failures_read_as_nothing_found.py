"""Issue 17 §2: four upstream failures that read as "nothing found".

Before, each of these made its source ``empty`` (and, alone, the search a ``ZERO_RESULT``):
an upstream that did not deliver, not an absence. Now each is that source's ``error`` with a
diagnostic saying what it claimed and what came; a genuine zero-hit answer stays ``empty``.

The bodies are hand-made, shaped after the real samples named beside each.
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

_JSON = {"Content-Type": "application/json"}
_XML = {"Content-Type": "application/xml"}

# arxiv/arxivpy_q_testing_*.json: a feed whose totalResults claims hits, with no <entry>.
ARXIV_NO_ENTRIES = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n'
    b'<feed xmlns="http://www.w3.org/2005/Atom" '
    b'xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">'
    b"<title>arXiv Query</title><id>https://arxiv.org/api/x</id>"
    b"<opensearch:totalResults>214881</opensearch:totalResults>"
    b"<opensearch:startIndex>0</opensearch:startIndex>"
    b"<opensearch:itemsPerPage>10</opensearch:itemsPerPage></feed>"
)
# pubmed/biopython_esearch1.xml: Count 63 and its ids; then an efetch set with no article.
PUBMED_ESEARCH_63 = (
    b'<?xml version="1.0" encoding="UTF-8" ?>\n<eSearchResult><Count>63</Count>'
    b"<RetMax>3</RetMax><RetStart>0</RetStart><IdList><Id>90000001</Id><Id>90000042</Id>"
    b"<Id>90000077</Id></IdList></eSearchResult>"
)
PUBMED_EMPTY_SET = b'<?xml version="1.0" ?>\n<PubmedArticleSet></PubmedArticleSet>'
# europepmc/pyeuropepmc_search_cancer_core.json: hitCount 25 with an empty resultList.
EPMC_25_EMPTY = json.dumps({"version": "6.9", "hitCount": 25,
                            "resultList": {"result": []}}).encode()
# openalex/paperqa_works_title-search_*.json: meta.count 2 with results null.
OPENALEX_NULL = json.dumps({"meta": {"count": 2, "page": 1, "per_page": 25},
                            "results": None}).encode()

CASES = [
    pytest.param("arxiv", {("arxiv", "api/query"): (200, _XML, ARXIV_NO_ENTRIES)},
                 "214881", id="arxiv-totalResults-without-entries"),
    pytest.param("pubmed", {("pubmed", "esearch.fcgi"): (200, _XML, PUBMED_ESEARCH_63),
                            ("pubmed", "efetch.fcgi"): (200, _XML, PUBMED_EMPTY_SET)},
                 "63", id="pubmed-63-ids-then-an-empty-efetch"),
    pytest.param("europepmc", {("europepmc", "search"): (200, _JSON, EPMC_25_EMPTY)},
                 "25", id="europepmc-hitCount-25-empty-resultList"),
    pytest.param("openalex", {("openalex", "works"): (200, _JSON, OPENALEX_NULL)},
                 "results", id="openalex-results-null"),
]


@pytest.mark.parametrize(("provider", "bodies", "said"), CASES)
async def test_an_upstream_that_did_not_deliver_is_an_error_not_empty(make_service, fake,
                                                                     provider, bodies, said):
    fake.bodies.update(bodies)
    env = await make_service().search(SearchRequest(query="readingroom"))
    status = {s.id: str(s.status) for s in env.sources}
    assert status[provider] == "error", status
    (note,) = [d for d in env.diagnostics if d.message.startswith(f"{provider}:")]
    assert note.code == Code.API_ERROR and said in note.message
    assert env.receipt is not None


@pytest.mark.parametrize(("provider", "bodies", "said"), CASES)
async def test_alone_it_is_an_unknown_result_never_a_zero(make_service, fake, provider,
                                                          bodies, said):
    fake.bodies.update(bodies)
    env = await make_service().search(SearchRequest(query="readingroom"), [provider])
    assert env.error is not None and env.error.code == Code.API_ERROR
    assert env.result is None
    assert not any(d.code == Code.ZERO_RESULT for d in env.diagnostics)


@pytest.mark.parametrize("provider", ["arxiv", "pubmed", "europepmc", "openalex"])
async def test_a_genuine_zero_stays_empty(make_service, fake, provider):
    fake.modes[provider] = "empty"
    env = await make_service().search(SearchRequest(query="readingroom"), [provider])
    assert env.error is None and [str(s.status) for s in env.sources
                                  if s.id == provider] == ["empty"]
    assert any(d.code == Code.ZERO_RESULT for d in env.diagnostics)


def test_the_canned_zero_answers_say_zero():
    # The fake's empty answers are real zeros (a count of 0), the shape the rule trusts.
    assert b"<Count>0</Count>" in canned("pubmed_esearch_empty.xml")
    assert json.loads(canned("europepmc_empty.json"))["hitCount"] == 0
