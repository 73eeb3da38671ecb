"""Regression: the ``recordSchema`` element says ``dc-v1.1`` even for dcndl records.

Every real response, whatever ``recordSchema`` was requested, labels its records
``info:srw/schema/1/dc-v1.1``. A parser that trusted the label would read DC-NDL records as simple
Dublin Core (or refuse them). The payload decides: ``rdf:RDF`` is DC-NDL, ``srw_dc:dc`` is dc.
"""

from __future__ import annotations

from pathlib import Path

from readingroom.ndl.upstreams.ndl_search import PROBLEM_DC_SCHEMA, parse

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ndl"
LABEL = b"<recordSchema>info:srw/schema/1/dc-v1.1</recordSchema>"


def test_dcndl_records_labelled_dc_parse_as_dcndl(samples: Path) -> None:
    body = (samples / "ndl" / "jp-lit-mcp_sru_search-ndl-catalog-dcndl-xml.xml").read_bytes()
    assert LABEL in body
    [item] = parse(body).items
    assert item.jpno == "75023117"


def test_the_label_is_not_consulted() -> None:
    body = (FIXTURES / "stub_before_description.xml").read_bytes()
    for label in (b"info:srw/schema/1/dcndl", b"something else", b""):
        changed = body.replace(LABEL, b"<recordSchema>" + label + b"</recordSchema>")
        assert [i.title for i in parse(changed).items] == ["こころ"]


def test_dc_payload_is_recognised_by_its_element() -> None:
    response = parse((FIXTURES / "dc_schema_xml_packing.xml").read_bytes())
    assert response.items == []
    assert response.format_problem == PROBLEM_DC_SCHEMA
