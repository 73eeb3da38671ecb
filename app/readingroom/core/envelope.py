"""The one response envelope of the suite.

Every tool of every server answers with an :class:`Envelope`, serialised both as JSON text and
as MCP ``structuredContent``; ``docs/response-schema.json`` is generated from these models and a
test fails when the two differ. An empty result and an unknown result are different things:
a failed search carries ``error`` and never reports ``total: 0``.
"""

from __future__ import annotations

import json
import math
import re
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .errors import Code, CoreError
from .script import Script

__all__ = [
    "DEPTH_MARKER",
    "MAX_VALUE_DEPTH",
    "SCHEMA_VERSION",
    "Breadth",
    "Diagnostic",
    "Envelope",
    "ErrorInfo",
    "Level",
    "MatchKind",
    "QueryInfo",
    "Receipt",
    "ResultInfo",
    "SearchedFor",
    "SourceInfo",
    "SourceStatus",
    "TermUse",
    "breadth_of",
    "envelope_json",
    "json_safe",
    "response_schema",
    "tool_output_schema",
    "utc_now_iso",
]

SCHEMA_VERSION = "2.3.0"
"""Major: a code renamed or removed, a field changed; minor: something added."""

MAX_VALUE_DEPTH = 32
"""The deepest nesting an upstream's raw value keeps in an envelope (an item, ``data``, error
details, the echoed input); deeper arrays and objects are replaced by :data:`DEPTH_MARKER`.
A record of the suite's upstreams nests five or six levels; past a few hundred, no reply would
serialise at all (pydantic stops at its recursion limit)."""
DEPTH_MARKER = f"[left out: nested deeper than {MAX_VALUE_DEPTH} levels]"
_ENVELOPE_DEPTH = MAX_VALUE_DEPTH + 8
"""The bound of the final pass over a whole envelope: its own levels above the raw values."""
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def json_safe(value: Any, max_depth: int = MAX_VALUE_DEPTH) -> Any:
    """A copy of a raw value that always serialises as strict JSON in UTF-8.

    Arrays and objects nested deeper than ``max_depth`` become :data:`DEPTH_MARKER`; a lone
    surrogate in a string (valid in JSON escapes, not in UTF-8) becomes U+FFFD; ``NaN`` and
    infinities become ``None``; tuples become lists and keys strings. Other values are kept
    as they are (pydantic serialises dates and the like).
    """
    return _safe(value, max_depth)


def _safe(value: Any, room: int) -> Any:
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value) if _LONE_SURROGATE.search(value) else value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        if room <= 0:
            return DEPTH_MARKER
        return {_safe(k if isinstance(k, str) else str(k), 1): _safe(v, room - 1)
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        if room <= 0:
            return DEPTH_MARKER
        return [_safe(v, room - 1) for v in value]
    return value


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", use_enum_values=True)


class Level(StrEnum):
    """How much a diagnostic should change the reading of a result."""

    info = "info"
    warning = "warning"
    error = "error"


class MatchKind(StrEnum):
    """How an upstream index matches a term (fixed per index, not chosen by the caller)."""

    partial = "partial"
    prefix = "prefix"
    exact = "exact"
    range = "range"


class Breadth(StrEnum):
    """A graduated reading of the total: none 0, narrow 1-50, broad 51-1000, very_broad >1000."""

    none = "none"
    narrow = "narrow"
    broad = "broad"
    very_broad = "very_broad"


class SourceStatus(StrEnum):
    """What happened at one upstream during this call."""

    ok = "ok"
    empty = "empty"
    rate_limited = "rate_limited"
    error = "error"
    not_configured = "not_configured"
    skipped = "skipped"


class Diagnostic(_Model):
    """A typed note about a result: never free text alone."""

    level: Level
    code: Code
    message: str
    hint: str | None = None
    field: str | None = Field(None, description="The input field the diagnostic is about.")


class TermUse(_Model):
    """One term as the caller chose it, and the index it went to."""

    field: str = Field(description="The tool argument that carried the term.")
    term: str = Field(description="The term exactly as given (after trimming).")
    index: str = Field(description="The upstream index the term was sent to.")
    match: MatchKind
    script: Script


class SearchedFor(_Model):
    """The headline of a search: what the assistant chose to look for, before any CQL."""

    terms: list[TermUse]
    script: Script = Field(description="Script of all free-text terms taken together.")
    matching: str = Field(description="How terms combine, e.g. metadata_conjunction (AND).")
    providers: list[str] = Field(default_factory=list, description="Upstream sets searched.")


class QueryInfo(_Model):
    """What was actually sent; fixed by the receipt's query_hash."""

    input: dict[str, Any] = Field(description="The tool arguments as received.")
    normalized: str | None = Field(None, description="The upstream query (e.g. CQL) built.")
    params: dict[str, str] = Field(
        default_factory=dict, description="Request parameters sent (secrets redacted)."
    )
    endpoint: str | None = None


class ResultInfo(_Model):
    """Counts and paging. ``total`` is absent when it is unknown."""

    total: int | None = None
    returned: int = 0
    start: int = 1
    has_more: bool = False
    next_start: int | None = Field(None, description="Pass as `start` to continue.")
    breadth: Breadth | None = None
    match_type: Literal["exact", "partial", "fuzzy", "none"] | None = None
    by_provider: dict[str, int] | None = Field(
        None, description="Upstream counts per provider, where the upstream reports them."
    )


class SourceInfo(_Model):
    """One upstream touched by the call, its licence, and what happened there."""

    id: str
    name: str
    licence: str
    url: str
    status: SourceStatus
    credit: str


class Receipt(_Model):
    """The loggable trace of a search."""

    issued_at: str
    query_hash: str = Field(description="SHA-256 over the query and the parameters sent.")
    result_ids: list[str] = Field(default_factory=list)
    deposited: bool = Field(description="Whether a line was written to the receipt ledger.")
    ledger_hash: str | None = Field(None, description="Hash of the ledger line, if deposited.")


class ErrorInfo(_Model):
    """Why a call produced no answer, and what to do about it."""

    code: Code
    message: str
    details: dict[str, Any] = Field(default_factory=dict)
    remediation: str = ""
    available_capabilities: list[str] = Field(default_factory=list)


class Envelope(_Model):
    """The response of every tool in the suite, success and failure alike."""

    server: str
    schema_version: str = SCHEMA_VERSION
    operation: str
    searched_for: SearchedFor | None = None
    query: QueryInfo | None = None
    result: ResultInfo | None = None
    items: list[dict[str, Any]] = Field(default_factory=list)
    data: dict[str, Any] | None = Field(
        None,
        description="The operation's single result object when it is not a list of items "
        "(a text read, a status, a locator).",
    )
    diagnostics: list[Diagnostic] = Field(default_factory=list)
    sources: list[SourceInfo] = Field(default_factory=list)
    attribution: list[str] = Field(default_factory=list)
    coverage_note: str | None = None
    receipt: Receipt | None = None
    error: ErrorInfo | None = None

    @classmethod
    def failure(
        cls,
        server: str,
        operation: str,
        err: CoreError,
        *,
        capabilities: list[str] | None = None,
        **fields: Any,
    ) -> Envelope:
        """Build the failure envelope for a typed error."""
        return cls(
            server=server,
            operation=operation,
            error=ErrorInfo(
                code=err.code,
                message=err.message,
                details=err.details,
                remediation=err.remediation,
                available_capabilities=capabilities or [],
            ),
            **fields,
        )

    def diagnose(
        self,
        level: Level,
        code: Code,
        message: str,
        *,
        hint: str | None = None,
        field: str | None = None,
    ) -> None:
        """Append a diagnostic."""
        self.diagnostics.append(
            Diagnostic(level=level, code=code, message=message, hint=hint, field=field)
        )

    def to_data(self) -> dict[str, Any]:
        """The JSON-ready dict that is both the text content and ``structuredContent``.

        Raw values are bounded first (:func:`json_safe`: depth, lone surrogates, NaN), so the
        reply serialises whatever an upstream sent; only a value pydantic cannot serialise at
        all (an arbitrary object, a defect) still raises.
        """
        update: dict[str, Any] = {"items": [json_safe(i) for i in self.items]}
        if self.data is not None:
            update["data"] = json_safe(self.data)
        if self.error is not None:
            update["error"] = self.error.model_copy(
                update={"details": json_safe(self.error.details)})
        if self.query is not None:
            update["query"] = self.query.model_copy(update={"input": json_safe(self.query.input)})
        bounded = self.model_copy(update=update)
        data = json_safe(bounded.model_dump(mode="json", exclude_none=True), _ENVELOPE_DEPTH)
        assert isinstance(data, dict)
        return data

    def to_json(self) -> str:
        """Compact JSON text, UTF-8 characters kept (not escaped)."""
        return envelope_json(self.to_data())


def envelope_json(data: dict[str, Any]) -> str:
    """The compact JSON text of an envelope's :meth:`Envelope.to_data` (strict: no NaN)."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def breadth_of(total: int | None) -> Breadth | None:
    """Grade a total: none 0, narrow 1-50, broad 51-1000, very_broad above 1000."""
    if total is None:
        return None
    if total <= 0:
        return Breadth.none
    if total <= 50:
        return Breadth.narrow
    if total <= 1000:
        return Breadth.broad
    return Breadth.very_broad


def utc_now_iso(now: datetime | None = None) -> str:
    """An ISO 8601 UTC timestamp with a Z suffix, to the millisecond."""
    moment = (now or datetime.now(UTC)).astimezone(UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def response_schema() -> dict[str, Any]:
    """The published JSON Schema of the envelope (what ``docs/response-schema.json`` holds)."""
    schema = Envelope.model_json_schema(mode="serialization")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = _schema_id()
    return schema


def tool_output_schema(server: str, operation: str) -> dict[str, Any]:
    """The compact output schema one tool declares in ``tools/list`` (about 400 bytes).

    The tool's own fields are exact: ``server`` and ``operation`` are the constants of this
    tool (core's call boundary keeps every reply so), ``schema_version`` the suite's; the
    fields a caller reads the answer from are typed (``result`` and ``data`` objects, ``items``
    a list, ``error`` an object with ``code`` and ``message``). The rest of the
    shared envelope is admitted by ``additionalProperties`` and described in one sentence
    naming the published schema, :func:`response_schema` (``docs/response-schema.json``),
    which holds every field's detail. So every envelope a tool sends (:meth:`Envelope.to_data`,
    which leaves out ``None``) valid against the published schema is valid against this one
    (a test keeps them so), and a client that validates ``structuredContent`` against the
    declared schema accepts every answer: the 8.5 kB published schema is not repeated in
    every tool.
    """
    return {
        "type": "object",
        "description": f"The suite's envelope {SCHEMA_VERSION}; all fields: "
                       "docs/response-schema.json",
        "properties": {
            "server": {"const": server},
            "operation": {"const": operation},
            "schema_version": {"const": SCHEMA_VERSION},
            "result": {"type": "object"},
            "items": {"type": "array"},
            "data": {"type": "object"},
            "error": {"type": "object", "required": ["code", "message"]},
        },
        "required": ["server", "operation"],
        "additionalProperties": True,
    }


def _schema_id() -> str:
    return f"https://readingroom.invalid/schema/envelope/{SCHEMA_VERSION}"
