"""docs/response-schema.json is generated from the envelope models and must not drift."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from readingroom.core.envelope import Envelope, breadth_of, response_schema
from readingroom.core.errors import MEANINGS, Code, CoreError

SCHEMA_FILE = Path(__file__).resolve().parents[2] / "docs" / "response-schema.json"


def test_published_schema_equals_the_models():
    published = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    assert published == response_schema(), (
        "docs/response-schema.json is stale: run `readingroom schema --out "
        "docs/response-schema.json`"
    )


def test_failure_envelope_validates_and_carries_the_error_object():
    env = Envelope.failure("ndl-mcp", "ndl_search_books",
                           CoreError(Code.RATE_LIMITED, "m", remediation="wait"))
    data = env.to_data()
    jsonschema.Draft202012Validator(response_schema()).validate(data)
    assert set(data["error"]) == {"code", "message", "details", "remediation",
                                  "available_capabilities"}
    assert "result" not in data  # an unknown result is not a zero result


def test_every_code_is_documented():
    assert set(MEANINGS) == set(Code)
    assert all(len(m) > 20 for m in MEANINGS.values())


def test_breadth_scale():
    assert [breadth_of(n) for n in (None, 0, 1, 50, 51, 1000, 1001)] == [
        None, "none", "narrow", "narrow", "broad", "broad", "very_broad"]
