"""cinii-mcp's pure readers on every real CiNii sample (``<samples>/cinii``) and on the canned
answers: counts, items, language tags, record types, NDL cross-links, malformed containers."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from readingroom.cinii.upstreams import crid, opensearch
from readingroom.cinii.upstreams.jsonld import choose, related_links, texts

from ..core.samples import no_expectation, require_sample, sample_params

# file -> how it is read and what it holds, read by hand from the file itself.
EXPECTED: dict[str, dict[str, Any]] = {
    "jp-lit-mcp_cinii-research_opensearch-articles_search-response.json": {
        "reader": "search", "total": 3903, "start": 1,
        "items": [{"crid": "1573387450265380480", "record_type": "article",
                   "title_missing": True, "creators": ["夏目漱石"], "naid": "10019109559",
                   "publication_name": "行人", "year": 1965}],
    },
    "jp-lit-mcp_cinii-research_crid-book-record-response.json": {
        "reader": "record", "crid": "1971993809689508364", "record_type": "book",
        "title": "我是猫", "title_language": "zh", "ncid": "BA83739643",
        "isbn": ["7806572856"], "publisher": "译林出版社", "place": "南京", "year": 2001,
    },
    # A CiNii *Books* holdings answer: read as a search, its one item (a library) has no CRID,
    # so a search answering like this is unreadable, not a result.
    "jp-lit-mcp_cinii-books_opensearch-holder-response.json": {
        "reader": "search", "total": 1, "start": None, "unreadable": 1,
    },
}


def _canned(name: str) -> Any:
    return json.loads(resources.files("readingroom.cinii").joinpath("canned", name)
                      .read_text("utf-8"))


@pytest.mark.parametrize("sample", sample_params("cinii", "*.json"))
def test_every_real_sample_is_read_as_recorded(sample: Path | None) -> None:
    path = require_sample(sample, "cinii")
    expected = EXPECTED.get(path.name)
    if expected is None:
        no_expectation(path, "EXPECTED in tests/cinii/test_parse.py")
    payload = json.loads(path.read_bytes())
    if expected["reader"] == "record":
        page = crid.parse(payload)
        assert page.problem is None and page.item is not None
        item = page.item
        assert (item.crid, item.record_type, item.title) == (
            expected["crid"], expected["record_type"], expected["title"])
        assert item.titles[0].language == expected["title_language"]
        assert item.ncid == expected["ncid"] and item.isbn == expected["isbn"]
        assert item.publishers[0].value == expected["publisher"]
        assert item.publication_place == expected["place"] and item.year == expected["year"]
        assert [c.researcher_crid for c in item.creators] == [
            "1981712336528661376", "1981712336528661377"]
        return
    page = opensearch.parse(payload, "articles")
    assert page.problem is None
    assert (page.total, page.start) == (expected["total"], expected["start"])
    readable = [r.item for r in page.items if r.item is not None]
    assert len(page.items) - len(readable) == expected.get("unreadable", 0)
    for item, want in zip(readable, expected.get("items", []), strict=True):
        assert item.crid == want["crid"] and item.record_type == want["record_type"]
        assert item.title_missing is want["title_missing"] and item.title is None
        assert [c.name for c in item.creators] == want["creators"]
        assert item.naid == want["naid"] and item.publication_name == want["publication_name"]
        assert item.year == want["year"]
        # The channel's @id (the request URL) is never an item's link.
        assert item.url == f"https://cir.nii.ac.jp/crid/{want['crid']}"


def test_plain_strings_take_the_documents_language_tag():
    payload = _canned("articles.json")
    page = opensearch.parse(payload, "articles")
    first = page.items[0].item
    assert first is not None
    assert first.title_ja == first.title and first.titles[0].language == "ja"
    # The same value with the default changed: the tag follows the document, not the script.
    payload["@context"]["@language"] = "en"
    english = opensearch.parse(payload, "articles").items[0].item
    assert english is not None and english.title_en == first.title and english.title_ja is None


def test_tagged_values_are_chosen_by_their_tags():
    found = texts([{"@language": "en", "@value": "日本語で書かれた英語タグ"},
                   {"@language": "ja", "@value": "Latin letters tagged ja"},
                   {"@language": "ja-Kana", "@value": "ヨミ"},
                   {"@value": "untagged"}])
    shown, ja, en, reading = choose(found)
    assert (ja, en, reading) == ("Latin letters tagged ja", "日本語で書かれた英語タグ", "ヨミ")
    assert shown == ja


def test_the_canned_article_record_reads_every_part():
    page = crid.parse(_canned("crid_article.json"))
    item = page.item
    assert page.problem is None and item is not None
    assert item.record_type == "article" and item.title_reading and item.title_en
    assert item.publication_name == "読書室紀要" and item.pages == "1-20"
    assert item.issn == ["9999-0001", "9999-0002"] and item.doi == "10.99999/rrkiyo.12.1_1"
    assert item.creators[0].name_en == "DOKUSHO Taro"
    assert item.descriptions and item.data_sources == ["JALC", "CIA", "NDL"]
    # The journal's NDL id (publicationIdentifier) is not the article's.
    assert {(r.id_type, r.id) for r in item.related} == {
        ("ndl_bib_id", "900000001"), ("ndl_search_id", "R000000004-I900000001")}
    search_id = next(r for r in item.related if r.id_type == "ndl_search_id")
    assert search_id.tool == "ndl_get_record" and search_id.server == "ndl-mcp"
    assert search_id.arguments == {"ndl_search_id": "R000000004-I900000001"}
    assert search_id.url == "https://ndlsearch.ndl.go.jp/books/R000000004-I900000001"


def test_related_links_take_only_exact_shapes():
    links = related_links({"NDL_BIB_ID": ["123", "12a; drop table"],
                           "URI": ["http://id.ndl.go.jp/bib/456", "https://evil.example/bib/7"]},
                          ["https://ndlsearch.ndl.go.jp/books/R100000002-I000001185032"],
                          ["oai:iss.ndl.go.jp:R100000002-I000001185032-00", "oai:other:1"])
    assert [(r.id_type, r.id) for r in links] == [
        ("ndl_bib_id", "123"), ("ndl_bib_id", "456"),
        ("ndl_search_id", "R100000002-I000001185032")]


def test_search_all_keeps_each_records_own_type():
    page = opensearch.parse(_canned("all.json"), "all")
    assert [r.item.record_type for r in page.items if r.item] == [
        "article", "book", "project", "data"]
    # A record that names no type: its endpoint's type, or unknown in a cross-type search.
    payload = _canned("books.json")
    del payload["items"][0]["dc:type"]
    assert opensearch.parse(payload, "books").items[0].item.record_type == "book"
    assert opensearch.parse(payload, "all").items[0].item.record_type == "unknown"


@pytest.mark.parametrize(("change", "problem"), [
    (lambda p: p.update(items={"a": 1}), "items is a dict"),
    (lambda p: p.pop("opensearch:totalResults"), "totalResults is missing"),
    (lambda p: p.update({"opensearch:totalResults": "many"}), "not a count"),
    (lambda p: p.update({"opensearch:totalResults": True}), "not a count"),
])
def test_wrong_containers_and_counts_are_problems_not_zeros(change, problem):
    payload = _canned("articles.json")
    change(payload)
    page = opensearch.parse(payload, "articles")
    assert page.problem is not None and problem in page.problem and page.items == []


def test_an_item_that_is_not_an_object_is_unreadable_not_dropped():
    payload = _canned("articles.json")
    payload["items"][1] = "oops"
    page = opensearch.parse(payload, "articles")
    assert len(page.items) == 3 and page.items[1].item is None
    assert "str" in (page.items[1].problem or "")


def test_decode_refuses_html_and_floods_without_quoting_the_body():
    from readingroom.core.errors import CoreError

    with pytest.raises(CoreError) as html:
        opensearch.decode(b"<!DOCTYPE html><html>secret</html>", 1000)
    assert html.value.details["reason"] == "html" and "secret" not in html.value.message
    with pytest.raises(CoreError) as flood:
        opensearch.decode(b"[" + b"[]," * 5000 + b"[]]", 1000)
    assert flood.value.details["reason"] == "too_many_values"
