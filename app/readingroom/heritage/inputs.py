"""What every input model of swiss-cultural-heritage-mcp shares: the original's ``params`` form.

The original declared each tool's input as one argument, ``params``, holding the model (the
seed: "Input Schema: params"), so its clients call ``{"params": {"query": "…"}}``. Our tools
take the fields flat. Both are accepted with the same result: an argument object whose only
key is ``params``, holding an object, is read as that object. The published input schema
stays the flat one. Anything else next to ``params`` is refused like any unknown field.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator

__all__ = ["HeritageInput", "unwrap_params"]


def unwrap_params(data: Any) -> Any:
    """``data["params"]`` when ``data`` is ``{"params": {…}}``; ``data`` otherwise."""
    if isinstance(data, dict) and set(data) == {"params"} and isinstance(data["params"], dict):
        return data["params"]
    return data


class HeritageInput(BaseModel):
    """Base of every input model: unknown fields refused, strings stripped, ``params`` read."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    @model_validator(mode="before")
    @classmethod
    def _original_params_form(cls, data: Any) -> Any:
        return unwrap_params(data)
