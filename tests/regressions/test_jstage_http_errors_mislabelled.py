"""jstage-mcp's original labelled every HTTP error status ``TRANSPORT_ERROR`` (japan-apis.md
§3.3), telling the reader J-STAGE was unreachable when it had answered, and unlike ndl-mcp. Now
a refusal (4xx) is ``API_ERROR``, a 429 ``RATE_LIMITED`` after one retry, a 5xx
``TRANSPORT_ERROR`` after one retry, as in every server of the suite."""

from __future__ import annotations

import pytest
from tests.jstage.upstream import Upstream, service

from readingroom.core.clock import FakeClock

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(("status", "code", "attempts"), [
    (400, "API_ERROR", 1), (404, "API_ERROR", 1), (429, "RATE_LIMITED", 2),
    (500, "TRANSPORT_ERROR", 2), (503, "TRANSPORT_ERROR", 2),
])
async def test_each_http_status_is_its_own_code(status, code, attempts):
    up = Upstream(FakeClock(), script=lambda params: (status, {}, b"no"))
    env = await service(up).search_articles({"article": "漱石"})
    assert env.error is not None and env.error.code == code
    assert len(up.seen) == attempts
