"""cinii-mcp's original read a missing or unreadable ``opensearch:totalResults`` as 0
(``int(data.get(..., 0))``, and 0 on any error), so a broken answer was reported as "nothing
found". Now a count that is missing, not a number, or contradicted by the items is
``API_ERROR`` with a diagnostic, and only CiNii's stated 0 is an empty result."""

from __future__ import annotations

import json

import pytest
from tests.cinii.upstream import Upstream, service

from readingroom.core.clock import FakeClock

pytestmark = pytest.mark.anyio

ITEM = {"@id": "https://cir.nii.ac.jp/crid/9990000000000000001", "dc:type": "Article",
        "title": "x"}


@pytest.mark.parametrize(("answer", "problem"), [
    ({"items": [ITEM]}, "totalResults is missing"),
    ({"opensearch:totalResults": "lots", "items": [ITEM]}, "not a count"),
    ({"opensearch:totalResults": 5}, "no record was delivered"),
    ({"opensearch:totalResults": 0, "items": [ITEM]}, "is 0 but"),
    ({"opensearch:totalResults": 3, "items": {"0": ITEM}}, "items is a dict"),
    ({"opensearch:totalResults": 3, "items": [1, 2, 3]}, "none of the 3 records"),
])
async def test_an_answer_that_is_no_result_is_an_error_never_a_zero(answer, problem):
    body = json.dumps(answer).encode()
    up = Upstream(FakeClock(), script=lambda path, params: (200, {}, body))
    data = (await service(up).search("cinii_search_all", "all", {"q": "漱石"})).to_data()
    assert data["error"]["code"] == "API_ERROR" and "result" not in data
    assert problem in data["error"]["details"]["problem"]
    assert data["sources"][0]["status"] == "error"


async def test_cinii_s_own_zero_is_an_empty_result():
    body = json.dumps({"opensearch:totalResults": "0"}).encode()
    up = Upstream(FakeClock(), script=lambda path, params: (200, {}, body))
    data = (await service(up).search("cinii_search_all", "all", {"q": "漱石"})).to_data()
    assert data["result"]["total"] == 0 and data["sources"][0]["status"] == "empty"
