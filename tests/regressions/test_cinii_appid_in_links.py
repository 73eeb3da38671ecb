"""The CiNii application id must never appear in a link shown to users (japan-apis.md §4), and
CiNii names requests in its answers: the OpenSearch channel's ``@id`` and ``link`` are the
request URL, application id included. The original built an item's link from the answer's own
``@id``/``link`` and passed text through. Now item links are built from the CRID alone, the
channel's links are never read, and an id echoed anywhere in an answer is redacted before the
answer, its receipt or a log line sees it."""

from __future__ import annotations

import json

import pytest
from tests.cinii.upstream import APPID, Upstream, service

from readingroom.core.clock import FakeClock

pytestmark = pytest.mark.anyio


def _echoing(path, params):
    url = f"https://cir.nii.ac.jp/crid/9990000000000000001?appid={params['appid']}"
    answer = {"@id": f"https://cir.nii.ac.jp/opensearch/v2/all?q=x&appid={params['appid']}",
              "link": {"@id": url}, "opensearch:totalResults": 1,
              "items": [{"@id": url, "link": {"@id": url}, "rdfs:seeAlso": {"@id": url},
                         "dc:type": "Article", "title": f"echo {params['appid']}",
                         "dc:identifier": [{"@type": "cir:URI", "@value": url}]}]}
    return 200, {}, json.dumps(answer).encode()


async def test_no_link_or_text_of_an_answer_carries_the_appid(tmp_path):
    ledger = tmp_path / "receipts.jsonl"
    up = Upstream(FakeClock(), script=_echoing)
    data = (await service(up, ledger).search("cinii_search_all", "all", {"q": "漱石"})).to_data()
    assert up.seen[0].params["appid"] == APPID
    item = data["items"][0]
    assert item["url"] == "https://cir.nii.ac.jp/crid/9990000000000000001"
    text = json.dumps(data, ensure_ascii=False)
    assert APPID not in text and "[REDACTED]" in text
    assert APPID not in ledger.read_text("utf-8")


async def test_the_canned_channel_names_the_request_and_nothing_shows_it(tmp_path):
    ledger = tmp_path / "receipts.jsonl"
    up = Upstream(FakeClock())  # the channel's @id is the request URL, appid included
    svc = service(up, ledger)
    for data in ((await svc.search("cinii_search_all", "all", {"q": "漱石"})).to_data(),
                 (await svc.get_record("9990000000000000001")).to_data()):
        assert APPID not in json.dumps(data, ensure_ascii=False)
        for item in data["items"]:
            assert item["url"] == f"https://cir.nii.ac.jp/crid/{item['crid']}"
    assert APPID not in ledger.read_text("utf-8")
