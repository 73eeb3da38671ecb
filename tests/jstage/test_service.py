"""JstageService over a scripted J-STAGE on a fake clock: statuses by meaning, the courtesy, the
DOI look-up, the volume list, the receipts."""

from __future__ import annotations

import json

import anyio
import pytest

from readingroom.core.clock import FakeClock
from readingroom.jstage.fake import canned
from readingroom.jstage.service import split_doi

from .upstream import Upstream, service

pytestmark = pytest.mark.anyio


def _lines(ledger) -> list[dict]:
    return [json.loads(x) for x in ledger.read_text("utf-8").splitlines()]


async def test_a_search_answers_the_envelope_and_a_receipt(tmp_path):
    ledger = tmp_path / "r.jsonl"
    up = Upstream(FakeClock())
    env = await service(up, ledger).search_articles(
        {"article": "漱石", "pubyearfrom": 1990}, count=2)
    data = env.to_data()
    assert data["searched_for"]["matching"] == "metadata_conjunction"
    assert [t["field"] for t in data["searched_for"]["terms"]] == ["article", "pubyearfrom"]
    assert data["result"]["total"] == 143 and data["result"]["next_start"] == 3
    assert [i["doi"] for i in data["items"]] == ["10.99999/rrkiyo.12.1_1",
                                                 "10.99999/rrkiyo.12.1_21"]
    assert data["items"][0]["authors_en"] == ["Taro Dokusho"]
    assert data["items"][0]["matched_in"] == ["article"]
    assert any("Powered by J-STAGE" in a for a in data["attribution"])
    assert up.seen[0].params == {"service": "3", "article": "漱石", "pubyearfrom": "1990",
                                 "count": "2", "start": "1"}
    line = _lines(ledger)[-1]
    assert (line["outcome"], line["total"], line["providers"]) == ("ok", 143,
                                                                  ["jstage:articles"])
    assert line["result_ids"] == ["10.99999/rrkiyo.12.1_1", "10.99999/rrkiyo.12.1_21"]


@pytest.mark.parametrize(("word", "code", "field"), [
    ("__err003__", "RATE_LIMITED", None),
    ("__err004__", "API_ERROR", None),
    ("__sys009__", "API_ERROR", None),
    ("__warn002__", "API_ERROR", None),
    ("__truncated__", "API_ERROR", None),
    ("__html__", "API_ERROR", None),
])
async def test_status_and_body_failures_are_typed_never_empty(tmp_path, word, code, field):
    ledger = tmp_path / "r.jsonl"
    up = Upstream(FakeClock())
    data = (await service(up, ledger).search_articles({"article": word})).to_data()
    assert data["error"]["code"] == code and "result" not in data and data["items"] == []
    assert _lines(ledger)[-1]["outcome"] == code and _lines(ledger)[-1]["total"] is None
    assert len(up.seen) == 1  # ERR_003 is not retried: J-STAGE asked for less, not again


async def test_err001_and_a_zero_count_are_empty_successes():
    up = Upstream(FakeClock())
    svc = service(up)
    for word in ("__err001__", "__none__"):
        data = (await svc.search_articles({"article": word})).to_data()
        assert data["result"]["total"] == 0 and data["items"] == []
        assert data["sources"][0]["status"] == "empty"
        assert "ZERO_RESULT" in {d["code"] for d in data["diagnostics"]}


async def test_an_input_error_names_its_field():
    body = canned("err004.xml").replace(b"ERR_004", b"ERR_008")
    up = Upstream(FakeClock(), script=lambda params: (200, {}, body))
    data = (await service(up).search_articles({"article": "漱石"})).to_data()
    assert data["error"]["code"] == "API_ERROR"
    assert data["error"]["details"]["field"] == "issn"
    assert data["error"]["details"]["status"] == "ERR_008"
    assert any(d["field"] == "issn" for d in data["diagnostics"])


async def test_warn002_with_records_is_a_breadth_warning():
    body = canned("articles.xml").replace(b"<status>0</status>", b"<status>WARN_002</status>")
    up = Upstream(FakeClock(), script=lambda params: (200, {}, body))
    env = await service(up).search_articles({"text": "研究"})
    assert env.error is None and env.result is not None and env.result.total == 143
    assert any("WARN_002" in d.message for d in env.diagnostics)
    assert env.searched_for is not None and env.searched_for.matching == "full_text_conjunction"


async def test_http_429_is_retried_once_then_rate_limited():
    clock = FakeClock()
    up = Upstream(clock, script=lambda params: (429, {"Retry-After": "3"}, b""))
    env = await service(up).search_articles({"article": "漱石"})
    assert env.error is not None and env.error.code == "RATE_LIMITED"
    assert len(up.seen) == 2 and 3.0 in clock.sleeps


async def test_concurrent_calls_of_every_tool_are_serial_with_a_floor_from_the_end():
    up = Upstream(FakeClock(), work=0.6)
    svc = service(up)
    async with anyio.create_task_group() as tg:
        tg.start_soon(svc.search_articles, {"article": "一"})
        tg.start_soon(svc.search_articles, {"author": "二"})
        tg.start_soon(svc.get_article_by_doi, "10.99999/rrkiyo.12.1_1")
        tg.start_soon(svc.list_issues, {"cdjournal": "rrkiyo"})
    assert len(up.seen) == 4
    for before, after in zip(up.seen, up.seen[1:], strict=False):
        assert after.started >= before.ended + 1.0


def test_dois_split_into_the_lookup_j_stage_allows():
    assert split_doi("https://doi.org/10.11249/jsbpjjpp.23.1_53") == (
        "10.11249/jsbpjjpp.23.1_53", {"cdjournal": "jsbpjjpp", "vol": "23", "no": "1"})
    assert split_doi("10.4264/numa.70.125") == ("10.4264/numa.70.125",
                                                {"cdjournal": "numa", "vol": "70"})
    assert split_doi("doi:10.1248/cpb.c20-00001") == ("10.1248/cpb.c20-00001",
                                                      {"cdjournal": "cpb"})
    assert split_doi("10.1000/123") is None and split_doi("not a doi") is None


async def test_a_doi_is_found_in_its_issue_and_an_unknown_one_is_not_found(tmp_path):
    ledger = tmp_path / "r.jsonl"
    up = Upstream(FakeClock())
    svc = service(up, ledger)
    found = (await svc.get_article_by_doi("10.99999/RRKIYO.12.1_21")).to_data()
    assert found["items"][0]["title"] == "読書室の目録とその利用"
    assert "searched_for" not in found and found["result"]["total"] == 1
    assert up.seen[-1].params["cdjournal"] == "rrkiyo" and up.seen[-1].params["vol"] == "12"
    missing = (await svc.get_article_by_doi("10.99999/rrkiyo.12.1_99")).to_data()
    assert missing["error"]["code"] == "NOT_FOUND" and missing["error"]["details"]["checked"] == 2
    assert "jstage_search_articles" in missing["error"]["remediation"]
    assert missing["sources"][0]["status"] == "empty"
    nosuch = (await svc.get_article_by_doi("10.99999/nosuch.1.1_1")).to_data()
    assert nosuch["error"]["code"] == "NOT_FOUND"
    assert [x["outcome"] for x in _lines(ledger)] == ["ok", "NOT_FOUND", "NOT_FOUND"]


async def test_a_doi_lookup_reads_at_most_three_pages_then_says_unknown():
    big = canned("issue.xml").replace(b"<opensearch:totalResults>2<",
                                      b"<opensearch:totalResults>1000<")
    up = Upstream(FakeClock(), script=lambda params: (200, {}, big))
    data = (await service(up).get_article_by_doi("10.99999/rrkiyo.12.1_99")).to_data()
    assert data["error"]["code"] == "API_ERROR"
    assert data["error"]["details"]["reason"] == "lookup_window"
    assert [s.params["start"] for s in up.seen] == ["1", "101", "201"]


async def test_the_volume_list_is_an_envelope_with_a_receipt(tmp_path):
    ledger = tmp_path / "r.jsonl"
    up = Upstream(FakeClock())
    data = (await service(up, ledger).list_issues(
        {"cdjournal": "rrkiyo"}, volorder="descending")).to_data()
    assert data["operation"] == "jstage_list_issues" and data["result"]["total"] == 2
    assert data["items"][0]["articles"] == {"cdjournal": "rrkiyo", "vol": "12", "no": "1"}
    assert data["searched_for"]["terms"][0]["match"] == "exact"
    assert up.seen[0].params["service"] == "2" and up.seen[0].params["volorder"] == "2"
    assert _lines(ledger)[-1]["providers"] == ["jstage:volumes"]


@pytest.mark.parametrize(("call", "field"), [
    (lambda s: s.search_articles({}), None),
    (lambda s: s.search_articles({"pubyearfrom": 2000}), None),
    (lambda s: s.search_articles({"issn": "12345"}), "issn"),
    (lambda s: s.search_articles({"article": "x", "pubyearfrom": 2001, "pubyearto": 1999}),
     "pubyearfrom"),
    (lambda s: s.search_articles({"cdjournal": "a b"}), "cdjournal"),
    (lambda s: s.list_issues({"pubyearfrom": 2000}), None),
    (lambda s: s.get_article_by_doi("10.1/x"), "doi"),
])
async def test_input_refusals_send_nothing(call, field):
    up = Upstream(FakeClock())
    env = await call(service(up))
    assert env.error is not None and env.error.code == "INVALID_INPUT"
    assert env.error.details.get("field") == field and up.seen == []
    assert env.attribution


async def test_an_issn_without_hyphen_is_sent_in_j_stage_form():
    up = Upstream(FakeClock())
    await service(up).search_articles({"issn": "0386949x"})
    assert up.seen[0].params["issn"] == "0386-949X"
