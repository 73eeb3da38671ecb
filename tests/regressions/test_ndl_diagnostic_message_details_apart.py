"""Regression: a diagnostic's ``message`` and ``details`` are read apart, never concatenated.

An earlier client joined every text node of the diagnostic (uri + details + message) and matched
on the result. The message is what carries the meaning; ``details`` is usually the generic
"An error occurred", and the URI is the same for every NDL diagnostic.
"""

from __future__ import annotations

from pathlib import Path

from readingroom.ndl.diagnostics import DiagnosticKind
from readingroom.ndl.upstreams.ndl_search import parse

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ndl"


def test_message_and_details_are_separate_fields(samples: Path) -> None:
    body = (samples / "ndl" / "masinc-deno-ndl_sru_explain_response.xml").read_bytes()
    [diagnostic] = parse(body).diagnostics
    assert diagnostic.message == "operation is not searchRetrieve"
    assert diagnostic.details == "An error occurred"
    assert diagnostic.uri == "info:srw/diagnostic/1/1"


def test_classification_uses_the_message_not_the_details() -> None:
    body = (FIXTURES / "illegal_query_syntax.xml").read_bytes()
    swapped = body.replace(b"An error occurred", b"Record does not exist")
    [diagnostic] = parse(swapped).diagnostics
    assert diagnostic.kind is DiagnosticKind.QUERY_SYNTAX
