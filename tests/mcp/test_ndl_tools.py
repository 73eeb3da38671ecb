"""ndl-mcp over an in-memory MCP session: tools, envelopes, every error path."""

from __future__ import annotations

import json

import httpx
import jsonschema
import pytest
from mcp.shared.exceptions import McpError
from mcp.types import INVALID_PARAMS

from readingroom.core.envelope import response_schema, tool_output_schema
from readingroom.core.verification import verify
from readingroom.ndl.models import NdlItem

from .harness import Upstream, xml

pytestmark = pytest.mark.anyio

SIX = {"ndl_search_books", "ndl_search_national_bibliography", "ndl_search_articles",
       "ndl_search_digital_open", "ndl_search_all", "ndl_get_record"}
VALIDATOR = jsonschema.Draft202012Validator(response_schema())


def envelope(result) -> dict:
    """The structured envelope, checked against the published schema and the text twin."""
    data = result.structuredContent
    assert data is not None
    VALIDATOR.validate(data)
    assert json.loads(result.content[0].text) == data
    assert data["attribution"], "credit on every response"
    return data


def codes(data: dict) -> set[str]:
    return {d["code"] for d in data.get("diagnostics", [])}


async def test_lists_six_fully_declared_tools(upstream, session_for):
    async with session_for(upstream) as s:
        tools = (await s.list_tools()).tools
    assert {t.name for t in tools} == SIX
    for t in tools:
        a = t.annotations
        assert t.title and a.title == t.title
        assert (a.readOnlyHint, a.destructiveHint, a.idempotentHint, a.openWorldHint) == (
            True, False, True, True)
        assert t.outputSchema == tool_output_schema("ndl-mcp", t.name)
        assert "$ref" not in json.dumps(t.inputSchema.get("properties", {}))  # flat
        assert len(t.description) > 200


async def test_search_books_returns_items_with_receipt_and_credit(upstream, session_for):
    async with session_for(upstream) as s:
        res = await s.call_tool("ndl_search_books", {"title": "吾輩は猫である"})
    data = envelope(res)
    assert not res.isError
    assert upstream.requests[0]["query"] == 'title="吾輩は猫である" AND dpid="iss-ndl-opac"'
    assert upstream.requests[0]["recordSchema"] == "dcndl"
    assert upstream.requests[0]["recordPacking"] == "xml"
    assert data["searched_for"]["terms"] == [{"field": "title", "term": "吾輩は猫である",
                                              "index": "title", "match": "partial",
                                              "script": "han_kana"}]
    assert data["result"]["returned"] == len(data["items"]) > 0
    assert all(i["matched_in"] == ["title"] for i in data["items"])
    for item in data["items"]:  # items keep the NdlItem model's shape (empty lists dropped)
        model = NdlItem.model_validate(item)
        assert model.model_dump(mode="json", exclude_defaults=True).items() <= item.items()
    assert data["receipt"]["deposited"] is False
    assert data["receipt"]["result_ids"] == [i["ndl_search_id"] for i in data["items"]]
    assert "RECEIPT_NOT_DEPOSITED" in codes(data)
    assert [src["id"] for src in data["sources"]] == ["iss-ndl-opac"]
    assert "PDL1.0" in data["attribution"][0]


async def test_articles_search_both_article_sets(upstream, session_for):
    async with session_for(upstream) as s:
        data = envelope(await s.call_tool("ndl_search_articles", {"creator": "夏目漱石"}))
    assert upstream.requests[0]["query"].endswith('dpid any "zassaku zassaku-online"')
    assert data["items"] and data["items"][0].get("journal")


@pytest.mark.parametrize("args,loc", [({"titel": "x"}, "titel"), ({"count": "many"}, "count"),
                                      ({"title": "x", "start": 0}, "start")])
async def test_bad_arguments_give_structured_invalid_argument(upstream, session_for, args, loc):
    async with session_for(upstream) as s:
        res = await s.call_tool("ndl_search_books", args)
    data = envelope(res)
    assert res.isError and data["error"]["code"] == "INVALID_ARGUMENT"
    assert [e["loc"] for e in data["error"]["details"]["errors"]] == [[loc]]
    assert upstream.requests == []


async def test_unknown_tool_is_a_jsonrpc_invalid_params_error(upstream, session_for):
    async with session_for(upstream) as s:
        with pytest.raises(McpError) as raised:
            await s.call_tool("ndl_search_everything", {})
    assert raised.value.error.code == INVALID_PARAMS
    assert raised.value.error.data["code"] == "UNKNOWN_TOOL"
    assert set(raised.value.error.data["available_tools"]) == SIX
    assert upstream.requests == []


async def test_empty_search_is_invalid_input_not_zero(upstream, session_for):
    async with session_for(upstream) as s:
        res = await s.call_tool("ndl_search_books", {"from_year": 1900})
    data = envelope(res)
    assert res.isError and data["error"]["code"] == "INVALID_INPUT"
    assert "result" not in data and upstream.requests == []


async def test_reserved_word_refused_before_sending(upstream, session_for):
    async with session_for(upstream) as s:
        res = await s.call_tool("ndl_search_books", {"title": "War and Peace"})
    data = envelope(res)
    assert data["error"]["code"] == "RESERVED_WORD_IN_QUERY"
    assert data["error"]["details"]["field"] == "title"
    assert upstream.requests == []


async def test_refused_dpid_sends_nothing(upstream, session_for):
    async with session_for(upstream) as s:
        res = await s.call_tool("ndl_search_all", {"title": "源氏物語",
                                                   "providers": ["zassaku", "ndl-dl"]})
    data = envelope(res)
    assert data["error"]["code"] == "PROVIDER_NOT_PERMITTED"
    assert data["error"]["details"]["refused"] == ["ndl-dl"]
    assert upstream.requests == []


async def test_search_all_subset(upstream, session_for):
    async with session_for(upstream) as s:
        data = envelope(await s.call_tool("ndl_search_all", {
            "title": "源氏物語", "providers": ["iss-ndl-opac", "ndl-dl-open"]}))
    assert upstream.requests[0]["query"].endswith('dpid any "iss-ndl-opac ndl-dl-open"')
    assert [s["id"] for s in data["sources"]] == ["iss-ndl-opac", "ndl-dl-open"]


async def test_latin_term_warns_but_identifiers_do_not(upstream, session_for):
    async with session_for(upstream) as s:
        latin = envelope(await s.call_tool("ndl_search_books", {"creator": "Natsume Soseki"}))
        isbn = envelope(await s.call_tool("ndl_search_books", {"isbn": "978-4-7649-0405-7",
                                                               "ndc": "913"}))
    assert "SCRIPT_LATIN_QUERY" in codes(latin)
    assert [d["field"] for d in latin["diagnostics"] if d["code"] == "SCRIPT_LATIN_QUERY"] == [
        "creator"]
    assert "SCRIPT_LATIN_QUERY" not in codes(isbn)


async def test_record_does_not_exist_is_a_successful_zero(session_for):
    up = Upstream(responder=lambda p, n: xml("no_records.xml"))
    async with session_for(up) as s:
        res = await s.call_tool("ndl_search_books", {"title": "存在しない書名"})
    data = envelope(res)
    assert not res.isError
    assert data["result"]["total"] == 0 and data["result"]["match_type"] == "none"
    assert data["result"]["breadth"] == "none"
    assert "ZERO_RESULT" in codes(data)
    assert data["sources"][0]["status"] == "empty"


async def test_illegal_query_syntax_is_api_error(session_for):
    up = Upstream(responder=lambda p, n: xml("query_syntax.xml"))
    async with session_for(up) as s:
        res = await s.call_tool("ndl_search_books", {"title": "x"})
    data = envelope(res)
    assert res.isError and data["error"]["code"] == "API_ERROR"
    assert "illegal query syntax" in data["error"]["message"]
    assert "result" not in data


def _rate_limited(retry_after: str | None):
    headers = {"Retry-After": retry_after} if retry_after is not None else {}
    return lambda p, n: httpx.Response(429, headers=headers)


@pytest.mark.parametrize("retry_after,waited", [("7", 7.0), (None, 10.0), ("3600", 30.0)])
async def test_429_buys_one_backoff_then_rate_limited(session_for, retry_after, waited):
    up = Upstream(responder=_rate_limited(retry_after))
    async with session_for(up) as s:
        res = await s.call_tool("ndl_search_books", {"title": "こころ"})
    data = envelope(res)
    assert res.isError and data["error"]["code"] == "RATE_LIMITED"
    assert "UNKNOWN" in data["error"]["remediation"]
    assert "result" not in data  # never "nothing found"
    assert len(up.requests) == 2
    assert up.started_at[1] - up.started_at[0] == pytest.approx(waited, abs=0.05)
    assert data["sources"][0]["status"] == "rate_limited"


async def test_429_then_success(session_for):
    up = Upstream(responder=lambda p, n: httpx.Response(429, headers={"Retry-After": "2"})
                  if n == 1 else xml("books.xml"))
    async with session_for(up) as s:
        res = await s.call_tool("ndl_search_books", {"title": "こころ"})
    assert not res.isError and envelope(res)["items"]


@pytest.mark.parametrize("responder,code", [
    (lambda p, n: httpx.Response(503, text="down"), "TRANSPORT_ERROR"),
    (lambda p, n: (_ for _ in ()).throw(httpx.ReadTimeout("slow")), "TRANSPORT_ERROR"),
    (lambda p, n: httpx.Response(200, text="<!DOCTYPE html><html><body>Maintenance</body>"
                                 "</html>", headers={"Content-Type": "text/html"}), "API_ERROR"),
    (lambda p, n: httpx.Response(200, content=xml("books.xml").content[:700]), "API_ERROR"),
])
async def test_upstream_failures_are_typed(session_for, responder, code):
    up = Upstream(responder=responder)
    async with session_for(up) as s:
        res = await s.call_tool("ndl_search_books", {"title": "こころ"})
    data = envelope(res)
    assert res.isError and data["error"]["code"] == code
    assert "こころ" not in data["error"]["message"]  # no query string in messages
    assert len(up.requests) == 1  # no retry for these


async def test_xxe_payload_is_refused_not_expanded(session_for):
    body = (b'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
            b'<searchRetrieveResponse xmlns="http://www.loc.gov/zing/srw/"><numberOfRecords>'
            b'&x;</numberOfRecords></searchRetrieveResponse>')
    up = Upstream(responder=lambda p, n: httpx.Response(200, content=body))
    async with session_for(up) as s:
        res = await s.call_tool("ndl_search_books", {"title": "こころ"})
    data = envelope(res)
    assert data["error"]["code"] == "API_ERROR"
    assert "root:" not in json.dumps(data)


async def test_count_above_cap_is_sent_as_100_with_a_warning(upstream, session_for):
    async with session_for(upstream) as s:
        data = envelope(await s.call_tool("ndl_search_books", {"title": "こころ", "count": 500}))
    assert upstream.requests[0]["maximumRecords"] == "100"
    assert "COUNT_CAPPED" in codes(data)


async def test_window_past_500(upstream, session_for):
    async with session_for(upstream) as s:
        near = envelope(await s.call_tool("ndl_search_books",
                                          {"title": "こころ", "start": 480, "count": 100}))
    assert upstream.requests[0]["startRecord"] == "480"
    assert upstream.requests[0]["maximumRecords"] == "21"  # records 480..500 only
    assert near["result"]["start"] == 480


async def test_large_total_reports_window_cap_and_provider_counts(upstream, session_for):
    async with session_for(upstream) as s:
        data = envelope(await s.call_tool("ndl_search_books", {"title": "こころ"}))
    total = data["result"]["total"]
    assert total > 500 and "RESULT_WINDOW_CAPPED" in codes(data)
    assert data["result"]["breadth"] == ("very_broad" if total > 1000 else "broad")
    assert data["result"]["by_provider"]


async def test_get_record_has_no_searched_for_and_uses_exact_index(upstream, session_for):
    async with session_for(upstream) as s:
        data = envelope(await s.call_tool("ndl_get_record", {"jpno": "71009951"}))
    assert "searched_for" not in data
    assert upstream.requests[0]["query"].startswith('jpno="71009951" AND dpid any')
    assert "anywhere" not in upstream.requests[0]["query"]


async def test_get_record_by_bib_id_tries_second_repository_after_zero(session_for):
    up = Upstream(responder=lambda p, n: xml("no_records.xml") if n == 1 else xml("books.xml"))
    async with session_for(up) as s:
        data = envelope(await s.call_tool("ndl_get_record", {"ndl_bib_id": "5173508"}))
    assert [r["query"].split(" AND ")[0] for r in up.requests] == [
        'itemno="R100000002-I5173508"', 'itemno="R000000004-I5173508"']
    assert data["result"]["total"] > 0


async def test_receipts_are_deposited_and_chain(upstream, session_for, tmp_path):
    ledger = tmp_path / "receipts.jsonl"
    async with session_for(upstream, env={"MCP_RECEIPT_LOG": str(ledger)}) as s:
        first = envelope(await s.call_tool("ndl_search_books", {"title": "こころ"}))
        await s.call_tool("ndl_search_articles", {"title": "漱石"})
    assert first["receipt"]["deposited"] is True
    lines = [json.loads(x) for x in ledger.read_text("utf-8").splitlines()]
    assert len(lines) == 2 and verify(ledger).ok
    assert lines[0]["query_hash"] == first["receipt"]["query_hash"]
    assert lines[0]["result_ids"] == first["receipt"]["result_ids"]
    assert "items" not in lines[0] and "title" not in json.dumps(lines[0]["result_ids"])
    # The injected clock reaches the receipt: issued_at is the fake clock's time, not the host's.
    pinned = upstream.clock.now().isoformat(timespec="milliseconds").replace("+00:00", "Z")
    assert lines[1]["issued_at"] <= pinned and lines[0]["issued_at"].startswith("2026-01-01T")


async def test_ledger_write_failure_does_not_fail_the_search(upstream, session_for, tmp_path):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    async with session_for(upstream, env={"MCP_RECEIPT_LOG": str(blocker / "r.jsonl")}) as s:
        res = await s.call_tool("ndl_search_books", {"title": "こころ"})
    data = envelope(res)
    assert not res.isError and data["items"]
    assert "RECEIPT_WRITE_FAILED" in codes(data) and data["receipt"]["deposited"] is False


async def test_deadline_exceeded():
    import anyio
    from mcp.shared.memory import create_connected_server_and_client_session

    from readingroom.ndl.server import build_ndl_server
    from readingroom.ndl.upstreams.ndl_search import NdlClient

    async def never_answers(_request):
        await anyio.sleep(30)
        return xml("books.xml")

    client = NdlClient("https://ndl.test/api/sru", transport=httpx.MockTransport(never_answers))
    server = build_ndl_server(client, env={"READINGROOM_TOOL_DEADLINE": "1"})
    async with create_connected_server_and_client_session(server) as s:
        res = await s.call_tool("ndl_search_books", {"title": "こころ"})
    data = envelope(res)
    assert res.isError and data["error"]["code"] == "DEADLINE_EXCEEDED"
    await client.aclose()
