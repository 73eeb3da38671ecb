"""Regression: two ``dcndl:BibResource`` elements with one ``rdf:about`` are one resource.

NDL writes the description in one element and the manifestation's ``dcndl:record`` links (every
holding and copy) in a second element with the same ``rdf:about``. An earlier client kept only
the element with a title, searched across the whole response: the holdings links were lost, and a
record whose description lacked a title vanished silently. They must be merged, per record.
"""

from __future__ import annotations

from pathlib import Path

from readingroom.ndl.upstreams.ndl_search import parse

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ndl"


def test_stub_links_are_kept_on_the_one_item(samples: Path) -> None:
    response = parse((samples / "ndl" / "ckgerteis-ndl-mcp_sru_book_jpno.xml").read_bytes())
    [result] = response.records
    assert result.item is not None
    assert result.item.title.startswith("IMF・JC10年の歩み")
    assert len(result.item.holding_records) == 7


def test_one_item_per_record_not_per_bibresource(samples: Path) -> None:
    body = (samples / "ndl" / "jp-lit-mcp_sru_search-ndl-articles.xml").read_bytes()
    assert body.count(b"<dcndl:BibResource ") == 4
    response = parse(body)
    assert len(response.items) == 2
    assert [len(i.holding_records) for i in response.items] == [2, 2]


def test_merge_does_not_depend_on_element_order() -> None:
    response = parse((FIXTURES / "stub_before_description.xml").read_bytes())
    [item] = response.items
    assert item.title == "こころ"
    assert item.holding_records == [
        "https://ndlsearch.ndl.go.jp/books/R100000002-I900000000002#item"
    ]
