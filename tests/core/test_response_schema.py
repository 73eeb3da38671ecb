"""docs/response-schema.json is generated from the envelope models and must not drift."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from readingroom.core.envelope import (
    SCHEMA_VERSION,
    Envelope,
    Level,
    ResultInfo,
    breadth_of,
    response_schema,
    tool_output_schema,
)
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


# --- the compact schema each tool declares (issue 19 §6) -------------------------------------


def _published_branch(schema: dict, prop: dict) -> dict:
    """A published property's non-null branch, ``$ref`` resolved."""
    branches = [b for b in prop.get("anyOf", [prop]) if b.get("type") != "null"]
    assert len(branches) == 1, prop
    branch = branches[0]
    if "$ref" in branch:
        branch = schema["$defs"][branch["$ref"].rsplit("/", 1)[1]]
    return branch


def test_the_compact_schema_asks_nothing_the_published_one_does_not():
    """Each constraint of the compact schema is one the published schema also makes, so an
    envelope valid against the published schema (without nulls, which to_data leaves out) is
    valid against the compact one, the tool's own constants aside."""
    published = response_schema()
    compact = tool_output_schema("ndl-mcp", "ndl_search_books")
    jsonschema.Draft202012Validator.check_schema(compact)
    assert set(compact) == {"type", "description", "properties", "required",
                            "additionalProperties"}
    assert compact["type"] == published["type"] == "object"
    assert compact["additionalProperties"] is True, "the rest of the envelope is admitted"
    assert compact["required"] == published["required"] == ["server", "operation"]
    assert f"envelope {SCHEMA_VERSION}" in compact["description"]
    assert "docs/response-schema.json" in compact["description"]
    assert compact["properties"].pop("server") == {"const": "ndl-mcp"}
    assert compact["properties"].pop("operation") == {"const": "ndl_search_books"}
    assert compact["properties"].pop("schema_version") == {"const": SCHEMA_VERSION}
    assert set(compact["properties"]) == {"result", "items", "data", "error"}
    for name, prop in compact["properties"].items():
        branch = _published_branch(published, published["properties"][name])
        assert set(prop) <= {"type", "required"}, name
        assert prop["type"] == branch["type"], name
        assert set(prop.get("required", [])) <= set(branch.get("required", [])), name


def _envelopes() -> list[dict]:
    full = Envelope(server="ndl-mcp", operation="ndl_search_books",
                    result=ResultInfo(total=3, returned=1, next_start=2, has_more=True),
                    items=[{"title": "x", "deep": {"a": [1, None]}}], data={"k": None},
                    coverage_note="n", attribution=["NDL"])
    full.diagnose(Level.warning, Code.SCRIPT_LATIN_QUERY, "m", hint="h", field="title")
    unknown = Envelope(server="ndl-mcp", operation="ndl_search_books",
                       result=ResultInfo(total=None, returned=0))
    failure = Envelope.failure("ndl-mcp", "ndl_search_books",
                               CoreError(Code.RATE_LIMITED, "m", remediation="wait"))
    return [e.to_data() for e in (full, unknown, failure)]


def test_every_envelope_sent_validates_against_both_schemas():
    published = jsonschema.Draft202012Validator(response_schema())
    compact = jsonschema.Draft202012Validator(tool_output_schema("ndl-mcp", "ndl_search_books"))
    for data in _envelopes():
        published.validate(data)
        compact.validate(data)


def test_the_compact_schema_refuses_another_tools_answer_and_a_malformed_one():
    compact = jsonschema.Draft202012Validator(tool_output_schema("ndl-mcp", "ndl_search_books"))
    data, _, failure = _envelopes()
    assert not compact.is_valid({**data, "operation": "ndl_get_record"})
    assert not compact.is_valid({**data, "server": "cinii-mcp"})
    assert not compact.is_valid({**data, "schema_version": "1.0.0"})
    assert not compact.is_valid({**data, "items": {"title": "x"}})
    assert not compact.is_valid({**data, "result": 3})
    assert not compact.is_valid({**failure, "error": {"message": "no code"}})
    assert not compact.is_valid({k: v for k, v in data.items() if k != "operation"})


def test_tool_output_schema_is_compact():
    """About 400 bytes, where the published schema is over 8 kB (issue 19 §6)."""
    longest = tool_output_schema("swiss-cultural-heritage-mcp", "heritage_list_memory_collections")
    compact = len(json.dumps(longest, separators=(",", ":")).encode())
    published = len(json.dumps(response_schema(), separators=(",", ":")).encode())
    assert compact <= 500 and published > 8_000
