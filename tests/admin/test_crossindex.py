"""The cross-index of the Japanese catalogues in ``readingroom receipts report``: receipts written
by ndl-mcp's, cinii-mcp's and jstage-mcp's services, read back topic by topic."""

from __future__ import annotations

import argparse

import anyio
import httpx

from readingroom.admin.crossindex import cross_index, cross_index_markdown
from readingroom.admin.receipts import cmd_report
from readingroom.core.clock import FakeClock
from readingroom.ndl.fake import canned as ndl_canned
from readingroom.ndl.service import NdlService
from readingroom.ndl.upstreams.ndl_search import NdlClient

from ..cinii.upstream import Upstream as CiniiUpstream
from ..cinii.upstream import service as cinii_service
from ..jstage.upstream import Upstream as JstageUpstream
from ..jstage.upstream import service as jstage_service


def _ledger(tmp_path):
    ledger = tmp_path / "receipts.jsonl"

    async def searches() -> None:
        ndl = NdlService(NdlClient("https://ndl.test/api/sru", clock=FakeClock(),
                                   transport=httpx.MockTransport(lambda r: httpx.Response(
                                       200, content=ndl_canned("books.xml")))),
                         env={"MCP_RECEIPT_LOG": str(ledger)})
        await ndl.search("ndl_search_books", ("iss-ndl-opac",), {"title": "漱石"})
        cinii = cinii_service(CiniiUpstream(FakeClock()), ledger)
        await cinii.search("cinii_search_articles", "articles", {"q": "漱石"})
        await cinii.search("cinii_search_books", "books", {"title": "読書室", "creator": "漱石"})
        limited = cinii_service(CiniiUpstream(
            FakeClock(), script=lambda path, params: (429, {}, b"")), ledger)
        await limited.search("cinii_search_all", "all", {"q": "ｿｳｾｷ"})
        await cinii.get_record("9990000000000000001")  # a fetch: no topic
        jstage = jstage_service(JstageUpstream(FakeClock()), ledger)
        await jstage.search_articles({"article": "読書室"})

    anyio.run(searches)
    return ledger


def test_topics_list_every_catalogue_searched_and_not_searched(tmp_path, capsys):
    ledger = _ledger(tmp_path)
    from readingroom.core.ledger import iter_receipts

    receipts = [line for _, line in iter_receipts(ledger)]
    topics = {t.term: t for t in cross_index(receipts)}
    assert list(topics) == ["漱石", "読書室", "ｿｳｾｷ"]
    soseki = topics["漱石"]
    assert sorted(soseki.searches) == ["cinii-mcp", "ndl-mcp"]
    assert [s.field for s in soseki.searches["cinii-mcp"]] == ["q", "creator"]
    assert soseki.searches["cinii-mcp"][1].others == ("title 読書室",)
    assert topics["ｿｳｾｷ"].searches["cinii-mcp"][0].total is None

    text = cross_index_markdown(receipts)
    assert "### “漱石”" in text and "| J-STAGE | not searched | — | — |" in text
    assert "unknown (RATE_LIMITED)" in text and "0 (" not in text
    assert "“漱石” was searched in NDL Search once (title; results: 1,234), CiNii Research " \
           "twice (q, creator; results: 1,234; 2); it was not searched in J-STAGE." in text

    args = argparse.Namespace(file=ledger, since=None, format="md", out=None)
    assert cmd_report(args) == 0
    report = capsys.readouterr().out
    assert report.index("| Receipt |") < report.index("## The Japanese catalogues")


def test_no_japanese_catalogue_no_section():
    assert cross_index_markdown([{"server": "literature-search-mcp", "normalized_terms": [
        {"field": "query", "term": "whales", "index": "q", "match": "partial"}]}]) == ""


def test_cells_show_hidden_characters_and_no_table_breaking_pipe():
    text = cross_index_markdown([{"server": "cinii-mcp", "operation": "cinii_search_all",
                                  "total": 3, "outcome": "ok", "normalized_terms": [
                                      {"field": "q", "term": "a|b\u202e", "index": "q",
                                       "match": "partial"}]}])
    assert "a\\|b\\u202e" in text and "\u202e" not in text
