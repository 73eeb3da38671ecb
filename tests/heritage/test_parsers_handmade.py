"""Shapes no real sample shows, written by hand from the documented formats (HAND-MADE).

Unverified against the live services: a CKAN ``success: false`` body, a Dodis ``{results}``
answer, a Dodis document carrying full-text fields, a Memobase answer without
``hydra:member``.
"""

from __future__ import annotations

import pytest

from readingroom.core.errors import Code, CoreError
from readingroom.heritage.upstreams import ckan, dodis, memobase


def test_ckan_failure_and_missing_fields_are_errors_not_empties():
    with pytest.raises(CoreError) as missing:
        ckan.parse_datastore({"success": True, "result": {"total": 0}})
    assert missing.value.code is Code.API_ERROR and "records" in missing.value.message
    with pytest.raises(CoreError) as nf:
        ckan.checked_result({"success": False, "error": {"__type": "Not Found Error",
                                                          "message": "Resource not found"}}, None)
    assert nf.value.code is Code.NOT_FOUND
    page, _ = ckan.parse_datastore({"success": True, "result": {"records": [], "total": 0}})
    assert (page.rows, page.total, page.has_more) == ([], 0, False)


def test_dodis_results_object_and_fulltext_never_returned():
    page = dodis.parse_query({"results": [{"id": "dodis-1", "name": "x"}]})
    assert [dodis.hit_item(h)["id"] for h in page.rows] == ["dodis-1"]
    with pytest.raises(CoreError):
        dodis.parse_query({"hits": []})
    doc = {"id": "dodis-48123", "title_s": "Aide-mémoire", "type": "Document",
           "doc_att_file_content": ["SECRET TEXT"], "doc_att_xmlTranscription_ids": ["t1"],
           "doc_fulltext": "also text"}
    item = dodis.parse_full(doc)
    assert "SECRET TEXT" not in repr(item) and "also text" not in repr(item)
    assert item["withheld_fields"] == ["doc_att_file_content", "doc_att_xmlTranscription_ids",
                                       "doc_fulltext"]
    assert item["title"] == "Aide-mémoire"


def test_memobase_without_members_is_an_error():
    with pytest.raises(CoreError):
        memobase.parse_search({"hydra:totalItems": 3})


def test_loosenings():
    assert ckan.longest_term("Alberto Giacometti Stampa") == "Giacometti"
    assert ckan.longest_term("Giacometti") is None
    assert ckan.prefix_or_query("Waffen Uniform") == "Waffen* OR Uniform*"
