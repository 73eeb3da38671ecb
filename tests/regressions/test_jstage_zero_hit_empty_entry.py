"""J-STAGE answers zero hits with one empty ``<entry/>`` (jstage-mcp's notes). The original
threw away every entry without a title and a DOI to be rid of it — and so silently dropped real
records that lack both. Now an empty entry is no record, and an entry with content but no
title or DOI is kept (``title_missing``) and counted."""

from __future__ import annotations

import pytest
from tests.jstage.upstream import Upstream, service

from readingroom.core.clock import FakeClock
from readingroom.jstage.fake import canned

pytestmark = pytest.mark.anyio


async def test_the_empty_entry_of_a_zero_hit_is_no_record():
    up = Upstream(FakeClock())
    env = await service(up).search_articles({"article": "__none__"})
    assert env.error is None and env.result is not None
    assert (env.result.total, env.result.returned, env.items) == (0, 0, [])


async def test_an_entry_without_title_and_doi_is_kept_and_counted():
    body = canned("issue.xml")
    start = body.find(b"<entry>")
    for tag in (b"article_title", b"title", b"prism:doi"):
        at = body.find(b"<" + tag + b">", start)
        end = body.find(b"</" + tag + b">", at) + len(tag) + 3
        body = body[:at] + body[end:]
    up = Upstream(FakeClock(), script=lambda params: (200, {}, body))
    env = await service(up).search_articles({"cdjournal": "rrkiyo"})
    assert env.result is not None and env.result.returned == 2 == len(env.items)
    assert env.items[0]["title_missing"] is True and "doi" not in env.items[0]
    assert env.items[0]["authors_ja"] == ["読書 太郎", "閲覧 花子"]
