"""Regression (issue 18 §3): malformed answers read as empty, "not found", or a defect.

* An OAI ``ListRecords`` request answered with ``ListSets`` listed "0 records".
* SRU ``numberOfRecords 5`` with no record read "ok, 0 of 5".
* A number where a list belongs inside a record (Memobase ``hasInstantiation: 9``, CKAN
  ``resources: 9``) was ``INTERNAL_ERROR``.
* A garbage SIKART row made ``heritage_get_artist`` answer "not found".
* A page whose every record is unreadable was an empty result.
Each is now a valid result or ``API_ERROR`` with a diagnostic, and the receipt's outcome is
what the caller was told. On loopback.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.heritage.loopback import json_answer, on_loopback, xml_answer

from readingroom.heritage.fake import canned

pytestmark = pytest.mark.anyio

SRU_FIVE = (b'<?xml version="1.0"?><searchRetrieveResponse '
            b'xmlns="http://www.loc.gov/zing/srw/"><version>1.2</version>'
            b"<numberOfRecords>5</numberOfRecords></searchRetrieveResponse>")


def _json(name: str) -> dict:
    return json.loads(canned(name))


def _memobase_nine() -> dict:
    payload = _json("memobase_search.json")
    payload["hydra:member"][0]["hasInstantiation"] = 9
    return payload


def _snm_nine() -> dict:
    payload = _json("snm_packages.json")
    payload["result"]["results"][0]["resources"] = 9
    return payload


def _garbage_artist() -> dict:
    payload = _json("sikart_detail.json")
    payload["result"]["records"] = ["garbage"]
    return payload


def _unreadable_rows() -> dict:
    payload = _json("sikart_search.json")
    payload["result"]["records"] = [None, None, 3]
    return payload


CASES = [
    # (tool, args, upstream prefix, scripted answer, expected error code or None for a result)
    ("heritage_search_helveticat", {"set_spec": "swissbook"}, "oai",
     xml_answer(canned("helveticat_oai_listsets.xml")), "API_ERROR"),
    ("heritage_search_helveticat", {"query": "Volksschule"}, "sru", xml_answer(SRU_FIVE),
     "API_ERROR"),
    ("heritage_search_memory", {"query": "Probe", "collection": "memobase"}, "memobase",
     json_answer(_memobase_nine()), None),
    ("heritage_search_museum_datasets", {"query": "Waffen"}, "ckan", json_answer(_snm_nine()),
     None),
    ("heritage_get_artist", {"artist_id": "9900001"}, "ckan", json_answer(_garbage_artist()),
     "API_ERROR"),
    ("heritage_search_artists", {"query": "Probe"}, "ckan", json_answer(_unreadable_rows()),
     "API_ERROR"),
]


@pytest.mark.parametrize(("tool", "args", "prefix", "answer", "code"), CASES,
                         ids=[f"{c[0]}-{c[2]}-{i}" for i, c in enumerate(CASES)])
async def test_malformed_is_a_result_or_an_error_never_empty(
        tmp_path: Path, tool: str, args: dict, prefix: str, answer: tuple, code: str | None):
    ledger = tmp_path / "r.jsonl"
    async with on_loopback(ledger) as h:
        h.script(lambda p, _path, _q, _b: answer if p == prefix else None)
        env, text, error = await h.call(tool, {**args, "response_format": "json"})
    assert "INTERNAL_ERROR" not in text
    outcomes = [json.loads(line)["outcome"] for line in ledger.read_text().splitlines()]
    if code is None:
        assert not error and env["items"], text[:400]
        assert any(d["code"] == "RECORD_UNREADABLE" for d in env["diagnostics"])
        assert outcomes[-1] == "ok"
    else:
        assert error and env["error"]["code"] == code, text[:400]
        assert env["error"]["message"] and env["sources"][0]["status"] == "error"
        assert outcomes[-1] == code  # the receipt says what the caller was told
