"""The SRU searchRetrieve reader: every real SRU sample, hand-written SRU 2.0/1.2 cases, errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from readingroom.core import sru
from readingroom.core.errors import Code
from readingroom.core.sru import (
    SRU_1_NS,
    SRU_2_NS,
    SruDiagnostic,
    SruFormatError,
    parse_search_retrieve,
)
from readingroom.core.xmlsafe import UnsafeXmlError, XmlParseError

from .samples import no_expectation, require_sample, rows_cover, sample_params

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

RDF = "{http://www.w3.org/1999/02/22-rdf-syntax-ns#}RDF"
SRW_DC = "{info:srw/schema/1/dc-schema}dc"
MARC = "{http://www.loc.gov/MARC21/slim}record"
NDL_SCHEMA = "info:srw/schema/1/dc-v1.1"

# "<folder>/<file>" -> (version, numberOfRecords, nextRecordPosition, recordPositions,
# recordSchema of every record, recordPacking of every record, payload tag (None: string
# packed), number of diagnostics), each read by hand from the file.
Row = tuple[str | None, int | None, int | None, list[int], str | None, str | None, str | None, int]
SAMPLES: dict[str, Row] = {
    "ndl/ckgerteis-ndl-mcp_sru_article_zassaku.xml": (
        "1.2", 1, None, [1], NDL_SCHEMA, "xml", RDF, 0
    ),
    "ndl/ckgerteis-ndl-mcp_sru_book_jpno.xml": ("1.2", 1, None, [1], NDL_SCHEMA, "xml", RDF, 0),
    "ndl/jp-lit-mcp_sru_search-ndl-articles-online.xml": (
        "1.2", 4, 2, [1], NDL_SCHEMA, "xml", RDF, 0
    ),
    "ndl/jp-lit-mcp_sru_search-ndl-articles.xml": (
        "1.2", 3192, 3, [1, 2], NDL_SCHEMA, "xml", RDF, 0
    ),
    "ndl/jp-lit-mcp_sru_search-ndl-catalog-dcndl-xml.xml": (
        "1.2", 4997098, 2, [1], NDL_SCHEMA, "xml", RDF, 0
    ),
    "ndl/jp-lit-mcp_sru_search-ndl-catalog-sort-title.xml": (
        "1.2", 4997098, 4, [1, 2, 3], NDL_SCHEMA, "xml", RDF, 0
    ),
    "ndl/jp-lit-mcp_sru_search-ndl-catalog.xml": (
        "1.1", 4997098, 3, [1, 2], NDL_SCHEMA, "string", None, 0
    ),
    "ndl/jp-lit-mcp_sru_search-ndl-digital.xml": (
        "1.2", 5112380, 3, [1, 2], NDL_SCHEMA, "xml", RDF, 0
    ),
    "ndl/masinc-deno-ndl_sru_basic_search_response.xml": (
        "1.2", 7208, 4, [1, 2, 3], NDL_SCHEMA, "string", None, 0
    ),
    "ndl/masinc-deno-ndl_sru_explain_response.xml": (None, None, None, [], None, None, None, 1),
    "ndl/masinc-deno-ndl_sru_pagination_response.xml": (
        "1.2", 5663, 11, [6, 7, 8, 9, 10], NDL_SCHEMA, "string", None, 0
    ),
    "heritage/helveticat_sru_dc_sammlung_3of12675.xml": (
        "1.2", 12675, 4, [1, 2, 3], "dc", "xml", SRW_DC, 0
    ),
    "heritage/helveticat_sru_dc_volksschule_zuerich_4hits.xml": (
        "1.2", 4, None, [1, 2, 3, 4], "dc", "xml", SRW_DC, 0
    ),
    "heritage/swisscovery_slsp_sru_marcxml_pestalozzi.xml": (
        "1.2", 9899, 3, [1, 2], "marcxml", "xml", MARC, 0
    ),
}

REAL_SRU = [
    *sample_params("ndl", "*.xml"),
    *sample_params("heritage", "*_sru_*.xml"),
]


def _real(samples: Path, key: str) -> sru.SruResponse:
    return parse_search_retrieve((samples / key).read_bytes())


def test_all_is_honest() -> None:
    assert sorted(sru.__all__) == [
        "DIAGNOSTIC_1_NS",
        "DIAGNOSTIC_2_NS",
        "SRU_1_NS",
        "SRU_2_NS",
        "SURROGATE_DIAGNOSTIC_SCHEMA",
        "SruDiagnostic",
        "SruFormatError",
        "SruRecord",
        "SruResponse",
        "parse_search_retrieve",
    ]
    for name in sru.__all__:
        assert getattr(sru, name) is not None


# --- every real SRU sample --------------------------------------------------------------------


@pytest.mark.parametrize("path", REAL_SRU)
def test_every_real_sample_matches_its_row(path: Path | None) -> None:
    path = require_sample(path, "ndl or heritage")
    key = f"{path.parent.name}/{path.name}"
    expected = SAMPLES.get(key)
    if expected is None:
        no_expectation(path, "SAMPLES")
    version, total, next_position, positions, schema, packing, payload, diagnostics = expected
    response = parse_search_retrieve(path.read_bytes())
    # Every real sample is SRU 1.x, in the SRW namespace.
    assert response.namespace == SRU_1_NS
    assert not response.is_sru2
    assert response.version == version
    assert response.number_of_records == total
    assert response.next_record_position == next_position
    assert [r.position for r in response.records] == positions
    assert len(response.diagnostics) == diagnostics
    assert response.echoed_request == {}
    for record in response.records:
        assert record.schema == schema
        assert record.packing == packing
        assert record.record_data is not None
        assert record.surrogate_diagnostic is None
        if payload is None:
            assert record.payload is None
            assert record.text and record.text.startswith("<")
        else:
            assert record.payload is not None and record.payload.tag == payload
            assert record.text is None


def test_every_real_sru_sample_has_a_row(samples: Path) -> None:
    found = {f"ndl/{p.name}": p for p in (samples / "ndl").glob("*.xml")}
    found |= {f"heritage/{p.name}": p for p in (samples / "heritage").glob("*_sru_*.xml")}
    rows_cover(found, SAMPLES, "SAMPLES")


def test_helveticat_record_identifiers_and_alma_extra_data(samples: Path) -> None:
    response = _real(samples, "heritage/helveticat_sru_dc_volksschule_zuerich_4hits.xml")
    assert [r.identifier for r in response.records] == [
        "991016034239703976",
        "991013546879703976",
        "991007416129703976",
        "991010715149703976",
    ]
    extra = response.extra_response_data
    assert extra is not None
    xb = "{http://www.exlibris.com/repository/search/xmlbeans/}"
    assert extra.findtext(f"{xb}exact") == "true"
    assert extra.findtext(f"{xb}responseDate") == "2026-09-20T15:12:24+0200"
    first = response.records[0].payload
    assert first is not None
    dc = "{http://purl.org/dc/elements/1.1/}"
    assert first.findtext(f"{dc}title") == "[Diverses, Freie Schule Aussersihl]"


def test_helveticat_sammlung_page_one_of_many(samples: Path) -> None:
    response = _real(samples, "heritage/helveticat_sru_dc_sammlung_3of12675.xml")
    assert [r.identifier for r in response.records] == [
        "991018035429403976",
        "991001691509703976",
        "991015430649703976",
    ]
    assert (response.number_of_records, response.next_record_position) == (12675, 4)


def test_swisscovery_marcxml_payload_is_the_marc_record_not_the_srw_one(samples: Path) -> None:
    response = _real(samples, "heritage/swisscovery_slsp_sru_marcxml_pestalozzi.xml")
    assert [r.identifier for r in response.records] == ["991047009599705501", "991071601659705501"]
    marc = response.records[0].payload
    assert marc is not None
    assert marc.findtext("{http://www.loc.gov/MARC21/slim}controlfield") == "991047009599705501"


def test_ndl_facets_stay_in_extra_response_data(samples: Path) -> None:
    response = _real(samples, "ndl/ckgerteis-ndl-mcp_sru_book_jpno.xml")
    extra = response.extra_response_data
    assert extra is not None
    lists = extra.findall(f"{{{SRU_1_NS}}}facets/{{{SRU_1_NS}}}lst")
    assert [lst.get("name") for lst in lists] == ["REPOSITORY_NO", "NDC", "ISSUED_DATE", "LIBRARY"]


def test_ndl_string_packed_extra_response_data_is_text(samples: Path) -> None:
    response = _real(samples, "ndl/jp-lit-mcp_sru_search-ndl-catalog.xml")
    extra = response.extra_response_data
    assert extra is not None and len(extra) == 0
    assert "<facets>" in (extra.text or "")
    assert all("rdf:RDF" in (r.text or "") for r in response.records)


def test_ndl_diagnostic_sample(samples: Path) -> None:
    response = _real(samples, "ndl/masinc-deno-ndl_sru_explain_response.xml")
    assert response.diagnostics == (
        SruDiagnostic(
            uri="info:srw/diagnostic/1/1",
            message="operation is not searchRetrieve",
            details="An error occurred",
        ),
    )
    assert response.records == ()
    assert response.number_of_records is None


# --- hand-written edge cases (tests/fixtures/sru, shaped after the SRU specifications) --------


def test_sru_2_0_response() -> None:
    response = parse_search_retrieve((FIXTURES / "sru" / "sru2_search_retrieve.xml").read_bytes())
    assert response.namespace == SRU_2_NS
    assert response.is_sru2
    assert response.version == "2.0"
    assert (response.number_of_records, response.next_record_position) == (25, 3)
    assert response.result_set_id == "rs-1"
    first, second = response.records
    # SRU 2.0's recordPacking means packed/unpacked; the escaping is recordXMLEscaping.
    assert first.packing == "xml"
    assert first.identifier == "id-1"
    assert first.payload is not None and first.payload.tag == SRW_DC
    assert first.surrogate_diagnostic is None
    assert second.position == 2
    assert second.surrogate_diagnostic == SruDiagnostic(
        uri="info:srw/diagnostic/1/64", message="Record temporarily unavailable", details=None
    )
    assert response.diagnostics == (
        SruDiagnostic(
            uri="info:srw/diagnostic/1/68",
            message="Too many records requested",
            details="maximumRecords",
        ),
    )
    assert response.echoed_request == {
        "version": "2.0",
        "query": "dc.title = test",
        "startRecord": "1",
        "maximumRecords": "2",
        "recordXMLEscaping": "xml",
        "recordSchema": "info:srw/schema/1/dc-v1.1",
    }


def test_sru_1_2_prefixed_with_echoed_request_and_string_packing() -> None:
    body = (FIXTURES / "sru" / "sru12_echoed_request_string_packing.xml").read_bytes()
    response = parse_search_retrieve(body)
    assert response.namespace == SRU_1_NS
    assert response.version == "1.2"
    [record] = response.records
    assert record.packing == "string"
    assert record.payload is None
    assert record.text == '<srw_dc:dc xmlns:srw_dc="info:srw/schema/1/dc-schema"/>'
    assert response.echoed_request == {
        "version": "1.2",
        "query": "dc.title = test",
        "startRecord": "1",
        "maximumRecords": "1",
        "recordPacking": "string",
        "recordSchema": "dc",
    }
    assert response.extra_response_data is None


def test_zero_records_and_missing_parts() -> None:
    response = parse_search_retrieve(
        b'<searchRetrieveResponse xmlns="http://www.loc.gov/zing/srw/"><version>1.2</version>'
        b"<numberOfRecords>0</numberOfRecords><nextRecordPosition>0</nextRecordPosition>"
        b"</searchRetrieveResponse>"
    )
    assert response.number_of_records == 0
    assert response.next_record_position == 0  # kept as sent; callers decide what 0 means
    assert response.records == () and response.diagnostics == ()


_SRW = b'<searchRetrieveResponse xmlns="http://www.loc.gov/zing/srw/">'


@pytest.mark.parametrize(("body", "problem"), [
    (b"<numberOfRecords>many</numberOfRecords><records>oops</records>",
     ["<numberOfRecords> is 'many', not a count", "<records> holds text instead of <record>"]),
    (b"<numberOfRecords>-1</numberOfRecords>", ["<numberOfRecords> is '-1', not a count"]),
    (b"<numberOfRecords>4</numberOfRecords><nextRecordPosition>NaN</nextRecordPosition>",
     ["<nextRecordPosition> is 'NaN', not a count"]),
    (b"<numberOfRecords>2</numberOfRecords><records><unexpected/></records>",
     ["<records> holds <unexpected> where <record> belongs"]),
    (b"<numberOfRecords><x/></numberOfRecords>", ["<numberOfRecords> holds elements"]),
])
def test_damaged_counts_and_records_are_problems_not_zero(body: bytes,
                                                          problem: list[str]) -> None:
    response = parse_search_retrieve(_SRW + body + b"</searchRetrieveResponse>")
    assert len(response.problems) == len(problem)
    for found, expected in zip(response.problems, problem, strict=True):
        assert found.startswith(expected)
    if b"<numberOfRecords>4" not in body and b"<numberOfRecords>2" not in body:
        assert response.number_of_records is None  # never a fabricated 0


def test_well_formed_answers_have_no_problems(samples: Path) -> None:
    for path in sorted((samples / "heritage").glob("*sru*.xml")):
        assert parse_search_retrieve(path.read_bytes()).problems == (), path.name


def test_record_without_record_data() -> None:
    [record] = parse_search_retrieve(
        b'<searchRetrieveResponse xmlns="http://www.loc.gov/zing/srw/"><records><record>'
        b"<recordPosition>7</recordPosition></record></records></searchRetrieveResponse>"
    ).records
    assert record.position == 7
    assert record.record_data is None and record.payload is None and record.text is None


# --- refused bodies ---------------------------------------------------------------------------


def test_not_sru_is_a_typed_api_error() -> None:
    with pytest.raises(SruFormatError) as info:
        parse_search_retrieve(b"<feed xmlns='http://www.w3.org/2005/Atom'/>")
    assert isinstance(info.value, XmlParseError)
    assert info.value.code is Code.API_ERROR
    assert info.value.details == {"reason": "not_sru"}
    assert str(info.value) == "The upstream answer is not an SRU searchRetrieve response."


def test_xhtml_page_is_a_typed_api_error() -> None:
    with pytest.raises(SruFormatError) as info:
        parse_search_retrieve((FIXTURES / "ndl" / "error_page_xhtml.html").read_bytes())
    assert info.value.details == {"reason": "html"}
    assert info.value.code is Code.API_ERROR


@pytest.mark.parametrize("name", ["xxe_external_entity.xml", "billion_laughs.xml"])
def test_hostile_bodies_are_refused(name: str) -> None:
    with pytest.raises(UnsafeXmlError) as info:
        parse_search_retrieve((FIXTURES / "ndl" / name).read_bytes())
    assert info.value.code is Code.API_ERROR


def test_malformed_body_is_a_parse_error() -> None:
    with pytest.raises(XmlParseError) as info:
        parse_search_retrieve((FIXTURES / "ndl" / "truncated_mid_record.xml").read_bytes())
    assert not isinstance(info.value, SruFormatError)
    assert info.value.details["reason"] == "malformed"
