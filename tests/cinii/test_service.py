"""CiniiService over a scripted CiNii on a fake clock: the courtesy, the application id, every
failure shape, the receipts."""

from __future__ import annotations

import json

import anyio
import pytest

from readingroom.cinii import REGISTRATION_URL
from readingroom.cinii.service import CiniiService
from readingroom.core.clock import FakeClock

from ..core.keyrings import MemoryKeyring, using
from .upstream import APPID, Upstream, service

pytestmark = pytest.mark.anyio


def _lines(ledger) -> list[dict]:
    return [json.loads(x) for x in ledger.read_text("utf-8").splitlines()]


async def test_a_search_answers_the_envelope_and_a_receipt(tmp_path):
    ledger = tmp_path / "r.jsonl"
    up = Upstream(FakeClock())
    svc = service(up, ledger)
    env = await svc.search("cinii_search_articles", "articles", {"q": "漱石", "from": "1990"},
                           count=2)
    data = env.to_data()
    assert data["searched_for"]["terms"][0] == {"field": "q", "term": "漱石", "index": "q",
                                               "match": "partial", "script": "han"}
    assert data["searched_for"]["terms"][1]["match"] == "range"
    assert data["result"] == {"total": 1234, "returned": 2, "start": 1, "has_more": True,
                              "next_start": 3, "breadth": "very_broad", "match_type": "partial"}
    assert [i["crid"] for i in data["items"]] == ["9990000000000000001", "9990000000000000002"]
    assert all(i["matched_in"] == ["q"] for i in data["items"])
    assert data["query"]["params"]["appid"] == "[REDACTED]"
    assert data["sources"][0]["status"] == "ok" and data["attribution"]
    sent = up.seen[0].params
    assert (sent["appid"], sent["format"], sent["sortorder"], sent["count"]) == (
        APPID, "json", "4", "2")
    line = _lines(ledger)[-1]
    assert line["outcome"] == "ok" and line["total"] == 1234
    assert line["result_ids"] == [i["crid"] for i in data["items"]]
    assert line["params"]["appid"] == "[REDACTED]" and APPID not in ledger.read_text("utf-8")
    assert line["normalized_terms"][0]["term"] == "漱石"


async def test_without_an_appid_nothing_is_sent_and_the_answer_is_not_configured(tmp_path):
    ledger = tmp_path / "r.jsonl"
    up = Upstream(FakeClock())
    svc = service(up, ledger, appid=None)
    for env in (await svc.search("cinii_search_books", "books", {"q": "漱石"}),
                await svc.get_record("9990000000000000001")):
        data = env.to_data()
        assert data["error"]["code"] == "NOT_CONFIGURED" and "result" not in data
        assert REGISTRATION_URL in data["error"]["remediation"]
        assert "readingroom secrets set CINII_APPID" in data["error"]["remediation"]
        assert data["sources"][0]["status"] == "not_configured" and data["attribution"]
    assert up.seen == [] and not ledger.exists()


async def test_the_appid_comes_from_the_keyring_when_the_environment_has_none():
    up = Upstream(FakeClock())
    keyring = MemoryKeyring()
    keyring.set_password("readingroom", "CINII_APPID", "from-the-keyring-1")
    import httpx

    with using(keyring):
        svc = CiniiService(base_url="https://cinii.test", transport=httpx.MockTransport(up),
                           clock=up.clock, env={})
        env = await svc.search("cinii_search_all", "all", {"q": "漱石"})
    assert env.error is None and up.seen[0].params["appid"] == "from-the-keyring-1"
    with using(keyring):
        svc = CiniiService(base_url="https://cinii.test", transport=httpx.MockTransport(up),
                           clock=up.clock, env={"CINII_APPID": "from-the-environment"})
        await svc.search("cinii_search_all", "all", {"q": "漱石"})
    assert up.seen[-1].params["appid"] == "from-the-environment"


async def test_concurrent_calls_are_serial_with_a_floor_from_the_end_of_each_exchange():
    clock = FakeClock()
    up = Upstream(clock, work=0.4)
    svc = service(up)
    async with anyio.create_task_group() as tg:
        for q in ("一", "二", "三", "四"):
            tg.start_soon(svc.search, "cinii_search_articles", "articles", {"q": q})
        tg.start_soon(svc.get_record, "9990000000000000001")
    assert len(up.seen) == 5
    for before, after in zip(up.seen, up.seen[1:], strict=False):
        assert after.started >= before.ended + 1.0  # from the end, not the start
    assert {s.path for s in up.seen} >= {"/opensearch/v2/articles",
                                          "/crid/9990000000000000001.json"}


async def test_429_is_retried_once_after_retry_after_then_rate_limited(tmp_path):
    ledger = tmp_path / "r.jsonl"
    clock = FakeClock()
    up = Upstream(clock, script=lambda path, params: (429, {"Retry-After": "7"}, b""))
    env = await service(up, ledger).search("cinii_search_articles", "articles", {"q": "漱石"})
    data = env.to_data()
    assert data["error"]["code"] == "RATE_LIMITED" and "result" not in data
    assert "UNKNOWN, not empty" in data["error"]["remediation"]
    assert data["sources"][0]["status"] == "rate_limited"
    assert len(up.seen) == 2 and 7.0 in clock.sleeps
    assert _lines(ledger)[-1]["outcome"] == "RATE_LIMITED" and _lines(ledger)[-1]["total"] is None


async def test_a_503_is_retried_once_and_a_second_one_is_a_transport_error():
    answers = [(503, {}, b"down"), (503, {}, b"down")]
    up = Upstream(FakeClock(), script=lambda path, params: answers.pop(0) if answers else None)
    svc = service(up)
    down = await svc.search("cinii_search_articles", "articles", {"q": "漱石"})
    assert down.error is not None and down.error.code == "TRANSPORT_ERROR" and len(up.seen) == 2
    answers.append((503, {}, b"down"))
    recovered = await svc.search("cinii_search_articles", "articles", {"q": "漱石"})
    assert recovered.error is None and recovered.result is not None


async def test_a_refused_appid_names_the_setting_never_the_value():
    up = Upstream(FakeClock(), script=lambda path, params: (403, {}, APPID.encode()))
    env = await service(up).search("cinii_search_articles", "articles", {"q": "漱石"})
    data = env.to_data()
    assert data["error"]["code"] == "API_ERROR" and "CINII_APPID" in data["error"]["message"]
    assert REGISTRATION_URL in data["error"]["remediation"]
    assert APPID not in json.dumps(data, ensure_ascii=False)


async def test_an_unknown_crid_is_not_found_pointing_at_the_searches(tmp_path):
    ledger = tmp_path / "r.jsonl"
    up = Upstream(FakeClock())
    svc = service(up, ledger)
    env = await svc.get_record("https://cir.nii.ac.jp/crid/1234567890123456789")
    data = env.to_data()
    assert data["error"]["code"] == "NOT_FOUND" and "cinii_search_all" in data["error"][
        "remediation"]
    assert data["sources"][0]["status"] == "empty" and "searched_for" not in data
    assert _lines(ledger)[-1]["outcome"] == "NOT_FOUND"
    found = await svc.get_record("9990000000000000011")
    assert found.error is None and found.items[0]["record_type"] == "book"
    assert found.searched_for is None


@pytest.mark.parametrize("crid", ["abc", "https://evil.example/crid/123", "12 34", ""])
async def test_a_malformed_crid_sends_nothing(crid):
    up = Upstream(FakeClock())
    env = await service(up).get_record(crid)
    assert env.error is not None and env.error.code == "INVALID_INPUT" and up.seen == []


async def test_zero_hits_are_an_empty_success():
    up = Upstream(FakeClock(), script=lambda path, params: (
        200, {}, json.dumps({"@context": {}, "opensearch:totalResults": 0}).encode()))
    env = await service(up).search("cinii_search_all", "all", {"q": "存在しない語"})
    data = env.to_data()
    assert data["result"]["total"] == 0 and data["result"]["breadth"] == "none"
    assert data["sources"][0]["status"] == "empty"
    assert "ZERO_RESULT" in {d["code"] for d in data["diagnostics"]}


async def test_count_is_capped_at_100_and_start_pages():
    up = Upstream(FakeClock())
    env = await service(up).search("cinii_search_articles", "articles", {"q": "漱石"},
                                   count=500, start=101)
    assert up.seen[0].params["count"] == "100" and up.seen[0].params["start"] == "101"
    assert "COUNT_CAPPED" in {d.code for d in env.diagnostics}
    assert env.result is not None and env.result.start == 101


@pytest.mark.parametrize(("fields", "sort", "kind", "field"), [
    ({}, "relevance", "articles", None),
    ({"from": "1990"}, "relevance", "articles", None),
    ({"q": "漱石", "from": "1990-01"}, "relevance", "articles", "from"),
    ({"q": "漱石", "from": "2001", "until": "1999"}, "relevance", "articles", "from"),
    ({"q": "漱石", "until": "200013"}, "relevance", "articles", "until"),
    ({"isbn": "12345"}, "relevance", "books", "isbn"),
    ({"q": "漱石"}, "citations", "books", "sortorder"),
])
async def test_input_refusals_send_nothing(fields, sort, kind, field):
    up = Upstream(FakeClock())
    env = await service(up).search("t", kind, fields, sortorder=sort)
    assert env.error is not None and env.error.code == "INVALID_INPUT", env.error
    assert env.error.details.get("field") == field and up.seen == []


async def test_a_latin_term_warns_and_an_isbn_does_not():
    up = Upstream(FakeClock())
    svc = service(up)
    latin = await svc.search("cinii_search_articles", "articles", {"q": "Soseki"})
    isbn = await svc.search("cinii_search_books", "books", {"isbn": "978-4-99999-999-1"})
    assert "SCRIPT_LATIN_QUERY" in {d.code for d in latin.diagnostics}
    assert "SCRIPT_LATIN_QUERY" not in {d.code for d in isbn.diagnostics}
    assert up.seen[-1].params["isbn"] == "9784999999991"


async def test_an_appid_the_upstream_echoes_back_is_redacted_everywhere(tmp_path):
    ledger = tmp_path / "r.jsonl"

    def echo(path, params):
        body = {"opensearch:totalResults": 1, "items": [{
            "@id": "https://cir.nii.ac.jp/crid/9990000000000000001", "dc:type": "Article",
            "title": f"key={params['appid']}", "dc:creator": [params["appid"]]}]}
        return 200, {}, json.dumps(body).encode()

    up = Upstream(FakeClock(), script=echo)
    env = await service(up, ledger).search("cinii_search_articles", "articles", {"q": "漱石"})
    text = json.dumps(env.to_data(), ensure_ascii=False)
    assert APPID not in text and "[REDACTED]" in text
    assert APPID not in ledger.read_text("utf-8")
