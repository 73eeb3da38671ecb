"""The suite's one vocabulary of error and diagnostic codes, and its typed exceptions.

Every code is documented by its meaning, for the reader of an envelope. A code names a
*kind of outcome*, not a place in the code: a rate-limited search and a malformed query
mean different things to a scholar and so carry different codes.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

__all__ = ["Code", "CoreError"]


class Code(StrEnum):
    """Error and diagnostic codes of the whole suite.

    Error codes end a call (``isError=true``); diagnostic codes qualify a successful one.
    The enum's members carry their meaning as ``Code.X.meaning``.
    """

    # --- errors: the call produced no answer --------------------------------------------
    INVALID_ARGUMENT = "INVALID_ARGUMENT"
    INVALID_INPUT = "INVALID_INPUT"
    RESERVED_WORD_IN_QUERY = "RESERVED_WORD_IN_QUERY"
    DPID_NOT_PERMITTED = "DPID_NOT_PERMITTED"
    RATE_LIMITED = "RATE_LIMITED"
    TRANSPORT_ERROR = "TRANSPORT_ERROR"
    API_ERROR = "API_ERROR"
    DEADLINE_EXCEEDED = "DEADLINE_EXCEEDED"
    UNKNOWN_TOOL = "UNKNOWN_TOOL"
    INTERNAL_ERROR = "INTERNAL_ERROR"
    # --- diagnostics: the call answered; read the answer with these in mind --------------
    ZERO_RESULT = "ZERO_RESULT"
    RESULT_WINDOW_CAPPED = "RESULT_WINDOW_CAPPED"
    COUNT_CAPPED = "COUNT_CAPPED"
    SCRIPT_LATIN_QUERY = "SCRIPT_LATIN_QUERY"
    RECORD_UNREADABLE = "RECORD_UNREADABLE"
    UPSTREAM_DIAGNOSTIC = "UPSTREAM_DIAGNOSTIC"
    RECEIPT_NOT_DEPOSITED = "RECEIPT_NOT_DEPOSITED"
    RECEIPT_WRITE_FAILED = "RECEIPT_WRITE_FAILED"

    @property
    def meaning(self) -> str:
        """What this code tells the reader of an envelope."""
        return MEANINGS[self]

    @property
    def is_error(self) -> bool:
        """True for codes that end a call with ``isError=true``."""
        return self in _ERRORS


MEANINGS: dict[Code, str] = {
    Code.INVALID_ARGUMENT: (
        "The tool arguments did not match the tool's input schema (a missing, unknown or "
        "out-of-range argument). Nothing was sent upstream."
    ),
    Code.INVALID_INPUT: (
        "The arguments were well-formed but cannot make a meaningful request (an empty "
        "search, a year range that ends before it starts, a start past the result window). "
        "Nothing was sent upstream. This is not a zero result."
    ),
    Code.RESERVED_WORD_IN_QUERY: (
        "A search term contains a word the upstream reserves as a query operator and would "
        "reject the whole query for. Refused before sending; the diagnostic names the field."
    ),
    Code.DPID_NOT_PERMITTED: (
        "A data provider outside the ones this server declared to the library was named. "
        "Refused in process; no request was sent."
    ),
    Code.RATE_LIMITED: (
        "The upstream refused the request for load (HTTP 429) even after one polite backoff. "
        "The result is UNKNOWN, not empty: never report it as 'nothing found'."
    ),
    Code.TRANSPORT_ERROR: (
        "The upstream could not be reached or failed (connection error, timeout, HTTP 5xx). "
        "The result is unknown; trying later may succeed."
    ),
    Code.API_ERROR: (
        "The upstream answered, but with an error diagnostic or a body that could not be read "
        "safely (malformed XML, an HTML error page, a refused XML construct). The result is "
        "unknown."
    ),
    Code.DEADLINE_EXCEEDED: (
        "The tool call ran past the server's deadline and was abandoned. The result is unknown."
    ),
    Code.UNKNOWN_TOOL: "The called tool does not exist on this server.",
    Code.INTERNAL_ERROR: (
        "A defect in the server itself. The message is generic; details went to the server's "
        "stderr log."
    ),
    Code.ZERO_RESULT: (
        "The upstream searched and found no record matching every term: a genuine, "
        "checked absence for this query in these providers."
    ),
    Code.RESULT_WINDOW_CAPPED: (
        "More records match than the upstream lets anyone fetch (NDL Search: records past the "
        "500th cannot be retrieved). Narrow the query to see the rest."
    ),
    Code.COUNT_CAPPED: (
        "More records per request were asked for than this server's undertaking allows; the "
        "request was sent with the cap instead."
    ),
    Code.SCRIPT_LATIN_QUERY: (
        "A term is written in Latin letters, but the corpus indexes many records in another "
        "script (for NDL: Japanese). A romanised term under-returns; search in the record's "
        "script too before concluding anything is absent."
    ),
    Code.RECORD_UNREADABLE: (
        "One record in the upstream response could not be read into an item. It is counted, "
        "not dropped silently; the rest of the response is valid."
    ),
    Code.UPSTREAM_DIAGNOSTIC: (
        "The upstream attached a non-fatal diagnostic to an otherwise usable response; its text "
        "is passed through."
    ),
    Code.RECEIPT_NOT_DEPOSITED: (
        "No receipt ledger is configured (MCP_RECEIPT_LOG is unset), so this search was not "
        "recorded. The search itself is unaffected."
    ),
    Code.RECEIPT_WRITE_FAILED: (
        "The receipt ledger is configured but the receipt could not be written. The search "
        "itself is unaffected; the disclosure will lack this line."
    ),
}

_ERRORS = frozenset(
    {
        Code.INVALID_ARGUMENT,
        Code.INVALID_INPUT,
        Code.RESERVED_WORD_IN_QUERY,
        Code.DPID_NOT_PERMITTED,
        Code.RATE_LIMITED,
        Code.TRANSPORT_ERROR,
        Code.API_ERROR,
        Code.DEADLINE_EXCEEDED,
        Code.UNKNOWN_TOOL,
        Code.INTERNAL_ERROR,
    }
)


class CoreError(Exception):
    """An expected failure that ends a call with a typed error envelope.

    Args:
        code: the error code.
        message: one sentence for the reader; never contains a query string or body.
        details: structured facts (field names, limits, status codes).
        remediation: what the caller can do next.
    """

    def __init__(
        self,
        code: Code,
        message: str,
        *,
        details: dict[str, Any] | None = None,
        remediation: str = "",
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details or {}
        self.remediation = remediation
