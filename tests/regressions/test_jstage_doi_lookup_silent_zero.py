"""jstage-mcp's original resolved a DOI only if it matched ``<cdjournal>.<vol>.<no>_<page>``
and answered every other DOI, and every DOI it did not find, with a *successful* envelope of
total 0 (japan-apis.md §3.3). A J-STAGE DOI such as ``10.4264/numa.70.125`` could not be read
at all. Now a DOI is looked up by its journal code and volume (and number when it has one);
found, it is the article; not found, ``NOT_FOUND`` pointing at the search, never a zero."""

from __future__ import annotations

import pytest
from tests.jstage.upstream import Upstream, service

from readingroom.core.clock import FakeClock
from readingroom.jstage.fake import canned

pytestmark = pytest.mark.anyio


async def test_a_doi_without_an_issue_part_is_looked_up_by_journal_and_volume():
    body = canned("issue.xml").replace(b"10.99999/rrkiyo.12.1_21", b"10.99999/rrkiyo.12.21")
    up = Upstream(FakeClock(), script=lambda params: (200, {}, body))
    env = await service(up).get_article_by_doi("10.99999/rrkiyo.12.21")
    assert env.error is None and env.items[0]["doi"] == "10.99999/rrkiyo.12.21"
    assert up.seen[0].params == {"service": "3", "cdjournal": "rrkiyo", "vol": "12",
                                 "count": "100", "start": "1"}


async def test_a_doi_j_stage_does_not_hold_is_not_found_not_an_empty_success():
    up = Upstream(FakeClock())
    data = (await service(up).get_article_by_doi("10.99999/rrkiyo.12.1_500")).to_data()
    assert data["error"]["code"] == "NOT_FOUND" and "result" not in data
    assert "jstage_search_articles" in data["error"]["remediation"]
