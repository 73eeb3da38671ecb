"""Regression (issue 18 §11): an OAI-PMH resumptionToken that points back was never detected.

* ListRecords: a page whose token is the token that fetched it handed out the same cursor for
  ever (has_more true, page after page); a cycle A → B → A likewise.
* ListSets: a repeating token was followed to the page cap and listed every set 5 times.
Now a token already followed stops paging with a warning (``data.paging_stopped``), and each
set is listed once. On loopback.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.heritage.loopback import on_loopback, xml_answer

from readingroom.heritage.fake import canned

pytestmark = pytest.mark.anyio

PAGE = canned("helveticat_oai_listrecords.xml")
TOKEN = b"selftest-page-2"
assert TOKEN in PAGE


def _page(token: str) -> bytes:
    return PAGE.replace(TOKEN, token.encode())


def _script(tokens: dict[str | None, str]):
    """ListRecords: the page fetched by token t carries the token tokens[t]."""

    def script(prefix: str, _path: str, params: dict[str, str], _body: str):
        if prefix != "oai" or params.get("verb") != "ListRecords":
            return None
        return xml_answer(_page(tokens[params.get("resumptionToken")]))

    return script


async def _walk(h, pages: int) -> list[dict]:
    args = {"set_spec": "swissbook", "limit": 50, "response_format": "json"}
    seen = []
    for _ in range(pages):
        env, text, error = await h.call("heritage_search_helveticat", args)
        assert not error, text[:300]
        seen.append(env)
        if not env["result"]["has_more"]:
            break
        args = {"cursor": env["data"]["next_cursor"], "limit": 50, "response_format": "json"}
    return seen


@pytest.mark.parametrize("tokens", [
    {None: "T1", "T1": "T1"},                      # a token that points at itself
    {None: "A", "A": "B", "B": "A"},                # a cycle
], ids=["self", "cycle"])
async def test_list_records_stops_at_a_token_already_followed(tokens: dict):
    async with on_loopback() as h:
        h.script(_script(tokens))
        pages = await _walk(h, 6)
    last = pages[-1]
    assert len(pages) == len(tokens)  # every distinct page once, then stop
    assert last["result"]["has_more"] is False and "next_cursor" not in last["data"]
    assert last["data"]["paging_stopped"] == "repeated_resumption_token"
    assert any("points back to a page already served" in d["message"]
               for d in last["diagnostics"])


async def test_list_sets_with_a_repeating_token_lists_each_set_once(samples: Path):
    sets = (samples / "heritage" / "erara_oai_listsets.xml").read_bytes()
    async with on_loopback() as h:
        h.script(lambda p, _path, params, _b: xml_answer(sets)
                 if p == "oai" and params.get("verb") == "ListSets" else None)
        env, _text, error = await h.call("heritage_list_nb_collections",
                                        {"response_format": "json"})
        sent = h.fake.requests("oai")
    specs = [i["set_spec"] for i in env["items"]]
    assert not error and len(specs) == len(set(specs)) == 10
    assert len(sent) == 2  # the first page, then the token once: it repeats, so stop
    assert any("repeated" in d["message"] for d in env["diagnostics"])
