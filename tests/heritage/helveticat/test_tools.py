"""The three Helveticat ToolSpecs: names, annotations, input models, handlers."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from readingroom.heritage.server import (
    GetPublicationInput,
    HelveticatSearchInput,
    ListNbCollectionsInput,
    catalogue_tool_specs,
)

from .helpers import FakeHelveticat, hand, heritage_for


def _specs():
    return {s.name: s for s in catalogue_tool_specs(heritage_for(FakeHelveticat(lambda r: b"")))}


def test_three_tools_declared_fully():
    specs = _specs()
    assert set(specs) == {"heritage_search_helveticat", "heritage_get_publication",
                          "heritage_list_nb_collections"}
    for spec in specs.values():
        assert spec.title and spec.read_only and spec.idempotent and not spec.destructive
        schema = spec.input_model.model_json_schema()
        assert schema["properties"]["response_format"]["enum"] == ["markdown", "json"]
        assert schema.get("additionalProperties") is False
    assert "TITLE order, not by relevance" in specs["heritage_search_helveticat"].description


@pytest.mark.parametrize("model, args", [
    (HelveticatSearchInput, {"query": "x", "index": "dc.title"}),
    (HelveticatSearchInput, {"query": "x", "unknown": 1}),
    (HelveticatSearchInput, {"query": "x", "limit": 0}),
    (HelveticatSearchInput, {"query": "x", "response_format": "xml"}),
    (GetPublicationInput, {"identifier": "1"}),
    (ListNbCollectionsInput, {"set_spec": "x"}),
])
def test_inputs_are_closed(model, args):
    with pytest.raises(ValidationError):
        model.model_validate(args)


@pytest.mark.anyio
async def test_handlers_reach_the_service():
    fake = FakeHelveticat(lambda r: hand("sru_zero_records.xml"))
    specs = {s.name: s for s in catalogue_tool_specs(heritage_for(fake))}
    args = HelveticatSearchInput.model_validate({"query": "Xyzzy", "response_format": "json"})
    env = await specs["heritage_search_helveticat"].handler(args)
    assert env.operation == "heritage_search_helveticat" and env.result.match_type == "none"
    assert env.query.input["response_format"] == "json"
    env = await specs["heritage_search_helveticat"].handler(
        HelveticatSearchInput.model_validate({"query": "x", "from_date": "2025-01-01"}))
    assert env.error.code == "INVALID_INPUT" and len(fake.requests) == 1
