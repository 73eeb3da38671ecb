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


def _published_type(schema: dict, prop: dict) -> str:
    """The JSON type of a published property, its ``null`` branch aside and ``$ref`` resolved."""
    branches = [b for b in prop.get("anyOf", [prop]) if b.get("type") != "null"]
    assert len(branches) == 1, prop
    branch = branches[0]
    if "$ref" in branch:
        branch = schema["$defs"][branch["$ref"].rsplit("/", 1)[1]]
    return branch.get("type", "const")


def test_tool_output_schema_names_every_field_of_the_published_one_with_its_type():
    published = response_schema()
    compact = tool_output_schema("ndl-mcp", "ndl_search_books")
    assert set(compact["properties"]) == set(published["properties"])
    assert compact["required"] == published["required"]
    assert compact["additionalProperties"] is published["additionalProperties"] is False
    for name, prop in compact["properties"].items():
        if "const" in prop:
            continue
        assert prop["type"] == _published_type(published, published["properties"][name]), name
    assert compact["properties"]["server"] == {"const": "ndl-mcp"}
    assert compact["properties"]["operation"] == {"const": "ndl_search_books"}
    assert compact["properties"]["schema_version"] == {"const": SCHEMA_VERSION}
    assert "docs/response-schema.json" in compact["description"]
    jsonschema.Draft202012Validator.check_schema(compact)


def test_every_published_envelope_validates_against_the_compact_schema():
    full = jsonschema.Draft202012Validator(response_schema())
    env = Envelope(server="ndl-mcp", operation="ndl_search_books",
                   result=ResultInfo(total=3, returned=1, next_start=2, has_more=True),
                   items=[{"title": "x", "deep": {"a": [1, None]}}], data={"k": None},
                   coverage_note="n", attribution=["NDL"])
    env.diagnose(Level.warning, Code.SCRIPT_LATIN_QUERY, "m", hint="h", field="title")
    failure = Envelope.failure("ndl-mcp", "ndl_search_books",
                               CoreError(Code.RATE_LIMITED, "m", remediation="wait"))
    for data in (env.to_data(), failure.to_data()):
        full.validate(data)
        jsonschema.Draft202012Validator(
            tool_output_schema("ndl-mcp", "ndl_search_books")).validate(data)
        wrong = {**data, "operation": "ndl_get_record"}
        assert not jsonschema.Draft202012Validator(
            tool_output_schema("ndl-mcp", "ndl_search_books")).is_valid(wrong)


def test_tool_output_schema_is_compact():
    schema = tool_output_schema("swiss-cultural-heritage-mcp", "heritage_search_collections")
    assert len(json.dumps(schema, separators=(",", ":")).encode()) <= 1_000
