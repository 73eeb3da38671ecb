"""cinii-mcp's original split ja and en by the script of the text (japan-apis.md §3.2): an
English title set in kanji-heavy text, or a romanised Japanese one, landed in the wrong
language. Now a value's language is its JSON-LD tag (its own ``@language``, else the document's
default), never a guess from its letters."""

from __future__ import annotations

import json

import pytest
from tests.cinii.upstream import Upstream, service

from readingroom.cinii.fake import canned
from readingroom.core.clock import FakeClock

pytestmark = pytest.mark.anyio


async def test_titles_and_names_follow_their_language_tags():
    record = json.loads(canned("crid_article.json"))
    record["dc:title"] = [{"@language": "en", "@value": "日中比較研究"},
                          {"@language": "ja", "@value": "Soseki to London"}]
    record["creator"][0]["foaf:name"] = [{"@language": "en", "@value": "読書 太郎"}]
    body = json.dumps(record, ensure_ascii=False).encode()
    up = Upstream(FakeClock(), script=lambda path, params: (200, {}, body))
    item = (await service(up).get_record("9990000000000000001")).items[0]
    assert (item["title_ja"], item["title_en"]) == ("Soseki to London", "日中比較研究")
    assert item["creators"][0]["name_en"] == "読書 太郎" and "name_ja" not in item["creators"][0]


async def test_a_plain_string_takes_the_documents_default_language():
    search = json.loads(canned("articles.json"))
    search["@context"]["@language"] = "en"
    body = json.dumps(search, ensure_ascii=False).encode()
    up = Upstream(FakeClock(), script=lambda path, params: (200, {}, body))
    items = (await service(up).search("cinii_search_articles", "articles", {"q": "x"})).items
    assert items[0]["title_en"] == "読書室紀要における漱石研究の回顧"
    assert "title_ja" not in items[0]
