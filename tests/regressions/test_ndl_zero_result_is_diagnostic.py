"""Regression: NDL reports zero hits as a diagnostic, not as ``numberOfRecords`` 0.

A search with no hits answers (HTTP 200) with ``info:srw/diagnostic/1/1`` and the message
``Record does not exist``, and no ``numberOfRecords``. Mapped to an error, a genuine absence would
read as a failure; the parser must classify it as ``NO_RECORDS`` and not raise.
"""

from __future__ import annotations

from pathlib import Path

from readingroom.ndl.diagnostics import DiagnosticKind
from readingroom.ndl.upstreams.ndl_search import parse

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ndl"


def test_record_does_not_exist_is_a_zero_result_not_an_error() -> None:
    response = parse((FIXTURES / "record_does_not_exist.xml").read_bytes())
    assert response.zero_result
    assert response.total is None
    assert response.records == []
    assert [d.kind for d in response.diagnostics] == [DiagnosticKind.NO_RECORDS]


def test_other_diagnostics_are_not_zero_results() -> None:
    response = parse((FIXTURES / "illegal_query_syntax.xml").read_bytes())
    assert not response.zero_result
    assert [d.kind for d in response.diagnostics] == [DiagnosticKind.QUERY_SYNTAX]
