"""Regression: the provider of a record is read from the record, not from the dpid searched.

A ``dpid=ndl-dl`` (Digital Collections) search returns the R100000002 (NDL holdings) record at
the top level, with the digitised copy as a ``dcndl:Item`` of R100000039. The record's repository
is the admin record's ``dcndl:bibRecordCategory`` (or the ``R…`` prefix of its URI).
"""

from __future__ import annotations

from pathlib import Path

from readingroom.ndl.upstreams.ndl_search import parse


def test_digital_search_returns_ndl_holdings_records(samples: Path) -> None:
    response = parse((samples / "ndl" / "jp-lit-mcp_sru_search-ndl-digital.xml").read_bytes())
    assert len(response.items) == 2
    for item in response.items:
        assert item.repository == "R100000002"
        assert item.ndl_search_id.startswith("R100000002-")
        digital = [h for h in item.holdings if h.repository == "R100000039"]
        assert digital and digital[0].see_also[0].startswith("https://dl.ndl.go.jp/pid/")
