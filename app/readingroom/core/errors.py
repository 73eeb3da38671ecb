"""The suite's one vocabulary of error and diagnostic codes, and its typed exceptions.

Every code is documented by its meaning, for the reader of an envelope. A code names a
*kind of outcome*, not a place in the code: a rate-limited search and a malformed query
mean different things to a scholar and so carry different codes.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, ClassVar

__all__ = ["Code", "CoreError", "FixedError"]


class Code(StrEnum):
    """Error and diagnostic codes of the whole suite.

    Error codes end a call (``isError=true``); diagnostic codes qualify a successful one.
    The enum's members carry their meaning as ``Code.X.meaning``.
    """

    # --- errors: the call produced no answer --------------------------------------------
    INVALID_ARGUMENT = "INVALID_ARGUMENT"
    INVALID_INPUT = "INVALID_INPUT"
    RESERVED_WORD_IN_QUERY = "RESERVED_WORD_IN_QUERY"
    PROVIDER_NOT_PERMITTED = "PROVIDER_NOT_PERMITTED"
    RATE_LIMITED = "RATE_LIMITED"
    TRANSPORT_ERROR = "TRANSPORT_ERROR"
    API_ERROR = "API_ERROR"
    DEADLINE_EXCEEDED = "DEADLINE_EXCEEDED"
    UNKNOWN_TOOL = "UNKNOWN_TOOL"
    INTERNAL_ERROR = "INTERNAL_ERROR"
    UNSUPPORTED_FORMAT = "UNSUPPORTED_FORMAT"
    ENCRYPTED_SOURCE = "ENCRYPTED_SOURCE"
    CORRUPT_SOURCE = "CORRUPT_SOURCE"
    EMPTY_SOURCE = "EMPTY_SOURCE"
    UNSAFE_SOURCE = "UNSAFE_SOURCE"
    BOOK_EXISTS = "BOOK_EXISTS"
    BOOK_NOT_FOUND = "BOOK_NOT_FOUND"
    BOOK_NOT_ALLOWED = "BOOK_NOT_ALLOWED"
    NOT_FOUND = "NOT_FOUND"
    STALE_LOCATOR = "STALE_LOCATOR"
    INVALID_LOCATOR = "INVALID_LOCATOR"
    PATH_NOT_ALLOWED = "PATH_NOT_ALLOWED"
    CAPABILITY_UNAVAILABLE = "CAPABILITY_UNAVAILABLE"
    BOOK_BUSY = "BOOK_BUSY"
    PATH_UNUSABLE = "PATH_UNUSABLE"
    BOOK_DAMAGED = "BOOK_DAMAGED"
    NOT_CONFIGURED = "NOT_CONFIGURED"
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
    Code.PROVIDER_NOT_PERMITTED: (
        "A data provider or collection outside the ones this server declared to its upstream "
        "was named. Refused in process; no request was sent."
    ),
    Code.RATE_LIMITED: (
        "The upstream refused the request for load (HTTP 429) even after the polite backoff. "
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
        "The tool call ran past the server's deadline (counted from its arrival, time spent "
        "waiting for a free slot included) and was abandoned. The result is unknown."
    ),
    Code.UNKNOWN_TOOL: "The called tool does not exist on this server.",
    Code.INTERNAL_ERROR: (
        "A defect in the server itself. The message is generic; details went to the server's "
        "stderr log."
    ),
    Code.UNSUPPORTED_FORMAT: (
        "The file is not a format book-agent reads (PDF, EPUB 2/3, Markdown). Nothing was "
        "registered."
    ),
    Code.ENCRYPTED_SOURCE: (
        "The source file is encrypted or password-protected. Nothing was registered."
    ),
    Code.CORRUPT_SOURCE: (
        "The source file is damaged or not what its name says (a broken PDF, a ZIP that is "
        "not a readable EPUB). Nothing was registered."
    ),
    Code.EMPTY_SOURCE: (
        "The source has nothing to register: zero pages or chapters, or (without "
        "--allow-image-only) no text layer on any page."
    ),
    Code.UNSAFE_SOURCE: (
        "The source was refused for safety: a ZIP bomb, a path outside the container, an "
        "ambiguous archive (two entries of one name), markup nested too deep to read without "
        "losing text, or an XML construct (entities, DTD) that could read files or exhaust "
        "memory."
    ),
    Code.BOOK_EXISTS: "A book with this id is already registered (use --replace to rebuild).",
    Code.BOOK_NOT_FOUND: "No registered book has this id (or this server does not serve it).",
    Code.BOOK_NOT_ALLOWED: (
        "This server instance was started for one book and serves no other id (whether or "
        "not a book of that id is registered). Use the served id, or a server started "
        "without a book id."
    ),
    Code.NOT_FOUND: "The requested record, heading, page, path or image does not exist.",
    Code.STALE_LOCATOR: (
        "The locator was issued for another package version of the book (or another source "
        "file); the text it points at may have moved. Locate the passage again."
    ),
    Code.INVALID_LOCATOR: (
        "The locator is malformed or was edited by hand (its fields do not agree with the "
        "package)."
    ),
    Code.PATH_NOT_ALLOWED: (
        "A path outside the allowed folder (the Book Skill, the EPUB container) was asked for."
    ),
    Code.CAPABILITY_UNAVAILABLE: (
        "The book or this build lacks the capability asked for (e.g. render on an EPUB, "
        "images in a PDF)."
    ),
    Code.BOOK_BUSY: (
        "Another book-agent process is changing this book right now (an init is building a "
        "version, or a removal or publish holds its lock). Nothing was changed; try again "
        "when it has finished."
    ),
    Code.PATH_UNUSABLE: (
        "A file or folder given on the command line cannot be used as asked: it is missing, "
        "is a folder where a file is wanted (or the reverse), is not readable or writable, or "
        "the disk refused the write. Nothing was written there."
    ),
    Code.BOOK_DAMAGED: (
        "A file of the book's package is missing, truncated or changed since it was built "
        "(details.file names it; its CURRENT pointer may name a missing version). The book "
        "cannot be read or verified until it is rebuilt with book-agent init SOURCE --id ID "
        "--replace (or removed); other books are unaffected."
    ),
    Code.NOT_CONFIGURED: (
        "The server lacks a setting its upstream requires (an application id or API key), so "
        "nothing was sent. The result is unknown, not empty; the remediation says what to set "
        "and where to get it."
    ),
    Code.ZERO_RESULT: (
        "The upstream searched and found no record matching every term: a genuine, "
        "checked absence for this query in these providers."
    ),
    Code.RESULT_WINDOW_CAPPED: (
        "More records match than the upstream lets anyone fetch (it serves only the first N "
        "of a result set, whatever the start position). Narrow the query to see the rest."
    ),
    Code.COUNT_CAPPED: (
        "More records per request were asked for than this server allows (an undertaking to "
        "the upstream, or the upstream's own limit); the "
        "request was sent with the cap instead."
    ),
    Code.SCRIPT_LATIN_QUERY: (
        "A term is written in Latin letters, but the corpus indexes many records in another "
        "script (Japanese, Chinese, Arabic...). A romanised term under-returns; search in the "
        "record's script too before concluding anything is absent."
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
        Code.PROVIDER_NOT_PERMITTED,
        Code.RATE_LIMITED,
        Code.TRANSPORT_ERROR,
        Code.API_ERROR,
        Code.DEADLINE_EXCEEDED,
        Code.UNKNOWN_TOOL,
        Code.INTERNAL_ERROR,
        Code.UNSUPPORTED_FORMAT,
        Code.ENCRYPTED_SOURCE,
        Code.CORRUPT_SOURCE,
        Code.EMPTY_SOURCE,
        Code.UNSAFE_SOURCE,
        Code.BOOK_EXISTS,
        Code.BOOK_NOT_FOUND,
        Code.BOOK_NOT_ALLOWED,
        Code.NOT_FOUND,
        Code.STALE_LOCATOR,
        Code.INVALID_LOCATOR,
        Code.PATH_NOT_ALLOWED,
        Code.CAPABILITY_UNAVAILABLE,
        Code.BOOK_BUSY,
        Code.PATH_UNUSABLE,
        Code.BOOK_DAMAGED,
        Code.NOT_CONFIGURED,
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


class FixedError(CoreError):
    """A kind of failure whose code and remediation are fixed: a subclass sets
    :attr:`error_code` and :attr:`remediation_text`, a raise gives the message and details."""

    error_code: ClassVar[Code]
    remediation_text: ClassVar[str]

    def __init__(self, message: str, *, details: dict[str, Any] | None = None) -> None:
        super().__init__(type(self).error_code, message, details=details,
                         remediation=type(self).remediation_text)
