"""Regression: ``recordPacking=string`` (NDL's default) delivers records as escaped text.

With string packing each ``recordData`` (and ``extraResponseData``) is XML escaped into text. A
parser looking for elements finds none and would report an empty page or blank items. Each record
must instead carry a problem that says how to fix the request, and the response a
``format_problem``; the text is not unescaped and parsed.
"""

from __future__ import annotations

from pathlib import Path

from readingroom.ndl.upstreams.ndl_search import PROBLEM_STRING_PACKED, parse

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ndl"


def test_hand_written_string_packed_record() -> None:
    response = parse((FIXTURES / "string_packed.xml").read_bytes())
    [result] = response.records
    assert result.item is None
    assert result.problem == PROBLEM_STRING_PACKED
    assert "request recordPacking=xml" in (response.format_problem or "")
    assert response.total == 1
    assert response.packing == "string"


def test_real_string_packed_catalog(samples: Path) -> None:
    response = parse((samples / "ndl" / "jp-lit-mcp_sru_search-ndl-catalog.xml").read_bytes())
    assert len(response.records) == 2
    assert response.items == []
    assert response.format_problem == PROBLEM_STRING_PACKED
    assert response.total == 4997098
