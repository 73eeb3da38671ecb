"""Regression: a record that cannot be read is counted, never dropped.

Filtering out records without a title made ``returned`` smaller than the records received, with
no diagnostic. Every ``<record>`` gives one result: an item, or a problem (the service reports it
as ``RECORD_UNREADABLE``).
"""

from __future__ import annotations

from pathlib import Path

from readingroom.ndl.upstreams.ndl_search import parse

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ndl"


def test_results_match_records_one_to_one() -> None:
    body = (FIXTURES / "one_record_unreadable.xml").read_bytes()
    response = parse(body)
    assert len(response.records) == body.count(b"<record>") == 4
    assert len(response.items) + response.unreadable == 4
    assert response.unreadable == 2
    assert all(r.problem for r in response.records if r.item is None)
