"""NDL's diagnostic classification: the message-text table and the classified diagnostic."""

from __future__ import annotations

import pytest

from readingroom.core.sru import SruDiagnostic
from readingroom.ndl import diagnostics
from readingroom.ndl.diagnostics import (
    DIAGNOSTIC_TABLE,
    DiagnosticKind,
    UpstreamDiagnostic,
    classify,
    classify_diagnostic,
)


def test_all_is_honest() -> None:
    assert sorted(diagnostics.__all__) == [
        "DIAGNOSTIC_TABLE",
        "DiagnosticKind",
        "UpstreamDiagnostic",
        "classify",
        "classify_diagnostic",
    ]
    for name in diagnostics.__all__:
        assert getattr(diagnostics, name) is not None


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        ("Record does not exist", DiagnosticKind.NO_RECORDS),
        ("illegal query syntax", DiagnosticKind.QUERY_SYNTAX),
        ("illegal startRecord value", DiagnosticKind.INVALID_REQUEST),
        ("illegal maximumRecords value", DiagnosticKind.INVALID_REQUEST),
        ("illegal recordPacking value", DiagnosticKind.INVALID_REQUEST),
        ("illegal recordSchema value", DiagnosticKind.INVALID_REQUEST),
        ("illegal sortKeys value", DiagnosticKind.INVALID_REQUEST),
        ("illegal mediaType value", DiagnosticKind.INVALID_REQUEST),
        ("version must be 1.1 or 1.2", DiagnosticKind.INVALID_REQUEST),
        ("query must be present", DiagnosticKind.INVALID_REQUEST),
        ("operation is not searchRetrieve", DiagnosticKind.INVALID_REQUEST),
        ("An error occurred", DiagnosticKind.OTHER),
        ("", DiagnosticKind.OTHER),
        (None, DiagnosticKind.OTHER),
    ],
)
def test_diagnostic_classification(message: str | None, kind: DiagnosticKind) -> None:
    assert classify_diagnostic(message) is kind


def test_diagnostic_table_is_one_tuple_of_pattern_kind_rows() -> None:
    assert isinstance(DIAGNOSTIC_TABLE, tuple)
    assert all(isinstance(kind, DiagnosticKind) for _, kind in DIAGNOSTIC_TABLE)
    assert {kind for _, kind in DIAGNOSTIC_TABLE} == set(DiagnosticKind) - {DiagnosticKind.OTHER}


def test_classify_keeps_the_fields_and_reads_the_message() -> None:
    diagnostic = SruDiagnostic(
        uri="info:srw/diagnostic/1/1", message="illegal query syntax", details="An error occurred"
    )
    assert classify(diagnostic) == UpstreamDiagnostic(
        uri="info:srw/diagnostic/1/1",
        message="illegal query syntax",
        details="An error occurred",
        kind=DiagnosticKind.QUERY_SYNTAX,
    )


def test_classify_falls_back_to_details_only_without_a_message() -> None:
    bare = SruDiagnostic(uri=None, message=None, details="Record does not exist")
    assert classify(bare).kind is DiagnosticKind.NO_RECORDS
    # A message, even an unknown one, wins over details.
    worded = SruDiagnostic(uri=None, message="An error occurred", details="Record does not exist")
    assert classify(worded).kind is DiagnosticKind.OTHER
