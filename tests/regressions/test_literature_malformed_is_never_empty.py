"""Issue 18 §3: a malformed answer is that source's error, never ``empty``.

Before, ``as_list()``/``as_dict()`` coercions turned a wrong type into ``[]``: Crossref
``"items": "oops"``, OpenAlex ``"results": {"a": 1}``, Semantic Scholar ``"data": "oops"``,
Europe PMC ``"resultList": null``, PubMed ``Count 9`` with no ids, arXiv ``totalResults 9``
with no entries and a page of ``[null, null, 3]`` records were all ``empty`` with
``ZERO_RESULT``, and the receipt recorded ``empty, total 0`` for ever. Now a container of the
wrong type, a count above zero with nothing delivered, or a page whose every record is
unreadable is that source's ``error`` (``API_ERROR`` with a diagnostic), and the receipt's
outcome is what the user was told.

Bodies: each a canned answer (``literature/canned``) with one place damaged, by hand.
"""

from __future__ import annotations

import json
from typing import Any

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


def damaged(name: str, change) -> bytes:
    payload: Any = json.loads(canned(name))
    change(payload)
    return json.dumps(payload).encode()


def _set(path: tuple[Any, ...], value: Any):
    def change(payload: Any) -> None:
        node = payload
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
    return change


ESEARCH_9_NO_IDS = (b'<?xml version="1.0" ?>\n<eSearchResult><Count>9</Count><RetMax>0</RetMax>'
                    b"<RetStart>0</RetStart><IdList/></eSearchResult>")
ARXIV_9_NO_ENTRIES = canned("arxiv_empty.xml").replace(b"<opensearch:totalResults>0",
                                                       b"<opensearch:totalResults>9")

CASES = [
    pytest.param("crossref", "works", damaged("crossref_works.json",
                                              _set(("message", "items"), "oops")),
                 _JSON, id="crossref-items-a-string"),
    pytest.param("openalex", "works", damaged("openalex_works.json",
                                              _set(("results",), {"a": 1})),
                 _JSON, id="openalex-results-an-object"),
    pytest.param("semantic-scholar", "paper/search",
                 damaged("semantic_scholar_search.json", _set(("data",), "oops")),
                 _JSON, id="s2-data-a-string"),
    pytest.param("europepmc", "search", damaged("europepmc_search.json",
                                                _set(("resultList",), None)),
                 _JSON, id="europepmc-resultList-null"),
    pytest.param("biorxiv", "search", damaged("biorxiv_search.json",
                                              _set(("resultList", "result"), "oops")),
                 _JSON, id="biorxiv-result-a-string"),
    pytest.param("pubmed", "esearch.fcgi", ESEARCH_9_NO_IDS, _XML, id="pubmed-count-9-no-ids"),
    pytest.param("arxiv", "api/query", ARXIV_9_NO_ENTRIES, _XML,
                 id="arxiv-totalResults-9-no-entries"),
    pytest.param("crossref", "works", damaged("crossref_works.json",
                                              _set(("message", "items"), [None, None, 3])),
                 _JSON, id="crossref-every-record-unreadable"),
    pytest.param("semantic-scholar", "paper/search",
                 damaged("semantic_scholar_search.json", _set(("data",), [None, None, 3])),
                 _JSON, id="s2-every-record-unreadable"),
    pytest.param("openalex", "works", damaged("openalex_works.json",
                                              _set(("results",), [None, None, 3])),
                 _JSON, id="openalex-every-record-unreadable"),
]


@pytest.mark.parametrize(("provider", "path", "body", "headers"), CASES)
async def test_malformed_is_an_error_and_the_receipt_says_so(make_service, fake, tmp_path,
                                                            provider, path, body, headers):
    fake.bodies[(provider, path)] = (200, headers, body)
    env = await make_service().search(SearchRequest(query="readingroom"), [provider])
    assert env.error is not None, f"{provider} answered {env.result} from a malformed page"
    assert env.error.code == Code.API_ERROR
    assert [str(s.status) for s in env.sources if s.id == provider] == ["error"]
    assert not any(d.code == Code.ZERO_RESULT for d in env.diagnostics)
    (line,) = [json.loads(x) for x in (tmp_path / "receipts.jsonl").read_text().splitlines()]
    assert line["outcome"] == "API_ERROR" and line["total"] is None


@pytest.mark.parametrize(("provider", "path", "body", "headers"), CASES)
async def test_beside_good_sources_it_is_that_sources_error(make_service, fake, provider, path,
                                                           body, headers):
    fake.bodies[(provider, path)] = (200, headers, body)
    env = await make_service().search(SearchRequest(query="readingroom"))
    assert env.error is None and env.items
    assert {s.id: str(s.status) for s in env.sources}[provider] == "error"
    (note,) = [d for d in env.diagnostics if d.message.startswith(f"{provider}:")]
    assert note.code == Code.API_ERROR


async def test_a_partly_unreadable_page_keeps_the_readable_records_and_counts_the_rest(
        make_service, fake):
    payload = json.loads(canned("crossref_works.json"))
    payload["message"]["items"][1] = None
    fake.bodies[("crossref", "works")] = (200, _JSON, json.dumps(payload).encode())
    env = await make_service().search(SearchRequest(query="readingroom"), ["crossref"])
    assert env.error is None and len(env.items) == 3
    (note,) = [d for d in env.diagnostics if d.code == Code.RECORD_UNREADABLE]
    assert note.message.startswith("crossref:") and "1 " in note.message


async def test_when_every_source_answered_nothing_but_one_failed_the_receipt_is_incomplete(
        make_service, fake, tmp_path):
    fake.modes.update({"crossref": "empty", "openalex": "empty"})
    fake.bodies[("openalex", "works")] = (200, _JSON, damaged("openalex_works.json",
                                                               _set(("results",), None)))
    fake.modes["openalex"] = "ok"
    env = await make_service().search(SearchRequest(query="readingroom"),
                                      ["crossref", "openalex"])
    assert env.error is None and not env.items
    (line,) = [json.loads(x) for x in (tmp_path / "receipts.jsonl").read_text().splitlines()]
    assert line["outcome"] == "incomplete"
    assert line["source_statuses"] == {"crossref": "empty", "openalex": "error"}
