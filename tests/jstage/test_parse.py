"""jstage-mcp's pure readers on every real J-STAGE sample (``<samples>/jstage``) and the canned
answers: statuses, counts, bilingual fields kept apart, the empty entry, hostile XML."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from readingroom.core.errors import CoreError
from readingroom.jstage.upstreams import articles, issues
from readingroom.jstage.upstreams.feed import STATUSES, StatusKind

from ..core.samples import no_expectation, require_sample, sample_params

# file -> (reader, status, total, start, entries, facts of the first entry), read by hand.
EXPECTED: dict[str, tuple[str, str, int, int, int, dict[str, Any]]] = {
    "jp-lit-mcp_jstage_service3_search-response.xml": (
        "articles", "0", 143, 1, 1,
        {"title_ja": "夏目漱石の熊本時代", "title_en": None, "authors_ja": ["大村 喜吉"],
         "authors_en": [], "journal_en": "Historical English Studies in Japan",
         "cdjournal": "jeigakushi1969", "volume": "1973", "number": "5", "pages": "81-90",
         "year": 1972, "doi": "10.5024/jeigakushi.1973.81", "issn": "0386-9490",
         "eissn": "1883-9282"}),
    "pyjstage_service3_search.xml": (
        "articles", "0", 677, 1, 3,
        {"title_en": "Schizophrenia from viewpoint of the evolutionary psychiatry",
         "title_ja": "進化論の見地からみる統合失調症", "authors_en": ["Satoshi Kato"],
         "authors_ja": ["加藤 敏"], "doi": "10.11249/jsbpjjpp.23.1_53", "year": 2012}),
    "pyjstage_service2_list.xml": (
        "issues", "0", 1, 1, 1,
        {"label_en": "Vol. 39 (1996) , No. 1", "journal_ja": "情報管理",
         "cdjournal": "johokanri", "volume": "39", "number": "1", "year": 1996,
         "issn": "0021-7298", "publisher": None,
         "articles": {"cdjournal": "johokanri", "vol": "39", "no": "1"}}),
}


def _canned(name: str) -> bytes:
    return resources.files("readingroom.jstage").joinpath("canned", name).read_bytes()


@pytest.mark.parametrize("sample", sample_params("jstage", "*.xml"))
def test_every_real_sample_is_read_as_recorded(sample: Path | None) -> None:
    path = require_sample(sample, "jstage")
    expected = EXPECTED.get(path.name)
    if expected is None:
        no_expectation(path, "EXPECTED in tests/jstage/test_parse.py")
    reader, status, total, start, count, facts = expected
    feed = (articles if reader == "articles" else issues).parse(path.read_bytes())
    assert (feed.status, feed.total, feed.start, feed.problem) == (status, total, start, None)
    assert len(feed.entries) == count and feed.empty_entries == 0
    assert all(e.item is not None for e in feed.entries)
    first = feed.entries[0].item
    assert first is not None
    for key, value in facts.items():
        assert getattr(first, key) == value, key


def test_english_and_japanese_author_lists_are_never_paired(samples: Path):
    # The real answer's third article names two Japanese authors and one English one.
    path = samples / "jstage" / "pyjstage_service3_search.xml"
    third = articles.parse(path.read_bytes()).entries[2].item
    assert third is not None
    assert third.authors_ja == ["高橋 栄", "内山 真"] and third.authors_en == ["Sakae Takahashi"]


def test_a_zero_hit_answers_one_empty_entry_which_is_no_record():
    feed = articles.parse(_canned("zero.xml"))
    assert (feed.status, feed.total, feed.entries, feed.empty_entries) == ("0", 0, [], 1)


def test_an_entry_without_title_or_doi_is_kept_and_flagged():
    body = _canned("articles.xml")
    for tag in (b"article_title", b"title", b"prism:doi"):  # the first entry's, each time
        start = body.find(b"<" + tag + b">", body.find(b"<entry>"))
        end = body.find(b"</" + tag + b">", start) + len(tag) + 3
        body = body[:start] + body[end:]
    feed = articles.parse(body)
    untitled = feed.entries[0].item
    assert len(feed.entries) == 3 and untitled is not None
    assert untitled.title is None and untitled.title_missing and untitled.doi is None
    assert untitled.journal_ja == "読書室紀要"


@pytest.mark.parametrize(("name", "status"), [
    ("err001.xml", "ERR_001"), ("err003.xml", "ERR_003"), ("err004.xml", "ERR_004"),
    ("sys_err009.xml", "SYS_ERR_009"), ("warn002.xml", "WARN_002"),
])
def test_status_answers_are_read_with_their_status(name, status):
    feed = articles.parse(_canned(name))
    assert feed.status == status and feed.entries == [] and feed.problem is None
    assert status in STATUSES


def test_the_status_table_reads_every_documented_code_by_meaning():
    assert STATUSES["ERR_001"].kind is StatusKind.empty
    assert STATUSES["ERR_003"].kind is StatusKind.rate_limited
    assert STATUSES["WARN_002"].kind is StatusKind.broad
    assert STATUSES["SYS_ERR_009"].kind is StatusKind.upstream
    inputs = [c for c, s in STATUSES.items() if s.kind is StatusKind.input]
    assert inputs == ["ERR_004", "ERR_005", "ERR_006", "ERR_007", "ERR_008", "ERR_010",
                      "ERR_011", "ERR_012", "ERR_013", "ERR_014"]
    assert [STATUSES[c].field for c in ("ERR_006", "ERR_007", "ERR_008", "ERR_011", "ERR_013",
                                        "ERR_014")] == [
        "pubyearfrom/pubyearto", "count", "issn", "material/issn/cdjournal",
        "material/issn/cdjournal", "sortflg"]


def test_a_count_that_is_not_a_number_is_a_problem():
    body = _canned("articles.xml").replace(b">143<", b">many<")
    assert articles.parse(body).problem == "opensearch:totalResults is not a count"


def test_not_a_feed_html_and_doctype_are_refused():
    assert articles.parse(b"<rss><channel/></rss>").problem == "the answer is not an Atom feed"
    with pytest.raises(CoreError) as html:
        articles.parse(b"<!DOCTYPE html><html><body>down</body></html>")
    assert html.value.details["reason"] == "html"
    with pytest.raises(CoreError) as xxe:
        articles.parse(b'<?xml version="1.0"?><!DOCTYPE feed [<!ENTITY x SYSTEM '
                       b'"file:///etc/passwd">]><feed xmlns="http://www.w3.org/2005/Atom">'
                       b'&x;</feed>')
    assert xxe.value.code == "API_ERROR" and "passwd" not in xxe.value.message
