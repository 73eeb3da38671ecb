"""The DC-NDL record reader on hand-written fixtures, inline edge cases and canned files."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from readingroom.core.errors import Code, CoreError
from readingroom.core.sru import SruFormatError
from readingroom.core.xmlsafe import UnsafeXmlError, XmlParseError
from readingroom.ndl import diagnostics, models
from readingroom.ndl.diagnostics import DiagnosticKind, UpstreamDiagnostic
from readingroom.ndl.models import NdlItem, RecordResult, SruResponse
from readingroom.ndl.upstreams import ndl_search as records
from readingroom.ndl.upstreams.ndl_search import parse

TESTS = Path(__file__).resolve().parents[1]
FIXTURES = TESTS / "fixtures" / "ndl"
_APP = TESTS.parent / "app" / "readingroom"
# The canned self-test responses move from setup/ to ndl/ in issue 7; read them where they are.
CANNED = next(
    (p for p in (_APP / "ndl" / "canned", _APP / "setup" / "canned") if p.is_dir()),
    _APP / "ndl" / "canned",
)

RDF_OPEN = (
    '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" '
    'xmlns:rdfs="http://www.w3.org/2000/01/rdf-schema#" '
    'xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/" '
    'xmlns:dcndl="http://ndl.go.jp/dcndl/terms/" xmlns:foaf="http://xmlns.com/foaf/0.1/">'
)
BOOKS = "https://ndlsearch.ndl.go.jp/books/"


def _fixture(name: str) -> SruResponse:
    return parse((FIXTURES / name).read_bytes())


def _one_record(resource_body: str, *, token: str = "R100000002-I900000000009") -> bytes:
    """A one-record response with the given description properties (real record shape)."""
    rdf = (
        f'{RDF_OPEN}<dcndl:BibAdminResource rdf:about="{BOOKS}{token}">'
        "<dcterms:description>type : book</dcterms:description>"
        "<dcndl:bibRecordCategory>R100000002</dcndl:bibRecordCategory>"
        f'<dcndl:record rdf:resource="{BOOKS}{token}#material"/></dcndl:BibAdminResource>'
        f'<dcndl:BibResource rdf:about="{BOOKS}{token}#material">{resource_body}'
        "</dcndl:BibResource></rdf:RDF>"
    )
    return (
        '<searchRetrieveResponse xmlns="http://www.loc.gov/zing/srw/"><version>1.2</version>'
        "<numberOfRecords>1</numberOfRecords><records><record>"
        "<recordSchema>info:srw/schema/1/dc-v1.1</recordSchema>"
        f"<recordPacking>xml</recordPacking><recordData>{rdf}</recordData>"
        "<recordPosition>1</recordPosition></record></records></searchRetrieveResponse>"
    ).encode()


def _item(resource_body: str) -> NdlItem:
    result = parse(_one_record(resource_body))
    assert result.records[0].problem is None
    item = result.records[0].item
    assert item is not None
    return item


# --- exports ---------------------------------------------------------------------------------


def test_exports() -> None:
    for module, names in (
        (records, ("parse",)),
        (models, ("SruResponse", "RecordResult", "NdlItem")),
        (diagnostics, ("UpstreamDiagnostic", "DiagnosticKind", "DIAGNOSTIC_TABLE")),
    ):
        for name in names:
            assert name in module.__all__


def test_all_is_honest() -> None:
    assert sorted(records.__all__) == [
        "DEFAULT_ENDPOINT",
        "ENV_NDL_SRU_URL",
        "MAX_RECORDS",
        "MIN_REQUEST_INTERVAL",
        "NdlClient",
        "PROBLEM_DC_SCHEMA",
        "PROBLEM_OTHER_SCHEMA",
        "PROBLEM_STRING_PACKED",
        "RESULT_WINDOW",
        "SruExchange",
        "parse",
        "read_record",
    ]
    assert sorted(models.__all__) == [
        "Classification",
        "Creator",
        "Holding",
        "MaterialType",
        "NdlItem",
        "Publisher",
        "RecordResult",
        "Related",
        "SruResponse",
        "Subject",
    ]
    for module in (records, models):
        for name in module.__all__:
            assert getattr(module, name) is not None


# --- hand-written fixtures --------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["record_does_not_exist.xml", "record_does_not_exist_no_details.xml"]
)
def test_record_does_not_exist_is_a_zero_result(name: str) -> None:
    response = _fixture(name)
    assert response.total is None
    assert response.records == []
    assert response.zero_result
    [diagnostic] = response.diagnostics
    assert diagnostic.uri == "info:srw/diagnostic/1/1"
    assert diagnostic.message == "Record does not exist"
    assert diagnostic.kind is DiagnosticKind.NO_RECORDS


def test_record_does_not_exist_keeps_details_apart() -> None:
    [diagnostic] = _fixture("record_does_not_exist.xml").diagnostics
    assert diagnostic.details == "An error occurred"
    [bare] = _fixture("record_does_not_exist_no_details.xml").diagnostics
    assert bare.details is None


def test_illegal_query_syntax() -> None:
    response = _fixture("illegal_query_syntax.xml")
    [diagnostic] = response.diagnostics
    assert diagnostic == UpstreamDiagnostic(
        uri="info:srw/diagnostic/1/1",
        message="illegal query syntax",
        details="An error occurred",
        kind=DiagnosticKind.QUERY_SYNTAX,
    )
    assert not response.zero_result
    assert response.total is None


@pytest.mark.parametrize("name", ["maintenance_503.html", "error_page_xhtml.html"])
def test_html_error_pages_raise_api_error(name: str) -> None:
    with pytest.raises(XmlParseError) as info:
        _fixture(name)
    assert info.value.code is Code.API_ERROR
    assert info.value.details["reason"] == "html"
    # A DOCTYPE html page is refused by xmlsafe itself; a parsable XHTML page by the SRU reader.
    assert isinstance(info.value, SruFormatError) == (name == "error_page_xhtml.html")


def test_truncated_response_is_a_parse_error_not_a_short_result() -> None:
    with pytest.raises(XmlParseError) as info:
        _fixture("truncated_mid_record.xml")
    assert info.value.details["reason"] == "malformed"


@pytest.mark.parametrize("name", ["xxe_external_entity.xml", "billion_laughs.xml"])
def test_hostile_documents_are_refused(name: str) -> None:
    with pytest.raises(UnsafeXmlError) as info:
        _fixture(name)
    assert isinstance(info.value, CoreError)
    assert "root:" not in str(info.value)


def test_one_unreadable_record_is_counted_and_the_rest_parse() -> None:
    response = _fixture("one_record_unreadable.xml")
    assert [r.position for r in response.records] == [1, 2, 3, 4]
    assert response.unreadable == 2
    assert [i.title for i in response.items] == ["吾輩は猫である", "坊っちゃん"]
    assert response.records[1].item is None
    assert "BibResource" in (response.records[1].problem or "")
    assert response.records[2].item is None
    assert response.records[2].problem == "record has no title"
    assert response.format_problem is None
    for result in response.records:
        assert (result.item is None) != (result.problem is None)


def test_dc_schema_in_xml_packing_gives_a_problem_per_record() -> None:
    response = _fixture("dc_schema_xml_packing.xml")
    assert len(response.records) == 2
    assert response.items == []
    assert all(r.problem == records.PROBLEM_DC_SCHEMA for r in response.records)
    assert response.format_problem == records.PROBLEM_DC_SCHEMA
    assert response.packing == "xml"


def test_not_an_sru_response() -> None:
    with pytest.raises(XmlParseError) as info:
        parse(b"<feed xmlns='http://www.w3.org/2005/Atom'/>")
    assert info.value.details["reason"] == "not_sru"
    assert isinstance(info.value, SruFormatError)
    assert info.value.code is Code.API_ERROR


# --- inline edge cases ------------------------------------------------------------------------


def test_identifiers_land_in_their_own_fields() -> None:
    dt = "http://ndl.go.jp/dcndl/terms/"
    item = _item(
        f'<dcterms:identifier rdf:datatype="{dt}ISBN">978-4-7649-0405-7</dcterms:identifier>'
        f'<dcterms:identifier rdf:datatype="{dt}ISSN">0386-9490</dcterms:identifier>'
        f'<dcterms:identifier rdf:datatype="{dt}ISSNL">0386-9490</dcterms:identifier>'
        f'<dcterms:identifier rdf:datatype="{dt}DOI">10.11501/12497045</dcterms:identifier>'
        f'<dcterms:identifier rdf:datatype="{dt}TOHANMARCNO">12345678</dcterms:identifier>'
        f'<dcterms:identifier rdf:datatype="{dt}NDLBibID">900000000009</dcterms:identifier>'
        "<dcterms:identifier>loose</dcterms:identifier>"
        "<dcterms:title>こころ</dcterms:title>"
    )
    assert item.isbn == ["978-4-7649-0405-7"]
    assert item.issn == ["0386-9490"]
    assert item.doi == "10.11501/12497045"
    assert item.ndl_bib_id == "900000000009"
    assert item.jpno is None
    assert item.other_identifiers == {
        "ISSNL": ["0386-9490"],
        "TOHANMARCNO": ["12345678"],
        "untyped": ["loose"],
    }


def test_title_falls_back_to_dc_title_value() -> None:
    item = _item(
        "<dc:title><rdf:Description><rdf:value>坊っちゃん</rdf:value>"
        "<dcndl:transcription>ボッチャン</dcndl:transcription></rdf:Description></dc:title>"
    )
    assert item.title == "坊っちゃん"
    assert item.title_reading == "ボッチャン"


def test_year_comes_from_issued_not_from_the_free_date() -> None:
    item = _item(
        "<dcterms:title>t</dcterms:title><dcterms:date>43(24) (通号 2133) 2001.6.28</dcterms:date>"
        '<dcterms:issued rdf:datatype="http://purl.org/dc/terms/W3CDTF">2001-06-28</dcterms:issued>'
    )
    assert item.issued == "2001-06-28"
    assert item.year == 2001
    assert item.date_text == "43(24) (通号 2133) 2001.6.28"


def test_subjects_and_classifications() -> None:
    item = _item(
        "<dcterms:title>t</dcterms:title>"
        '<dcterms:subject><rdf:Description rdf:about="http://id.ndl.go.jp/auth/ndlsh/00565308">'
        "<rdf:value>経営</rdf:value></rdf:Description></dcterms:subject>"
        '<dcterms:subject rdf:resource="http://id.ndl.go.jp/class/ndc9/411.3"/>'
        '<dc:subject rdf:datatype="http://ndl.go.jp/dcndl/terms/NDC8">335.04</dc:subject>'
    )
    assert [(s.label, s.scheme) for s in item.subjects] == [("経営", "ndlsh"), (None, "ndc9")]
    assert [(c.scheme, c.notation) for c in item.classifications] == [
        ("ndc9", "411.3"),
        ("ndc8", "335.04"),
    ]


def test_creator_without_agent_uri_and_publisher_place_in_name() -> None:
    item = _item(
        "<dcterms:title>t</dcterms:title>"
        "<dcterms:creator><foaf:Agent><foaf:name>上別府 親志</foaf:name></foaf:Agent>"
        "</dcterms:creator><dc:creator>上別府 親志</dc:creator>"
        "<dcterms:publisher><foaf:Agent><foaf:name>東京 : 社会運動通信社</foaf:name>"
        "</foaf:Agent></dcterms:publisher>"
    )
    assert [(c.name, c.authority_uri) for c in item.creators] == [("上別府 親志", None)]
    assert item.creator_statements == ["上別府 親志"]
    assert item.publishers[0].name == "東京 : 社会運動通信社"
    assert item.publishers[0].location is None


def test_a_record_without_recorddata_is_a_problem() -> None:
    body = (
        b'<searchRetrieveResponse xmlns="http://www.loc.gov/zing/srw/">'
        b"<numberOfRecords>1</numberOfRecords><records><record>"
        b"<recordPosition>1</recordPosition></record></records></searchRetrieveResponse>"
    )
    [result] = parse(body).records
    assert result == RecordResult(position=1, item=None, problem="record has no recordData")


def test_next_record_position_zero_is_none() -> None:
    body = (
        b'<searchRetrieveResponse xmlns="http://www.loc.gov/zing/srw/"><version>1.2</version>'
        b"<numberOfRecords>0</numberOfRecords><nextRecordPosition>0</nextRecordPosition>"
        b"</searchRetrieveResponse>"
    )
    response = parse(body)
    assert response.total == 0
    assert response.next_record_position is None
    assert response.packing is None
    assert response.facets == {}


def test_ndl_item_forbids_unknown_fields_and_documents_every_field() -> None:
    with pytest.raises(ValidationError):
        NdlItem(ndl_search_id="x", ndl_url="u", title="t", romanised_title="x")  # type: ignore[call-arg]
    for name, info in NdlItem.model_fields.items():
        assert info.description, name


def test_matched_in_is_left_empty() -> None:
    assert _item("<dcterms:title>t</dcterms:title>").matched_in == []


# --- canned self-test responses ---------------------------------------------------------------


def test_canned_books() -> None:
    response = parse((CANNED / "books.xml").read_bytes())
    assert response.total == 1234
    assert response.next_record_position == 4
    assert response.format_problem is None
    assert response.facets["REPOSITORY_NO"] == {"R100000002": 1234}
    assert [i.title for i in response.items] == ["吾輩は猫である", "こころ", "坊っちゃん"]
    for item in response.items:
        assert item.record_type == "book"
        assert item.repository == "R100000002"
        assert item.creators[0].name == "夏目, 漱石, 1867-1916"
        assert item.holdings and item.holding_records


def test_canned_articles() -> None:
    response = parse((CANNED / "articles.xml").read_bytes())
    assert response.total == 2
    assert response.next_record_position is None
    assert len(response.items) == 2
    for item in response.items:
        assert item.record_type == "article"
        assert item.material_type[0].label == "記事・論文"
        assert item.journal and item.pages
    assert response.items[1].pages == "p21～35"
    assert response.items[1].issue == "3"


def test_canned_no_records() -> None:
    response = parse((CANNED / "no_records.xml").read_bytes())
    assert response.zero_result
    assert [d.kind for d in response.diagnostics] == [DiagnosticKind.NO_RECORDS]


def test_canned_query_syntax() -> None:
    response = parse((CANNED / "query_syntax.xml").read_bytes())
    assert [d.kind for d in response.diagnostics] == [DiagnosticKind.QUERY_SYNTAX]
    assert not response.zero_result
