"""Conformance of the DC-NDL parser with every real NDL Search sample (``<samples>/ndl``).

Every file is parsed: one result per ``<record>``, no blank items, and for each known file the
envelope values and a set of field values read by hand from the file itself.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from readingroom.ndl.diagnostics import DiagnosticKind
from readingroom.ndl.models import NdlItem, SruResponse
from readingroom.ndl.upstreams.ndl_search import PROBLEM_DC_SCHEMA, PROBLEM_STRING_PACKED, parse

from ..core.samples import no_expectation, rows_cover

# file -> (total, next_record_position, records, packing, format problem), where the format
# problem is None for dcndl in xml packing, "string" for string packing, "string+dc" for string
# packing of dc-schema records.
ENVELOPES: dict[str, tuple[int | None, int | None, int, str | None, str | None]] = {
    "ckgerteis-ndl-mcp_sru_article_zassaku.xml": (1, None, 1, "xml", None),
    "ckgerteis-ndl-mcp_sru_book_jpno.xml": (1, None, 1, "xml", None),
    "jp-lit-mcp_sru_search-ndl-articles-online.xml": (4, 2, 1, "xml", None),
    "jp-lit-mcp_sru_search-ndl-articles.xml": (3192, 3, 2, "xml", None),
    "jp-lit-mcp_sru_search-ndl-catalog-dcndl-xml.xml": (4997098, 2, 1, "xml", None),
    "jp-lit-mcp_sru_search-ndl-catalog-sort-title.xml": (4997098, 4, 3, "xml", None),
    "jp-lit-mcp_sru_search-ndl-catalog.xml": (4997098, 3, 2, "string", "string"),
    "jp-lit-mcp_sru_search-ndl-digital.xml": (5112380, 3, 2, "xml", None),
    "masinc-deno-ndl_sru_basic_search_response.xml": (7208, 4, 3, "string", "string+dc"),
    "masinc-deno-ndl_sru_explain_response.xml": (None, None, 0, None, None),
    "masinc-deno-ndl_sru_pagination_response.xml": (5663, 11, 5, "string", "string+dc"),
}


def _parse(samples: Path, name: str) -> SruResponse:
    return parse((samples / "ndl" / name).read_bytes())


def _items(samples: Path, name: str) -> list[NdlItem]:
    response = _parse(samples, name)
    assert response.unreadable == 0
    return response.items


# --- every file -------------------------------------------------------------------------------


def test_every_sample_gives_one_result_per_record(ndl_sample: Path) -> None:
    body = ndl_sample.read_bytes()
    response = parse(body)
    # A literal "<record>" is only ever an SRW record element: string-packed text is escaped.
    assert len(response.records) == body.count(b"<record>")
    for result in response.records:
        assert (result.item is None) != (result.problem is None)
    if response.format_problem is None:
        assert response.unreadable == 0
        for item in response.items:
            assert item.ndl_search_id
            assert item.title.strip()
            assert item.ndl_url.endswith(item.ndl_search_id)
            assert item.record_position is not None
            assert item.repository and item.repository.startswith("R")
    else:
        assert response.items == []
        assert all(r.problem == response.format_problem for r in response.records)


def test_every_sample_in_the_folder_has_an_envelope_row(samples: Path) -> None:
    rows_cover({p.name: p for p in (samples / "ndl").glob("*.xml")}, ENVELOPES, "ENVELOPES")


def test_every_sample_matches_its_known_envelope(ndl_sample: Path) -> None:
    expected = ENVELOPES.get(ndl_sample.name)
    if expected is None:
        no_expectation(ndl_sample, "ENVELOPES")
    total, next_position, count, packing, problem = expected
    response = parse(ndl_sample.read_bytes())
    assert response.total == total
    assert response.next_record_position == next_position
    assert len(response.records) == count
    assert response.packing == packing
    if problem is None:
        assert response.format_problem is None
        assert len(response.items) == count
    else:
        assert response.format_problem is not None
        assert PROBLEM_STRING_PACKED in response.format_problem
        assert (PROBLEM_DC_SCHEMA in response.format_problem) == (problem == "string+dc")
        assert response.items == []


# --- the book with JPNO (onlyBib) -------------------------------------------------------------


def test_ckgerteis_book(samples: Path) -> None:
    [item] = _items(samples, "ckgerteis-ndl-mcp_sru_book_jpno.xml")
    assert item.ndl_search_id == "R100000002-I000001185032"
    assert item.ndl_url == "https://ndlsearch.ndl.go.jp/books/R100000002-I000001185032"
    assert item.repository == "R100000002"
    assert item.record_type == "book"
    assert [(m.uri, m.label) for m in item.material_type] == [
        ("http://ndl.go.jp/ndltype/Book", "図書")
    ]
    assert item.jpno == "71009951"
    assert item.ndl_bib_id == "000001185032"
    assert item.title == "IMF・JC10年の歩み : 新しい労働運動を求めて 1964-1974"
    assert item.title_reading == "アイエムエフ ジェイシー ジュウネン ノ アユミ"
    [creator] = item.creators
    assert creator.name == "全日本金属産業労働組合協議会"
    assert creator.authority_uri == "http://id.ndl.go.jp/auth/entity/00310092"
    assert creator.reading and creator.reading.startswith("ゼンニホン")
    assert item.creator_statements == ["IMF・JC10周年史編纂委員会 編"]
    assert [(p.name, p.location) for p in item.publishers] == [
        ("全日本金属産業労働組合協議会", "東京")
    ]
    assert item.publication_place == "JP"
    assert (item.issued, item.year, item.date_text) == ("1976", 1976, "1976")
    assert item.languages == ["jpn"]
    assert item.extent == "366p 図 ; 27cm"
    assert item.descriptions == ["年表: p.310-365"]
    assert ("国際金属労働組合連盟日本協議会", "ndlna") in [
        (s.label, s.scheme) for s in item.subjects
    ]
    assert [(c.scheme, c.notation) for c in item.classifications] == [
        ("ndlc", "EL216"),
        ("ndc", "366.6"),
    ]
    assert item.holdings == []  # onlyBib: no dcndl:Item
    assert len(item.holding_records) == 7
    assert "https://ndlsearch.ndl.go.jp/books/R100000039-I12171469#item" in item.holding_records
    assert item.matched_in == []


def test_ckgerteis_book_facets(samples: Path) -> None:
    response = _parse(samples, "ckgerteis-ndl-mcp_sru_book_jpno.xml")
    assert response.facets["REPOSITORY_NO"] == {"R100000002": 1}
    assert response.facets["NDC"] == {"3": 1}
    assert response.facets["ISSUED_DATE"] == {"1976": 1}
    assert len(response.facets["LIBRARY"]) == 5
    assert response.version == "1.2"


# --- articles ---------------------------------------------------------------------------------


def test_ckgerteis_zassaku_article(samples: Path) -> None:
    response = _parse(samples, "ckgerteis-ndl-mcp_sru_article_zassaku.xml")
    [item] = response.items
    assert item.record_type == "article"
    assert [(m.uri, m.label) for m in item.material_type] == [
        ("http://ndl.go.jp/ndltype/Article", "記事・論文")
    ]
    assert item.repository == "R000000004"
    assert item.title == "愛国的労働運動の波紋"
    assert item.ndl_bib_id == "5173508"
    assert item.journal == "社会運動通信"
    assert item.issue == "285"
    assert item.pages == "1～2"
    assert item.volume is None and item.number is None
    assert item.date_text == "(通号 285) 1951"
    assert item.year == 1951
    assert item.access_rights == ["国立国会図書館内限定公開", "図書館・個人送信対象"]
    assert item.digitized_copies == ["https://dl.ndl.go.jp/pid/1838461"]
    assert item.is_part_of == [
        "https://id.ndl.go.jp/bib/000000010479",
        "https://dl.ndl.go.jp/pid/1838461",
    ]
    assert item.publishers[0].name == "東京 : 社会運動通信社"
    assert [(c.scheme, c.notation) for c in item.classifications] == [("ndlc", "ZE12")]
    assert len(item.holding_records) == 2
    assert response.facets["NDC"] == {}
    assert response.facets["REPOSITORY_NO"] == {"R000000004": 1}


def test_jp_lit_articles(samples: Path) -> None:
    first, second = _items(samples, "jp-lit-mcp_sru_search-ndl-articles.xml")
    assert first.alternative_titles == [
        'Honda Masujiro and Natsume Soseki\'s Translations of "Secrecy", an Essay in '
        "Arthur Helps' Essays : Written in the Intervals of Business"
    ]
    assert first.series_titles == ["第50号記念号"]
    assert first.journal == "日本英学史学会英学史研究"
    assert (first.number, first.pages) == ("50", "43-68")
    assert "http://iss.ndl.go.jp/issn/03869490" in first.is_part_of
    assert first.cinii_links == ["https://cir.nii.ac.jp/crid/1520009409428206720"]
    # The CRID of the CiNii Research Item's rdfs:seeAlso, ready for cinii-mcp (issue 22).
    [related] = first.related
    assert (related.rel, related.id_type, related.id) == ("cinii", "crid", "1520009409428206720")
    assert (related.server, related.tool) == ("cinii-mcp", "cinii_get_record")
    assert related.arguments == {"crid": "1520009409428206720"}
    assert second.related[0].id == "1523669554905158016"
    assert [(h.repository, h.agent, h.call_number) for h in first.holdings] == [
        ("R000000004", "国立国会図書館", "Z12-219"),
        ("R100000136", None, None),
    ]
    assert second.title == "嗚呼 中学国語教科書に夏目漱石と森鴎外の名前がない!"
    assert (second.volume, second.number, second.issue, second.pages) == ("43", "24", "2133", "43")
    assert second.creators == [] and second.creator_statements == []
    assert (second.issued, second.year) == ("2001-06-28", 2001)


def test_jp_lit_articles_online(samples: Path) -> None:
    [item] = _items(samples, "jp-lit-mcp_sru_search-ndl-articles-online.xml")
    assert [m.label for m in item.material_type] == ["記事・論文", "オンライン資料"]
    assert item.access_rights == ["インターネット公開"]
    assert item.relations == [
        "https://dl.ndl.go.jp/info:ndljp/pid/11449002",
        "https://dl.ndl.go.jp/pid/11449001",
    ]
    assert item.digitized_copies == item.relations
    assert item.holdings[0].agent == "国立国会図書館"


# --- books with Items -------------------------------------------------------------------------


def test_jp_lit_catalog_dcndl_xml(samples: Path) -> None:
    response = _parse(samples, "jp-lit-mcp_sru_search-ndl-catalog-dcndl-xml.xml")
    [item] = response.items
    assert response.facets["REPOSITORY_NO"] == {"R100000002": 4996561, "R100000039": 537}
    assert item.jpno == "75023117"
    assert item.creators[0].name == "小森, 典, 1915-1991"
    assert item.creators[0].reading == "コモリ, ツカサ, 1915-1991"
    assert item.publishers[0].location == "[富山]"
    assert [h.repository for h in item.holdings] == ["R100000002", "R100000039", "R100000136"]
    assert item.holdings[0].call_number == "KH286-53"
    assert item.holdings[0].local_call_number == "い97-845"
    assert item.digitized_copies == ["https://dl.ndl.go.jp/pid/12497045"]
    assert item.cinii_links == ["https://ci.nii.ac.jp/ncid/BB10363872"]
    assert item.related == []  # a CiNii Books NCID is no CRID: no link to cinii_get_record
    assert "https://doi.org/10.11501/12497045" in item.holdings[1].see_also
    assert item.doi is None  # the DOI above belongs to the digitised copy, not the book


def test_jp_lit_sort_title(samples: Path) -> None:
    items = _items(samples, "jp-lit-mcp_sru_search-ndl-catalog-sort-title.xml")
    assert [i.title for i in items] == [
        "あ : 小森典詩作品集",
        "哇 : 志摩聡句帖",
        "あ : やぶにらみ秋田経営風土記",
    ]
    assert [i.record_position for i in items] == [1, 2, 3]
    third = items[2]
    assert ("経営", "http://id.ndl.go.jp/auth/ndlsh/00565308", "ndlsh") in [
        (s.label, s.uri, s.scheme) for s in third.subjects
    ]
    assert ("ndc8", "335.04") in [(c.scheme, c.notation) for c in third.classifications]
    assert third.date_text == "1984.12" and third.year == 1984


def test_jp_lit_digital_reads_repository_from_the_admin_record(samples: Path) -> None:
    response = _parse(samples, "jp-lit-mcp_sru_search-ndl-digital.xml")
    assert response.facets["REPOSITORY_NO"]["R100000039"] == 745923
    for item in response.items:
        assert item.repository == "R100000002"  # though the search asked for dpid=ndl-dl
        assert any(h.repository == "R100000039" for h in item.holdings)
        assert item.digitized_copies


# --- refused formats and the diagnostic -------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "positions", "dc"),
    [
        ("jp-lit-mcp_sru_search-ndl-catalog.xml", [1, 2], False),
        ("masinc-deno-ndl_sru_basic_search_response.xml", [1, 2, 3], True),
        ("masinc-deno-ndl_sru_pagination_response.xml", [6, 7, 8, 9, 10], True),
    ],
)
def test_string_packed_samples_give_a_clear_problem_per_record(
    samples: Path, name: str, positions: list[int], dc: bool
) -> None:
    response = _parse(samples, name)
    assert [r.position for r in response.records] == positions
    assert response.items == []
    for result in response.records:
        assert result.problem is not None
        assert result.problem.startswith(PROBLEM_STRING_PACKED)
        assert (PROBLEM_DC_SCHEMA in result.problem) == dc
    assert response.format_problem == response.records[0].problem
    assert response.packing == "string"
    assert response.facets == {}  # extraResponseData is escaped text too


def test_masinc_pagination_envelope(samples: Path) -> None:
    response = _parse(samples, "masinc-deno-ndl_sru_pagination_response.xml")
    assert response.total == 5663
    assert response.next_record_position == 11


def test_masinc_explain_is_one_invalid_request_diagnostic(samples: Path) -> None:
    response = _parse(samples, "masinc-deno-ndl_sru_explain_response.xml")
    [diagnostic] = response.diagnostics
    assert diagnostic.kind is DiagnosticKind.INVALID_REQUEST
    assert diagnostic.message == "operation is not searchRetrieve"
    assert diagnostic.details == "An error occurred"
    assert diagnostic.uri == "info:srw/diagnostic/1/1"
    assert response.total is None
    assert response.records == []
    assert not response.zero_result


@pytest.mark.parametrize(("link", "crid"), [
    ("https://cir.nii.ac.jp/crid/1520009409428206720", "1520009409428206720"),
    ("http://cir.nii.ac.jp/crid/1520009409428206720.json", "1520009409428206720"),
    ("https://cir.nii.ac.jp/crid/1520009409428206720?lang=en", "1520009409428206720"),
    ("https://cir.nii.ac.jp/all?q=1520009409428206720", None),
    ("https://cir.nii.ac.jp/crid/15200a9409428206720", None),
    ("https://ci.nii.ac.jp/ncid/BB10363872", None),
])
def test_only_a_crid_url_becomes_a_cinii_link(samples: Path, link: str, crid: str | None) -> None:
    """The real articles sample with its CRID link rewritten (hand-made variants of it)."""
    body = (samples / "ndl" / "jp-lit-mcp_sru_search-ndl-articles.xml").read_bytes()
    body = body.replace(b"https://cir.nii.ac.jp/crid/1520009409428206720", link.encode())
    first = parse(body).items[0]
    assert [r.id for r in first.related] == ([crid] if crid else [])
