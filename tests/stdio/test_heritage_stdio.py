"""swiss-cultural-heritage-mcp as a real stdio subprocess against its loopback fakes.

All eleven tools, each in both response formats: ``json`` sends the envelope as text,
``markdown`` readable text with the source-and-licence footer; ``structuredContent`` is the
envelope (valid against the published schema) either way. Plus the two resources and prompts.
"""

from __future__ import annotations

import json
import os
import sys

import jsonschema
import pytest
from tests.forked import StdioClient

from readingroom.core.envelope import response_schema
from readingroom.heritage.fake import ACTIVE, INACTIVE, FakeUpstreams

SERVER = [sys.executable, "-m", "readingroom.heritage"]
VALIDATOR = jsonschema.Draft202012Validator(response_schema())

CALLS: dict[str, dict] = {
    "heritage_search_helveticat": {"query": "Volksschule"},
    "heritage_get_publication": {"identifier": "oai:helveticat.nb.admin.ch:991090000000103976"},
    "heritage_list_nb_collections": {},
    "heritage_search_artists": {"query": "Probe"},
    "heritage_get_artist": {"artist_id": "9900001"},
    "heritage_search_museum_datasets": {"query": "Waffen"},
    "heritage_browse_collection": {"resource_id": ACTIVE},
    "heritage_cross_search": {"query": "Probe"},
    "heritage_search_memory": {"query": "Probe"},
    "heritage_get_memory_item": {"collection": "memobase", "item_id": "tst-001-1"},
    "heritage_list_memory_collections": {},
}


def _env(fake: FakeUpstreams, tmp_path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "MCP_RECEIPT_LOG"}
    env.update({**fake.env(), "MCP_RECEIPT_LOG": str(tmp_path / "receipts.jsonl")})
    return env


def _envelope(result: dict, name: str) -> dict:
    data = result["structuredContent"]
    VALIDATOR.validate(data)
    assert data["operation"] == name and data["attribution"], name
    assert data["sources"] and all(s["licence"] for s in data["sources"]), name
    return data


@pytest.fixture(scope="module")
def fake():
    with FakeUpstreams(slow_seconds=5.0) as f:
        yield f


def test_all_eleven_tools_in_both_formats(fake, tmp_path):
    with StdioClient(SERVER, env=_env(fake, tmp_path)) as c:
        c.initialize()
        tools = {t["name"] for t in c.request("tools/list", {})["result"]["tools"]}
        assert tools == set(CALLS)
        for name, args in CALLS.items():
            as_json = c.call_tool(name, {**args, "response_format": "json"})
            data = _envelope(as_json, name)
            assert as_json["isError"] is False, (name, data.get("error"))
            assert json.loads(as_json["content"][0]["text"]) == data
            as_md = c.call_tool(name, args)  # markdown is the default
            text = as_md["content"][0]["text"]
            md_data = _envelope(as_md, name)
            assert as_md["isError"] is False
            assert text.startswith(f"## {name}") and "**Sources & licences**" in text, name
            assert md_data["items"] == data["items"], name
        assert c.close() == 0
        assert c.stdout_problems() == []


def test_markdown_tags_provenance_and_licences(fake, tmp_path):
    with StdioClient(SERVER, env=_env(fake, tmp_path)) as c:
        c.initialize()
        cross = c.call_tool("heritage_cross_search", {"query": "Probe"})
        data = cross["structuredContent"]
        text = cross["content"][0]["text"]
        assert {s["id"]: s["status"] for s in data["sources"]} == {
            "sik_isea": "ok", "snm": "ok", "helveticat": "ok"}
        assert "[SIK-ISEA]" in text and "[SNM]" in text and "[NB]" in text
        assert {i["source"] for i in data["items"]} == {"sik_isea", "snm", "helveticat"}
        artist = c.call_tool("heritage_get_artist", {"artist_id": "9900001",
                                                     "response_format": "json"})
        assert artist["structuredContent"]["items"][0]["licence"] == "CC BY-NC-SA"
        c.close()


def test_one_failing_source_never_fails_cross_search(fake, tmp_path):
    fake.modes["ckan"] = "broken"  # "error" (HTTP 500) is retried for 25 s
    try:
        with StdioClient(SERVER, env=_env(fake, tmp_path)) as c:
            c.initialize()
            result = c.call_tool("heritage_cross_search", {"query": "Probe",
                                                           "response_format": "json"},
                                 timeout=90)
            c.close()
    finally:
        fake.modes.clear()
    data = result["structuredContent"]
    assert result["isError"] is False
    statuses = {s["id"]: s["status"] for s in data["sources"]}
    assert statuses == {"sik_isea": "error", "snm": "error", "helveticat": "ok"}
    assert data["items"] and {i["source"] for i in data["items"]} == {"helveticat"}


def test_envelopes_for_not_found_fuzzy_and_no_datastore(fake, tmp_path):
    with StdioClient(SERVER, env=_env(fake, tmp_path)) as c:
        c.initialize()
        fmt = {"response_format": "json"}
        missing = c.call_tool("heritage_get_artist", {"artist_id": "1", **fmt})
        fuzzy = c.call_tool("heritage_search_artists", {"query": "Probe zzz", **fmt})
        nods = c.call_tool("heritage_browse_collection", {"resource_id": INACTIVE, **fmt})
        gone = c.call_tool("heritage_get_memory_item", {"collection": "dodis",
                                                        "item_id": "G1", **fmt})
        dodis = c.call_tool("heritage_get_memory_item", {"collection": "dodis",
                                                         "item_id": "G90001", **fmt})
        c.close()
    m = missing["structuredContent"]
    # The suite's rule for fetch tools: an id the upstream does not have is NOT_FOUND.
    assert missing["isError"] is True and m["error"]["code"] == "NOT_FOUND" and not m["items"]
    assert "heritage_search_artists" in m["error"]["remediation"]
    assert fuzzy["structuredContent"]["result"]["match_type"] == "fuzzy"
    assert nods["isError"] is True
    assert nods["structuredContent"]["error"]["code"] == "CAPABILITY_UNAVAILABLE"
    assert gone["isError"] is True
    assert gone["structuredContent"]["error"]["code"] == "NOT_FOUND"
    assert "heritage_search_memory" in gone["structuredContent"]["error"]["remediation"]
    assert "NICHT AUSGEBEN" not in json.dumps(dodis["structuredContent"])
    assert dodis["structuredContent"]["items"][0]["withheld_fields"] == ["doc_att_file_content"]


def test_resources_and_prompts(fake, tmp_path):
    with StdioClient(SERVER, env=_env(fake, tmp_path)) as c:
        init = c.initialize()
        caps = init["result"]["capabilities"]
        assert "resources" in caps and "prompts" in caps
        uris = [r["uri"] for r in c.request("resources/list", {})["result"]["resources"]]
        assert uris == ["heritage://sik-isea/overview", "heritage://nb/collections"]
        nb = c.request("resources/read", {"uri": "heritage://nb/collections"})["result"]
        text = nb["contents"][0]["text"]
        assert "SRU" in text and "MARC21" in text and "oai_dc)" in text  # RFN only
        assert "no full-text search" not in text
        prompts = [p["name"] for p in c.request("prompts/list", {})["result"]["prompts"]]
        assert prompts == ["heritage_research_artist", "heritage_find_educational_resources"]
        got = c.request("prompts/get", {"name": "heritage_research_artist",
                                        "arguments": {"artist_name": "Anna Probe"}})["result"]
        assert "heritage_get_artist" in got["messages"][0]["content"]["text"]
        c.close()
