"""cinii-mcp's original answered every HTTP status of 400 and above with ``API_ERROR`` quoting
the first 300 characters of the body: a 429 read as a broken request, not as an unknown
result, and a body that echoed the request (application id and all) went into the answer.
Now a 429 is retried once and then ``RATE_LIMITED``, a 5xx once and then ``TRANSPORT_ERROR``,
a 403 ``API_ERROR`` naming the setting; no body is ever quoted."""

from __future__ import annotations

import json

import pytest
from tests.cinii.upstream import APPID, Upstream, service

from readingroom.core.clock import FakeClock

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(("status", "code", "attempts"), [
    (429, "RATE_LIMITED", 2), (503, "TRANSPORT_ERROR", 2), (500, "TRANSPORT_ERROR", 2),
    (403, "API_ERROR", 1), (400, "API_ERROR", 1),
])
async def test_each_status_is_its_own_code_and_no_body_is_quoted(status, code, attempts):
    body = f"<html>error for appid={APPID}: secret body text</html>".encode()
    up = Upstream(FakeClock(), script=lambda path, params: (status, {}, body))
    data = (await service(up).search("cinii_search_articles", "articles", {"q": "漱石"})
            ).to_data()
    text = json.dumps(data, ensure_ascii=False)
    assert data["error"]["code"] == code and len(up.seen) == attempts
    assert "secret body text" not in text and APPID not in text
