"""What NDL Search's SRU diagnostics mean, read from their message text.

Every NDL diagnostic carries the same URI (``info:srw/diagnostic/1/1``), so the meaning is in the
``<message>``: :data:`DIAGNOSTIC_TABLE` maps the messages of the NDL API specification (表3-5) to a
:class:`DiagnosticKind`. NDL reports an empty result as the diagnostic ``Record does not exist``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from ..core.sru import SruDiagnostic

__all__ = [
    "DIAGNOSTIC_TABLE",
    "DiagnosticKind",
    "UpstreamDiagnostic",
    "classify",
    "classify_diagnostic",
]


class DiagnosticKind(StrEnum):
    """What an NDL SRU diagnostic means, read from its message."""

    NO_RECORDS = "no_records"
    """``Record does not exist``: NDL's way of reporting a successful search with zero hits."""
    QUERY_SYNTAX = "query_syntax"
    """``illegal query syntax``: the CQL was refused (reserved AND/OR, bad parentheses)."""
    INVALID_REQUEST = "invalid_request"
    """A request parameter was refused (operation, version, missing query, illegal values)."""
    OTHER = "other"
    """A message this parser does not know."""


DIAGNOSTIC_TABLE: tuple[tuple[re.Pattern[str], DiagnosticKind], ...] = (
    (re.compile(r"\brecord does not exist\b", re.IGNORECASE), DiagnosticKind.NO_RECORDS),
    (re.compile(r"\billegal query syntax\b", re.IGNORECASE), DiagnosticKind.QUERY_SYNTAX),
    (re.compile(r"\billegal \w+ value\b", re.IGNORECASE), DiagnosticKind.INVALID_REQUEST),
    (re.compile(r"\bversion must be\b", re.IGNORECASE), DiagnosticKind.INVALID_REQUEST),
    (re.compile(r"\bquery must be present\b", re.IGNORECASE), DiagnosticKind.INVALID_REQUEST),
    (
        re.compile(r"\boperation is not searchRetrieve\b", re.IGNORECASE),
        DiagnosticKind.INVALID_REQUEST,
    ),
)
"""NDL's diagnostic messages (spec 表3-5), first match wins; anything else is ``OTHER``."""


def classify_diagnostic(message: str | None) -> DiagnosticKind:
    """Classify an NDL diagnostic by its message text through :data:`DIAGNOSTIC_TABLE`.

    Args:
        message: the diagnostic's ``<message>`` text.

    Returns:
        The first matching kind, or ``DiagnosticKind.OTHER``.
    """
    if message:
        for pattern, kind in DIAGNOSTIC_TABLE:
            if pattern.search(message):
                return kind
    return DiagnosticKind.OTHER


@dataclass(frozen=True, slots=True)
class UpstreamDiagnostic:
    """One SRU diagnostic as NDL sent it, with its classification.

    Attributes:
        uri: the ``<uri>`` (always ``info:srw/diagnostic/1/1`` at NDL: it carries no meaning).
        message: the ``<message>`` text, which does carry the meaning.
        details: the ``<details>`` text (NDL sends "An error occurred" or nothing).
        kind: the classification of ``message``.
    """

    uri: str | None
    message: str | None
    details: str | None
    kind: DiagnosticKind


def classify(diagnostic: SruDiagnostic) -> UpstreamDiagnostic:
    """Classify one SRU diagnostic read by :func:`readingroom.core.sru.parse_search_retrieve`.

    Args:
        diagnostic: the diagnostic as the SRU reader gives it.

    Returns:
        The same diagnostic with its :class:`DiagnosticKind`.
    """
    message = diagnostic.message
    return UpstreamDiagnostic(
        uri=diagnostic.uri,
        message=message,
        details=diagnostic.details,
        # Only when there is no message at all is details the best evidence.
        kind=classify_diagnostic(message if message is not None else diagnostic.details),
    )
