"""The Helveticat service over a recording MockTransport: paths, guards, paging, errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from readingroom.heritage.catalogue import SRU_ORDER_NOTE

from .helpers import FakeHelveticat, hand, service_for

pytestmark = pytest.mark.anyio


VOLKSSCHULE = "helveticat_sru_dc_volksschule_zuerich_4hits.xml"


def _real(samples: Path, name: str) -> bytes:
    return (samples / "heritage" / name).read_bytes()


# ------------------------------------------------------------------ guards: nothing sent
@pytest.mark.parametrize("kwargs", [
    {"query": "Volksschule", "from_date": "2025-01-01"},
    {"query": "Volksschule", "until_date": "2025-01-01"},
    {},
    {"query": "Volksschule", "index": "dc.title"},
    {"set_spec": "xrara", "from_date": "2025"},
    {"set_spec": "xrara", "from_date": "2025-02-30"},
    {"set_spec": "xrara", "from_date": "2025-03-01", "until_date": "2025-01-01"},
    {"set_spec": "bad set!"},
    {"query": "x", "cursor": "not-a-cursor"},
])
async def test_guards_refuse_without_a_request(kwargs):
    fake = FakeHelveticat(lambda r: b"")
    env = await service_for(fake).search(**kwargs)
    assert env.error is not None and env.error.code == "INVALID_INPUT"
    assert fake.requests == []
    assert env.sources[0].status == "skipped" and env.attribution


async def test_date_without_set_says_change_date():
    env = await service_for(FakeHelveticat(lambda r: b"")).search(
        query="Keller", from_date="1890-01-01")
    assert "change dates" in env.error.message and "not publication years" in env.error.message


# ------------------------------------------------------------------ SRU path
async def test_sru_search_exact_with_total_and_title_order(samples):
    fake = FakeHelveticat(lambda r: _real(samples, VOLKSSCHULE))
    env = await service_for(fake).search(query="Volksschule Zürich", limit=5)
    sent = fake.params()
    assert sent["query"] == 'alma.all_for_ui="Volksschule Zürich"'
    assert sent["version"] == "1.2" and sent["recordSchema"] == "dc"
    assert sent["maximumRecords"] == "5" and sent["startRecord"] == "1"
    assert "sortBy" not in sent["query"]
    assert env.error is None
    assert (env.result.total, env.result.returned, env.result.match_type) == (4, 4, "exact")
    assert env.result.has_more is False and "next_cursor" not in env.data
    assert env.data["order"] == "title" and env.data["order_note"] == SRU_ORDER_NOTE
    assert env.items[0]["id"] == "oai:helveticat.nb.admin.ch:991016034239703976"
    assert env.items[0]["path"] == "sru"
    assert env.receipt is not None and env.sources[0].status == "ok"


async def test_limit_above_50_is_capped_and_said(samples):
    fake = FakeHelveticat(lambda r: _real(samples, VOLKSSCHULE))
    env = await service_for(fake).search(query="Volksschule Zürich", limit=200)
    assert fake.params()["maximumRecords"] == "50"
    assert any(d.code == "COUNT_CAPPED" and d.field == "limit" for d in env.diagnostics)


async def test_zero_hits_then_exactly_one_loosened_retry(samples):
    answers = [hand("sru_zero_records.xml"),
               _real(samples, "helveticat_sru_dc_volksschule_zuerich_4hits.xml")]
    fake = FakeHelveticat(lambda r: answers[len(fake.requests) - 1])
    env = await service_for(fake).search(query="Volksschule Zürich")
    assert [p.params["query"] for p in (r.url for r in fake.requests)] == [
        'alma.all_for_ui="Volksschule Zürich"', 'alma.all_for_ui all "Volksschule Zürich"']
    assert env.result.match_type == "fuzzy" and env.result.total == 4
    assert env.data["loosened"]["to"] == 'alma.all_for_ui all "Volksschule Zürich"'
    assert env.searched_for.matching == "all_words_anywhere"


async def test_zero_after_the_retry_is_none_and_no_third_request():
    fake = FakeHelveticat(lambda r: hand("sru_zero_records.xml"))
    env = await service_for(fake).search(query="Xyzzy Plugh")
    assert len(fake.requests) == 2
    assert env.error is None and env.result.total == 0 and env.result.match_type == "none"
    assert any(d.code == "ZERO_RESULT" for d in env.diagnostics)


async def test_single_word_zero_is_not_loosened():
    fake = FakeHelveticat(lambda r: hand("sru_zero_records.xml"))
    env = await service_for(fake).search(query="Xyzzy")
    assert len(fake.requests) == 1 and env.result.match_type == "none"


async def test_sru_diagnostic_is_an_error_not_an_empty_result():
    fake = FakeHelveticat(lambda r: hand("sru_diagnostic_invalid_query.xml"))
    env = await service_for(fake).search(query="a (b")
    assert len(fake.requests) == 1  # no fuzzy retry after an error
    assert env.error.code == "API_ERROR" and "not an empty result" in env.error.message
    assert env.error.details["details"] == "200812"
    assert env.result is None and env.sources[0].status == "error"
    assert env.receipt is not None


async def test_sru_cursor_continues_across_two_pages(samples):
    pages = [_real(samples, "helveticat_sru_dc_sammlung_3of12675.xml"),
             _real(samples, "helveticat_sru_dc_volksschule_zuerich_4hits.xml")]
    fake = FakeHelveticat(lambda r: pages[len(fake.requests) - 1])
    service = service_for(fake)
    first = await service.search(query="Sammlung", limit=3)
    assert first.result.has_more and first.result.next_start == 4
    cursor = first.data["next_cursor"]
    second = await service.search(query="Sammlung", limit=3, cursor=cursor)
    assert fake.params(0)["startRecord"] == "1" and fake.params(1)["startRecord"] == "4"
    assert fake.params(1)["query"] == fake.params(0)["query"] == 'alma.all_for_ui="Sammlung"'
    assert second.result.start == 4 and second.error is None


async def test_fuzzy_search_stays_fuzzy_on_page_two(samples):
    answers = [hand("sru_zero_records.xml"),
               _real(samples, "helveticat_sru_dc_sammlung_3of12675.xml"),
               _real(samples, "helveticat_sru_dc_volksschule_zuerich_4hits.xml")]
    fake = FakeHelveticat(lambda r: answers[len(fake.requests) - 1])
    service = service_for(fake)
    first = await service.search(query="Freie Schule", limit=3)
    second = await service.search(query="Freie Schule", limit=3,
                                  cursor=first.data["next_cursor"])
    assert fake.params(2)["query"] == 'alma.all_for_ui all "Freie Schule"'
    assert fake.params(2)["startRecord"] == "4"
    assert second.result.match_type == "fuzzy" and len(fake.requests) == 3


async def test_sru_cursor_of_another_query_is_refused(samples):
    fake = FakeHelveticat(lambda r: _real(samples, "helveticat_sru_dc_sammlung_3of12675.xml"))
    service = service_for(fake)
    first = await service.search(query="Sammlung", limit=3)
    env = await service.search(query="Keller", cursor=first.data["next_cursor"])
    assert env.error.code == "INVALID_INPUT" and len(fake.requests) == 1


async def test_transport_failure_is_unknown_not_empty():
    fake = FakeHelveticat(lambda r: (404, b"nope"))
    env = await service_for(fake).search(query="Keller")
    assert env.error.code == "API_ERROR" and env.result is None


async def test_plain_http_endpoint_is_refused_before_sending():
    from readingroom.core.clock import FakeClock
    from readingroom.heritage.catalogue import Catalogue
    from readingroom.heritage.upstreams.helveticat import HelveticatClient

    fake = FakeHelveticat(lambda r: b"")
    client = HelveticatClient(sru_url="http://helveticat.nb.admin.ch/view/sru/x",
                              transport=fake.transport, clock=FakeClock())
    env = await Catalogue(client, env={}).search(query="Keller")
    assert env.error.code == "INVALID_INPUT" and fake.requests == []


# ------------------------------------------------------------------ OAI path
def _oai_pages(request):
    params = request.url.params
    if params.get("resumptionToken") == "example-token-page-2":
        return hand("oai_listrecords_marc21_last_page.xml")
    assert params["verb"] == "ListRecords" and params["set"] == "xrara"
    return hand("oai_listrecords_marc21_page1_token.xml")


async def test_oai_collection_two_pages_with_the_token():
    fake = FakeHelveticat(_oai_pages)
    service = service_for(fake)
    first = await service.search(set_spec="xrara", from_date="2025-08-01", limit=50)
    assert fake.params(0) == {"verb": "ListRecords", "metadataPrefix": "marc21", "set": "xrara",
                              "from": "2025-08-01"}
    assert [i["mms_id"] for i in first.items] == ["990000000000000001", "990000000000000003"]
    assert first.data["page"]["deleted_skipped"] == 1
    assert first.result.has_more and first.result.total == 5
    assert first.data["order"] == "repository"
    assert first.items[0]["datestamp"] == "2025-08-21T14:39:56Z"
    assert first.items[0]["licence"]["name"] == "Public Domain Mark 1.0"
    second = await service.search(set_spec="xrara", cursor=first.data["next_cursor"])
    assert fake.params(1) == {"verb": "ListRecords", "resumptionToken": "example-token-page-2"}
    assert [i["mms_id"] for i in second.items] == ["990000000000000004", "990000000000000005"]
    assert second.result.has_more is False and "next_cursor" not in second.data


async def test_oai_limit_below_the_page_continues_within_the_page():
    fake = FakeHelveticat(_oai_pages)
    service = service_for(fake)
    first = await service.search(set_spec="xrara", limit=1)
    assert [i["mms_id"] for i in first.items] == ["990000000000000001"]
    second = await service.search(set_spec="xrara", limit=1, cursor=first.data["next_cursor"])
    assert fake.params(1)["set"] == "xrara"  # the same page asked again, read further
    assert [i["mms_id"] for i in second.items] == ["990000000000000003"]
    third = await service.search(set_spec="xrara", limit=1, cursor=second.data["next_cursor"])
    assert fake.params(2) == {"verb": "ListRecords", "resumptionToken": "example-token-page-2"}
    assert [i["mms_id"] for i in third.items] == ["990000000000000004"]


async def test_query_with_set_filters_only_the_page_and_says_so():
    fake = FakeHelveticat(_oai_pages)
    env = await service_for(fake).search(set_spec="xrara", query="gletscher")
    assert "query" not in fake.params(0)
    assert [i["mms_id"] for i in env.items] == ["990000000000000003"]
    assert env.result.total is None and env.result.match_type is None
    assert "collection itself was not searched" in env.data["page_filter"]["note"]
    assert env.searched_for.matching == "page_filter"


async def test_per_set_prefix_rfn_is_oai_dc():
    fake = FakeHelveticat(lambda r: hand("oai_error_no_records_in_window.xml"))
    await service_for(fake).search(set_spec="RFN")
    assert fake.params()["metadataPrefix"] == "oai_dc"


async def test_no_records_match_two_meanings_told_apart():
    empty = await service_for(FakeHelveticat(
        lambda r: hand("oai_error_no_records_in_window.xml"))).search(
        set_spec="xrara", from_date="2030-01-01")
    assert empty.error is None and empty.result.total == 0
    assert empty.result.match_type == "none"
    wrong = await service_for(FakeHelveticat(
        lambda r: hand("oai_error_no_publishing_profile.xml"))).search(set_spec="xrara")
    assert wrong.error.code == "API_ERROR" and wrong.result is None
    assert wrong.error.details["meaning"] == "wrong_metadata_prefix"
    assert "not an empty collection" in wrong.error.message


async def test_bad_resumption_token_is_an_error():
    fake = FakeHelveticat(lambda r: hand("oai_error_bad_resumption_token.xml"))
    service = service_for(fake)
    from readingroom.heritage.catalogue_paging import OaiCursor, encode_cursor

    cursor = encode_cursor(OaiCursor(set_spec="xrara", prefix="marc21", skip=0, token="old"))
    env = await service.search(set_spec="xrara", cursor=cursor)
    assert env.error.code == "API_ERROR" and "without cursor" in env.error.remediation


async def test_oai_cursor_with_another_set_is_refused():
    from readingroom.heritage.catalogue_paging import OaiCursor, encode_cursor

    fake = FakeHelveticat(_oai_pages)
    cursor = encode_cursor(OaiCursor(set_spec="xrara", prefix="marc21", skip=0, token="t"))
    env = await service_for(fake).search(set_spec="maps", cursor=cursor)
    assert env.error.code == "INVALID_INPUT" and fake.requests == []


# ------------------------------------------------------------------ GetRecord, ListSets
async def test_get_publication_from_either_path_id(samples):
    fake = FakeHelveticat(lambda r: _real(samples, "helveticat_oai_getrecord_marc21.xml"))
    service = service_for(fake)
    for ident in ("oai:helveticat.nb.admin.ch:991016034239703976", "991016034239703976",
                  "alma:41SNL_51_INST/bibs/991016034239703976"):
        env = await service.get_publication(ident)
        assert env.error is None and env.result.total == 1
        assert env.items[0]["permalink"] == "https://permalink.snl.ch/bib/sz001909121"
        assert fake.params() == {"verb": "GetRecord", "metadataPrefix": "marc21",
                                 "identifier": "oai:helveticat.nb.admin.ch:991016034239703976"}


async def test_get_publication_bad_identifier_refused():
    fake = FakeHelveticat(lambda r: b"")
    env = await service_for(fake).get_publication("Volksschule")
    assert env.error.code == "INVALID_INPUT" and fake.requests == []


async def test_list_collections(samples):
    fake = FakeHelveticat(lambda r: _real(samples, "helveticat_oai_listsets_68sets.xml"))
    env = await service_for(fake).list_collections()
    assert fake.params() == {"verb": "ListSets"}
    assert env.result.total == 68 and len(env.items) == 68
    by_spec = {i["set_spec"]: i for i in env.items}
    assert by_spec["RFN2"]["metadata_prefix"] == "oai_qdc"
    assert by_spec["swissbook"]["metadata_prefix"] == "marc21"
    assert "typo" in by_spec["xwas-ag"]["note"]


async def test_receipt_written_to_the_ledger(samples, tmp_path):
    fake = FakeHelveticat(lambda r: _real(samples, VOLKSSCHULE))
    env = await service_for(fake, tmp_path).search(query="Volksschule Zürich")
    assert env.receipt.deposited is True
    assert env.receipt.result_ids[0] == "oai:helveticat.nb.admin.ch:991016034239703976"


async def test_oai_error_with_http_422_is_an_error_not_empty(samples):
    # Zenodo sends its OAI errors with HTTP 422; the body of a non-2xx answer is not read.
    body = _real(samples, "zenodo_oai_error_noRecordsMatch_listrecords.xml")
    env = await service_for(FakeHelveticat(lambda r: (422, body))).search(set_spec="xrara")
    assert env.error.code == "API_ERROR" and env.error.details["status"] == 422
    assert env.result is None
