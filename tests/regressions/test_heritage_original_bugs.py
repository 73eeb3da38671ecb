"""The original's bugs outside Helveticat, each caught by a test.

* SIKART licence: the original's source said CC BY; the rows say CC-BY-NC-SA.
* SNM organisation slug: without ``-snm`` CKAN answered 0 datasets and no error.
* Not found from a detail tool was a plain string, not an envelope (now the suite's rule: a
  ``NOT_FOUND`` error envelope, credited, naming the search tool).
* A CKAN answer without its list field passed as an empty result.
"""

from __future__ import annotations

import httpx
import pytest

from readingroom.core.clock import FakeClock
from readingroom.heritage.service import HeritageService
from readingroom.heritage.sources import SIKART, SNM_ORGANIZATION
from readingroom.heritage.upstreams import ckan

pytestmark = pytest.mark.anyio


def test_sikart_licence_is_not_cc_by():
    assert SIKART.licence.startswith("CC BY-NC-SA")
    item = ckan.artist_item({"HAUPTNR": "1", "NUTZUNGSLIZENZ": "Nutzungslizenz: CC-BY-NC-SA"})
    assert item["licence"] == "CC BY-NC-SA"


def test_snm_organisation_slug_has_the_snm_suffix():
    assert SNM_ORGANIZATION == "schweizerisches-nationalmuseum-snm"


async def test_not_found_is_an_envelope_not_a_string():
    empty = {"success": True, "result": {"records": [], "total": 0}}
    transport = httpx.MockTransport(lambda r: httpx.Response(200, json=empty))
    service = HeritageService(env={}, transport=transport, clock=FakeClock())
    env = await service.get_artist("123", arguments={"artist_id": "123"})
    assert env.error is not None and env.error.code == "NOT_FOUND" and env.items == []
    assert "heritage_search_artists" in (env.error.remediation or "")
    assert env.sources[0].status == "empty" and env.attribution


def test_ckan_without_records_is_an_error_not_empty():
    with pytest.raises(Exception, match="records"):
        ckan.parse_datastore({"success": True, "result": {}})
