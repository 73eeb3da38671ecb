"""Hardening (issue 18 §6): every text argument of swiss-cultural-heritage-mcp is capped.

A server without length limits on its text arguments echoed a 50 MB line twice. Here every
string a tool takes (in its flat form, and so inside the original's ``params`` wrapper) has a
``maxLength`` in its published schema, every list a ``maxItems``, and a refused oversized
argument is answered in a few kilobytes, never echoed. On loopback.
"""

from __future__ import annotations

from typing import Any

import pytest
from tests.heritage.loopback import on_loopback

from readingroom.heritage.server import catalogue_tool_specs, tool_specs
from readingroom.heritage.service import HeritageService

pytestmark = pytest.mark.anyio


def _unbounded(schema: dict[str, Any], defs: dict[str, Any], where: str) -> list[str]:
    if "$ref" in schema:
        return _unbounded(defs[schema["$ref"].rsplit("/", 1)[1]], defs, where)
    found: list[str] = []
    for branch in schema.get("anyOf", []):
        found += _unbounded(branch, defs, where)
    kind = schema.get("type")
    if kind == "string" and "maxLength" not in schema and "enum" not in schema \
            and "const" not in schema:
        found.append(where)
    if kind == "array":
        if "maxItems" not in schema:
            found.append(f"{where}[]")
        found += _unbounded(schema.get("items", {}), defs, f"{where}[]")
    for name, prop in schema.get("properties", {}).items():
        found += _unbounded(prop, defs, f"{where}.{name}")
    return found


def _specs() -> list[Any]:
    service = HeritageService(env={})
    return [*catalogue_tool_specs(None), *tool_specs(service)]  # type: ignore[arg-type]


def test_every_text_argument_has_a_max_length():
    unbounded: list[str] = []
    for spec in _specs():
        schema = spec.input_model.model_json_schema()
        unbounded += _unbounded(schema, schema.get("$defs", {}), spec.name)
    assert unbounded == []


async def test_an_oversized_argument_is_refused_without_an_echo():
    huge = "x" * 1_000_000
    async with on_loopback() as h:
        for name, field in (("heritage_search_artists", "query"),
                            ("heritage_search_memory", "date_from"),
                            ("heritage_search_helveticat", "cursor")):
            args = {field: huge, "query": "Probe"} if field != "query" else {field: huge}
            env, text, error = await h.call(name, args)
            assert error and env["error"]["code"] == "INVALID_ARGUMENT", name
            assert len(text) < 8_000 and huge[:1000] not in text, name
        assert h.fake.log == []
