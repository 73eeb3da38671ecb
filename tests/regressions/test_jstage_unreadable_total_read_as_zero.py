"""jstage-mcp's original read ``opensearch:totalResults`` as ``int(text or 0)``: a missing count
became a zero, and any failure a total of 0 beside the error (japan-apis.md §3.3). Now a missing
or unreadable count, or one the entries contradict, is ``API_ERROR``; only a stated 0 or
``ERR_001`` is an empty result."""

from __future__ import annotations

import re

import pytest
from tests.jstage.upstream import Upstream, service

from readingroom.core.clock import FakeClock
from readingroom.jstage.fake import canned

pytestmark = pytest.mark.anyio


def _without_count(body: bytes) -> bytes:
    return re.sub(rb"<opensearch:totalResults>\d+</opensearch:totalResults>", b"", body)


@pytest.mark.parametrize(("body", "problem"), [
    (_without_count(canned("articles.xml")), "totalResults is missing"),
    (_without_count(canned("zero.xml")), "totalResults is missing"),
    (canned("articles.xml").replace(b">143<", b">lots<"), "not a count"),
    (canned("articles.xml").replace(b">143<", b">0<"), "is 0 but"),
    (canned("zero.xml").replace(b"totalResults>0<", b"totalResults>5<"),
     "no record was delivered"),
    (canned("articles.xml").replace(b"<status>0</status>", b""), "status"),
])
async def test_no_readable_count_is_an_error_never_a_zero(body, problem):
    up = Upstream(FakeClock(), script=lambda params: (200, {}, body))
    data = (await service(up).search_articles({"article": "漱石"})).to_data()
    assert data["error"]["code"] == "API_ERROR" and "result" not in data
    assert problem in data["error"]["details"]["problem"]
