"""jstage-mcp's original answered ``jstage_list_issues`` with plain JSON outside the suite's
envelope (japan-apis.md §3.3): no typed errors, no credit on failures, no ``searched_for``, a
request log line instead of a receipt, and errors as ``{"error": str(exc)}``. Now it answers
the envelope, success and failure alike, with a receipt."""

from __future__ import annotations

import json

import jsonschema
import pytest
from tests.jstage.upstream import Upstream, service

from readingroom.core.clock import FakeClock
from readingroom.core.envelope import response_schema

pytestmark = pytest.mark.anyio
VALIDATOR = jsonschema.Draft202012Validator(response_schema())


async def test_the_volume_list_answers_the_envelope_in_success_and_failure(tmp_path):
    ledger = tmp_path / "receipts.jsonl"
    svc = service(Upstream(FakeClock()), ledger)
    ok = (await svc.list_issues({"cdjournal": "rrkiyo"})).to_data()
    limited = (await svc.list_issues({"material": "__err003__"})).to_data()
    for data in (ok, limited):
        VALIDATOR.validate(data)
        assert data["server"] == "jstage-mcp" and data["operation"] == "jstage_list_issues"
        assert data["searched_for"]["providers"] == ["jstage:volumes"]
        assert any("Powered by J-STAGE" in a for a in data["attribution"])
        assert data["receipt"]["deposited"] is True
    assert ok["result"]["total"] == 2 and limited["error"]["code"] == "RATE_LIMITED"
    lines = [json.loads(x) for x in ledger.read_text("utf-8").splitlines()]
    assert [(x["operation"], x["outcome"]) for x in lines] == [
        ("jstage_list_issues", "ok"), ("jstage_list_issues", "RATE_LIMITED")]
