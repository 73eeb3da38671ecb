"""Issue 18 §4: the cache never keeps a failure.

Before, an HTML maintenance page (or a JSON error body) answered with HTTP 200 was cached
before the provider's parse failed: once the upstream recovered, the same query kept failing
for all seven providers with no request sent. Now only a successfully parsed page is cached.
"""

from __future__ import annotations

import pytest
from tests.literature import conftest as literature_fixtures

from readingroom.literature.models import PROVIDER_ORDER, SearchRequest

fake = literature_fixtures.fake
make_service = literature_fixtures.make_service

pytestmark = pytest.mark.anyio


# A JSON error body answered with HTTP 200 (hand-made, in the style of an API gateway).
JSON_ERROR = (200, {"Content-Type": "application/json"},
              b'{"error": "Service temporarily under maintenance"}')
JSON_PATHS = {"europepmc": "search", "biorxiv": "search", "crossref": "works",
              "openalex": "works", "semantic-scholar": "paper/search"}
CASES = [pytest.param(p, "html", id=f"{p}-html-page") for p in PROVIDER_ORDER] + [
    pytest.param(p, "json", id=f"{p}-json-error-body") for p in JSON_PATHS]


@pytest.mark.parametrize(("provider", "kind"), CASES)
async def test_a_200_failure_page_is_not_cached(make_service, fake, provider, kind):
    service = make_service()
    if kind == "html":
        fake.modes[provider] = "malformed"
    else:
        fake.bodies[(provider, JSON_PATHS[provider])] = JSON_ERROR
    first = await service.search(SearchRequest(query="readingroom"), [provider])
    assert first.error is not None
    sent = len(fake.requests(provider))
    fake.modes.clear()  # the upstream recovered
    fake.bodies.clear()
    again = await service.search(SearchRequest(query="readingroom"), [provider])
    assert len(fake.requests(provider)) > sent, "answered from a cached failure"
    assert again.error is None and again.items
    # ...and the good page is cached: a third search sends nothing.
    sent = len(fake.requests(provider))
    await service.search(SearchRequest(query="readingroom"), [provider])
    assert len(fake.requests(provider)) == sent
