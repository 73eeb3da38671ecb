"""The Markdown default tells the same truth as the JSON (issue 17 §8).

Every field of the envelope that changes what a reader concludes — the error, the status of
every source, the counts (an unknown total says so), the match type and a loosening, a page
filter or client-side filters, every diagnostic, how to continue, each item's licence — is in
the Markdown text of the same answer. Checked over every tool and the answers that once lost
something in Markdown, on loopback.
"""

from __future__ import annotations

from typing import Any

import pytest

from readingroom.heritage.fake import ACTIVE, INACTIVE, canned
from readingroom.heritage.selftest import CALLS

from .loopback import on_loopback, xml_answer

pytestmark = pytest.mark.anyio


def missing_in_markdown(env: dict[str, Any], text: str) -> list[str]:
    """What the envelope says and its Markdown text does not."""
    lost: list[str] = []

    def need(what: str, present: bool) -> None:
        if not present:
            lost.append(what)

    if env.get("error"):
        need("error code", env["error"]["code"] in text)
        need("error message", env["error"]["message"] in text)
        need("remediation", not env["error"].get("remediation")
             or env["error"]["remediation"] in text)
    result = env.get("result")
    if result:
        need("returned", f"{result['returned']}" in text)
        total = result.get("total")
        need("total", f"of {total}" in text if total is not None else "total unknown" in text)
        need("match type", f"match: {result.get('match_type') or 'n/a'}" in text)
        need("has_more", not result.get("has_more") or "More results are available" in text)
    for source in env.get("sources", []):
        need(f"status of {source['id']}", f"({source['status']})" in text)
        need(f"licence of {source['id']}", source["licence"] in text)
    for d in env.get("diagnostics", []):
        need(f"diagnostic {d['code']}", d["message"] in text)
    data = env.get("data") or {}
    if data.get("page_filter"):
        need("page filter", data["page_filter"]["note"] in text)
    if data.get("loosened"):
        need("loosening", data["loosened"]["to"] in text)
    if data.get("next_cursor"):
        need("cursor", data["next_cursor"] in text)
    if data.get("paging_stopped"):
        need("paging stopped", data["paging_stopped"] in text)
    meta = data.get("meta") or {}
    for key, value in (meta.get("clientside_filters") or {}).items():
        need(f"filter {key}", f"{key}={value}" in text)
    for name, lane in (meta.get("per_source") or {}).items():
        need(f"per-source status of {name}", f" {lane['status']}" in text)
        if lane.get("error"):
            need(f"per-source error of {name}", lane["error"]["code"] in text)
    for item in env.get("items", []):
        licence = item.get("licence")
        if isinstance(licence, dict):
            licence = licence.get("name")
        if licence:
            need(f"licence of item {item.get('id')}", str(licence)[:150] in text)
    return lost


SRU_NO_TOTAL = canned("helveticat_sru.xml").replace(
    b"<numberOfRecords>3</numberOfRecords>", b"")
assert canned("helveticat_sru.xml") != SRU_NO_TOTAL

SCENARIOS: list[tuple[str, dict[str, Any]]] = [
    *CALLS.items(),
    ("heritage_search_artists", {"query": "Probe zzz", "limit": 1}),
    ("heritage_search_artists", {"region": "Bern"}),
    ("heritage_search_museum_datasets", {}),
    ("heritage_search_helveticat", {"set_spec": "swissbook", "query": "Nirgendwo"}),
    ("heritage_search_helveticat", {"set_spec": "swissbook", "limit": 1}),
    ("heritage_search_helveticat", {"query": "Probe zzz"}),
    ("heritage_search_helveticat", {"query": "unknown total"}),
    ("heritage_search_helveticat", {"query": "Schule", "from_date": "2020-01-01"}),
    ("heritage_search_memory", {"query": "Probe", "date_from": "1900-01-01",
                                "date_to": 1930, "media_type": "Foto"}),
    ("heritage_search_memory", {"query": "Probe", "date_from": 1950, "date_to": 1900}),
    ("heritage_cross_search", {"query": "Probe zzz"}),
    ("heritage_get_artist", {"artist_id": "1"}),
    ("heritage_get_memory_item", {"collection": "dodis", "item_id": "G1"}),
    ("heritage_browse_collection", {"resource_id": INACTIVE}),
    ("heritage_browse_collection", {"resource_id": ACTIVE, "limit": 1}),
]


async def test_every_field_that_changes_a_conclusion_is_in_the_markdown():
    def script(prefix: str, _path: str, params: dict[str, str], _body: str):
        if prefix == "sru" and "unknown total" in params.get("query", ""):
            return xml_answer(SRU_NO_TOTAL)
        return None

    checked = 0
    async with on_loopback() as h:
        h.script(script)
        for name, args in SCENARIOS:
            env, text, _error = await h.call(name, args)
            assert missing_in_markdown(env, text) == [], (name, args)
            checked += 1
        h.fake.modes["ckan"] = "broken"
        env, text, _error = await h.call("heritage_cross_search", {"query": "Probe"})
        assert {s["status"] for s in env["sources"]} == {"error", "ok"}
        assert missing_in_markdown(env, text) == []
    assert checked == len(SCENARIOS)


def test_the_checker_catches_a_dropped_field():
    env = {"result": {"returned": 0, "total": None, "match_type": "none", "has_more": False},
           "sources": [], "diagnostics": [], "items": [],
           "data": {"page_filter": {"note": "only this page"}}}
    assert missing_in_markdown(env, "0 results (total unknown) (match: none).") == [
        "page filter"]
    assert missing_in_markdown(env, "0 results (match: none). only this page") == ["total"]
