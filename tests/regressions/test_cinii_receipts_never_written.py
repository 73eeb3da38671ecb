"""cinii-mcp's original built its envelopes without writing them to the receipt ledger
(japan-apis.md §3.2: ``emit`` unused, "no ledger"), so its searches were missing from every
disclosure. Now every answer after sending — a result, a zero, a failure, a fetch, an unknown
CRID — deposits exactly one receipt, and ``receipts report`` lists them beside NDL's."""

from __future__ import annotations

import json

import pytest
from tests.cinii.upstream import Upstream, service

from readingroom.core.clock import FakeClock

pytestmark = pytest.mark.anyio


async def test_every_answer_after_sending_leaves_one_receipt(tmp_path):
    ledger = tmp_path / "receipts.jsonl"

    def script(path, params):
        if params.get("q") == "__429__":
            return 429, {}, b""
        if params.get("q") == "__none__":
            return 200, {}, b'{"opensearch:totalResults": 0}'
        return None

    svc = service(Upstream(FakeClock(), script=script), ledger)
    await svc.search("cinii_search_articles", "articles", {"q": "漱石"})
    await svc.search("cinii_search_all", "all", {"q": "__none__"})
    await svc.search("cinii_search_books", "books", {"q": "__429__"})
    await svc.get_record("9990000000000000001")
    await svc.get_record("1234567")
    lines = [json.loads(x) for x in ledger.read_text("utf-8").splitlines()]
    assert [(x["server"], x["operation"], x["outcome"]) for x in lines] == [
        ("cinii-mcp", "cinii_search_articles", "ok"),
        ("cinii-mcp", "cinii_search_all", "empty"),
        ("cinii-mcp", "cinii_search_books", "RATE_LIMITED"),
        ("cinii-mcp", "cinii_get_record", "ok"),
        ("cinii-mcp", "cinii_get_record", "NOT_FOUND"),
    ]
    assert [x["seq"] for x in lines] == [1, 2, 3, 4, 5]
