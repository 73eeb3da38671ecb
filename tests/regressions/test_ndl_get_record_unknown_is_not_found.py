"""ndl_get_record of an identifier NDL Search does not have is NOT_FOUND (issue 17 §9 rule).

The suite's rule for every fetch tool (docs/architecture.md): an identifier the upstream says
does not exist is a ``NOT_FOUND`` error (``isError``, a remediation naming the search tool); an
upstream failure stays ``API_ERROR``/``TRANSPORT_ERROR``…; a search with no hit is a success
with status ``empty``. Before, ndl_get_record answered an unknown id with a *successful* empty
result (a ``ZERO_RESULT`` diagnostic), unlike heritage_get_publication.
"""

from __future__ import annotations

import json

import httpx
import pytest

from readingroom.core.clock import FakeClock
from readingroom.ndl.fake import canned
from readingroom.ndl.service import NdlService
from readingroom.ndl.upstreams.ndl_search import NdlClient

pytestmark = pytest.mark.anyio


def _service(bodies: list[bytes], ledger) -> tuple[NdlService, list[str]]:
    queries: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        queries.append(request.url.params["query"])
        return httpx.Response(200, content=bodies[len(queries) - 1])

    client = NdlClient("https://ndl.test/api/sru", clock=FakeClock(),
                       transport=httpx.MockTransport(answer))
    return NdlService(client, env={"MCP_RECEIPT_LOG": str(ledger)}), queries


async def test_an_unknown_bib_id_is_not_found_after_both_repositories(tmp_path):
    ledger = tmp_path / "r.jsonl"
    none = canned("no_records.xml")
    service, queries = _service([none, none], ledger)
    env = await service.get_record(jpno=None, ndl_bib_id="000000000001", ndl_search_id=None)
    data = env.to_data()
    assert data["error"]["code"] == "NOT_FOUND" and "result" not in data
    assert "ndl_search_books" in data["error"]["remediation"]
    assert data["error"]["details"]["queries"] == queries and len(queries) == 2
    assert [s["status"] for s in data["sources"]] == ["empty"] * len(data["sources"])
    assert data["attribution"]
    lines = [json.loads(x) for x in ledger.read_text("utf-8").splitlines()]
    assert [line["outcome"] for line in lines] == ["empty", "NOT_FOUND"]
    assert data["receipt"]["ledger_hash"] == lines[-1]["hash"]


async def test_a_known_jpno_is_fetched(tmp_path):
    service, _ = _service([canned("books.xml")], tmp_path / "r.jsonl")
    env = await service.get_record(jpno="71009951", ndl_bib_id=None, ndl_search_id=None)
    assert env.error is None and env.result is not None and env.result.total


async def test_an_upstream_failure_is_not_a_not_found(tmp_path):
    service, _ = _service([canned("query_syntax.xml")], tmp_path / "r.jsonl")
    env = await service.get_record(jpno="71009951", ndl_bib_id=None, ndl_search_id=None)
    assert env.error is not None and env.error.code == "API_ERROR"
