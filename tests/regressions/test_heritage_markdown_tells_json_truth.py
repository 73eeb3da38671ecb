"""Regression (issue 17 §8): the default Markdown told less than the JSON, on loopback.

* A ``set_spec`` search whose query filtered out every record of the page read "0 results"
  with no word that only one page had been filtered (the JSON's ``page_filter`` note).
* ``heritage_get_publication`` showed title, date and link only: the renderer read
  ``creator``, items carry ``creators`` (and contributors, publishers, subjects, notes).
* ``heritage_list_nb_collections`` tagged every set ``[None]`` and showed neither its group
  nor its metadata prefix.
* A cross-search with one lane loosened and one exact said ``match: exact`` at the top.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.heritage.loopback import json_answer, on_loopback, xml_answer

from readingroom.heritage.fake import canned

pytestmark = pytest.mark.anyio


async def test_page_filter_that_removed_everything_says_so():
    async with on_loopback() as h:
        data, text, error = await h.call("heritage_search_helveticat", {
            "set_spec": "swissbook", "query": "Nirgendwo"})
    assert not error and data["items"] == [] and "page_filter" in data["data"]
    assert data["data"]["page_filter"]["note"] in text
    assert "Page filter, not a search" in text and "total unknown" in text


async def test_publication_shows_creators_contributors_publisher_subjects_notes(samples: Path):
    real = (samples / "heritage" / "helveticat_oai_getrecord_marc21.xml").read_bytes()
    async with on_loopback() as h:
        h.script(lambda prefix, _p, params, _b: xml_answer(real) if prefix == "oai" and
                 params.get("identifier", "").endswith("991016034239703976") else None)
        _, text, error = await h.call("heritage_get_publication",
                                      {"identifier": "991016034239703976"})
        _, canned_text, _ = await h.call("heritage_get_publication",
                                         {"identifier": "991090000000103976"})
    assert not error
    assert "creators: Freie Schule Aussersihl (aut; GND 1086951719)" in text
    assert "contributors: Freie Evangelische Volksschule Aussersihl" in text
    assert "publishers: Die Freie Schule in Aussersihl" in text
    assert "Enthält auch Jubiläumsschrift" in text and "places: Zürich" in text
    assert "subjects: Schulwesen" in canned_text


async def test_collections_show_group_and_prefix_not_none():
    async with on_loopback() as h:
        _, text, error = await h.call("heritage_list_nb_collections", {})
    assert not error and "[None]" not in text
    assert "(set_spec `RFN`)" in text and "metadata prefix: oai_dc" in text
    assert "group: web archive" in text and "metadata prefix: marc21" in text


async def test_cross_search_with_a_loosened_lane_is_fuzzy_at_the_top():
    def script(prefix: str, path: str, params: dict[str, str], _body: str):
        if prefix == "ckan" and path == "package_search":
            return json_answer_bytes(canned("snm_packages.json"))  # SNM: exact hits
        return None  # SIKART "Probe zzz" is empty, then "Probe" (loosened) has hits

    async with on_loopback() as h:
        h.script(script)
        data, text, error = await h.call("heritage_cross_search", {
            "query": "Probe zzz", "sources": ["sik_isea", "snm"]})
    lanes = data["data"]["meta"]["per_source"]
    assert not error and lanes["sik_isea"]["match_type"] == "fuzzy"
    assert lanes["snm"]["match_type"] == "exact"
    assert data["result"]["match_type"] == "fuzzy"
    assert "match: fuzzy" in text and "[SIK-ISEA] ok" in text


def json_answer_bytes(body: bytes):
    """A canned JSON body as a scripted answer."""
    status, headers, _ = json_answer({})
    return status, headers, body
