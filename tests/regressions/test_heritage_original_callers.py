"""Regression (issue 17 §9): the original's callers were refused.

* Every tool of the original took one ``params`` object (the seed: "Input Schema: params");
  ``{"params": {...}}`` was ``INVALID_ARGUMENT … Extra inputs are not permitted``. Now it is
  read as the flat form, with the same result.
* A region-only artist search and listing every SNM dataset (no query) worked in the
  original and were refused; they work again.
* The memory search's ``date_from: "1900-01-01"`` (the original's form) was refused; it works,
  and swapped dates are refused before anything is sent.
* A Memobase id with the ``mbr:`` prefix its records carry was fetched as
  ``/record/mbr%3A…`` and not found; the prefix is stripped, as the original did.
On loopback.
"""

from __future__ import annotations

import pytest
from tests.heritage.loopback import on_loopback

from readingroom.heritage.selftest import CALLS

pytestmark = pytest.mark.anyio


async def test_the_wrapped_params_form_gives_the_flat_result():
    async with on_loopback() as h:
        for name, args in CALLS.items():
            flat, _, flat_error = await h.call(name, {**args, "response_format": "json"})
            wrapped, _, error = await h.call(name, {"params": {**args,
                                                               "response_format": "json"}})
            assert error is flat_error is False, (name, wrapped.get("error"))
            assert wrapped["items"] == flat["items"], name
            assert wrapped.get("query") == flat.get("query"), name
        mixed, _, error = await h.call("heritage_search_artists", {
            "params": {"query": "Probe"}, "limit": 3})
    assert error and mixed["error"]["code"] == "INVALID_ARGUMENT"  # params plus more: refused


async def test_region_only_artists_and_every_museum_dataset():
    async with on_loopback() as h:
        region, _, error = await h.call("heritage_search_artists", {"region": "Bern"})
        assert not error and region["items"]
        sent = h.fake.requests("ckan")[-1].params
        assert sent["q"] == "Bern"
        h.fake.clear()
        every, text, error = await h.call("heritage_search_museum_datasets", {})
        sent = h.fake.requests("ckan")[-1].params
        nothing, _, refused = await h.call("heritage_search_artists", {})
    assert not error and every["items"] and "q" not in sent
    assert sent["fq"] == "organization:schweizerisches-nationalmuseum-snm"
    assert "every dataset" in text
    assert refused and nothing["error"]["code"] == "INVALID_INPUT"


async def test_memory_dates_as_the_original_sent_them_and_swapped_dates_refused():
    async with on_loopback() as h:
        env, _, error = await h.call("heritage_search_memory", {
            "query": "Probe", "date_from": "1900-01-01", "date_to": "1930-12-31"})
        assert not error and env["data"]["meta"]["clientside_filters"]["date_from"] == \
            "1900-01-01"
        assert all(int(str(i["date"])[:4]) <= 1930 for i in env["items"] if i.get("date"))
        sent_before = len(h.fake.log)
        swapped, _, error = await h.call("heritage_search_memory", {
            "query": "Probe", "date_from": "1950-01-01", "date_to": "1900"})
        assert error and swapped["error"]["code"] == "INVALID_INPUT"
        assert "after date_to" in swapped["error"]["message"]
        assert len(h.fake.log) == sent_before


async def test_memobase_ids_with_the_mbr_prefix():
    async with on_loopback() as h:
        env, _, error = await h.call("heritage_get_memory_item", {
            "collection": "memobase", "item_id": "mbr:tst-001-1"})
        path = h.fake.requests("memobase")[-1].path
    assert not error and env["items"][0]["id"] == "tst-001-1"
    assert path == "record/tst-001-1"
