"""jstage-mcp's original did not map ``ERR_003`` (too many requests) to a rate limit
(japan-apis.md §3.3): it became a generic ``API_ERROR`` — and, before it, an ``ERR_*`` with no
message a zero. Now ``ERR_003`` is ``RATE_LIMITED`` (the result unknown, never empty), it is not
retried (J-STAGE asked for fewer requests), and HTTP 429 means the same."""

from __future__ import annotations

import pytest
from tests.jstage.upstream import Upstream, service

from readingroom.core.clock import FakeClock

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(("call", "answer", "attempts"), [
    (lambda s: s.search_articles({"article": "__err003__"}), None, 1),
    (lambda s: s.list_issues({"material": "__err003__"}), None, 1),
    (lambda s: s.search_articles({"article": "x"}), (429, {"Retry-After": "2"}, b""), 2),
])
async def test_too_many_requests_is_rate_limited_never_empty(call, answer, attempts):
    up = Upstream(FakeClock(), script=lambda params: answer)
    data = (await call(service(up))).to_data()
    assert len(up.seen) == attempts
    assert data["error"]["code"] == "RATE_LIMITED"
    assert "result" not in data and data["items"] == []
    assert data["sources"][0]["status"] == "rate_limited"
    assert "UNKNOWN, not empty" in data["error"]["remediation"]
