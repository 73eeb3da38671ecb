"""The closed-world CQL builder: indexes, match kinds, refusals before sending."""

from __future__ import annotations

import pytest

from readingroom.core.errors import Code, CoreError
from readingroom.ndl.cql import FIELD_RULES, build_record_query, build_search_query


def test_fields_combine_with_and_and_dpid_comes_last():
    q = build_search_query({"title": "吾輩は猫である", "creator": "夏目漱石"}, ["iss-ndl-opac"])
    assert q.cql == 'title="吾輩は猫である" AND creator="夏目漱石" AND dpid="iss-ndl-opac"'
    assert [(t.field, t.index, t.match) for t in q.terms] == [
        ("title", "title", "partial"), ("creator", "creator", "partial")]


def test_each_field_reports_the_match_kind_ndl_fixes_for_its_index():
    q = build_search_query(
        {"ndc": "913.6", "isbn": "978-4-7649-0405-7", "issn": "03873250", "subject": "文学"},
        ["iss-ndl-opac"],
    )
    kinds = {t.field: (t.index, t.match) for t in q.terms}
    assert kinds == {"subject": ("subject", "partial"), "ndc": ("ndc", "prefix"),
                     "isbn": ("isbn", "exact"), "issn": ("issn", "exact")}
    assert 'isbn="9784764904057"' in q.cql  # digits only
    assert 'issn="0387-3250"' in q.cql


def test_years_use_from_and_until_in_the_same_format():
    q = build_search_query({"title": "こころ", "from_year": 914, "to_year": 1920},
                           ["iss-ndl-opac"])
    assert 'from="0914" AND until="1920"' in q.cql
    assert [t.match for t in q.terms if t.field.endswith("_year")] == ["range", "range"]


def test_year_range_backwards_is_invalid_input():
    with pytest.raises(CoreError) as e:
        build_search_query({"title": "x", "from_year": 2000, "to_year": 1990}, ["zassaku"])
    assert e.value.code is Code.INVALID_INPUT


@pytest.mark.parametrize("fields", [{}, {"title": "  "}, {"from_year": 1990, "to_year": 2000}])
def test_empty_search_is_invalid_input_not_a_zero_result(fields):
    with pytest.raises(CoreError) as e:
        build_search_query(fields, ["iss-ndl-opac"])
    assert e.value.code is Code.INVALID_INPUT


@pytest.mark.parametrize("term", ['say "hello"', "back\\slash", "bell\x07here"])
def test_terms_that_would_be_cql_syntax_are_refused(term):
    with pytest.raises(CoreError) as e:
        build_search_query({"title": term}, ["iss-ndl-opac"])
    assert e.value.code is Code.INVALID_INPUT


def test_whitespace_including_ideographic_space_is_folded():
    q = build_search_query({"title": " 夏目\u3000 漱石 "}, ["iss-ndl-opac"])
    assert q.terms[0].term == "夏目 漱石"


@pytest.mark.parametrize("field,value", [("isbn", "12345"), ("issn", "12-34"), ("ndc", "9 1 3")])
def test_malformed_identifiers_are_refused(field, value):
    with pytest.raises(CoreError) as e:
        build_search_query({field: value}, ["iss-ndl-opac"])
    assert e.value.code is Code.INVALID_INPUT
    assert e.value.details["field"] == field


def test_unknown_dpid_refused_with_the_permitted_list():
    with pytest.raises(CoreError) as e:
        build_search_query({"title": "x"}, ["iss-ndl-opac", "ndl-dl"])
    assert e.value.code is Code.PROVIDER_NOT_PERMITTED
    assert e.value.details["refused"] == ["ndl-dl"]
    assert "ndl-dl-open" in e.value.details["permitted"]


def test_every_field_rule_has_a_tool_argument_and_an_index():
    assert set(FIELD_RULES) == {"title", "creator", "publisher", "subject", "anywhere", "ndc",
                                "isbn", "issn", "from_year", "to_year"}


def test_record_query_by_jpno_is_exact_and_restricted_to_the_five():
    [(q, field)] = build_record_query(jpno="71009951")
    assert field == "jpno"
    assert q.cql.startswith('jpno="71009951" AND dpid any "')
    assert "anywhere" not in q.cql
    for dpid in ("iss-ndl-opac", "iss-ndl-opac-national", "zassaku", "zassaku-online",
                 "ndl-dl-open"):
        assert dpid in q.cql


def test_record_query_by_bib_id_tries_catalogue_then_periodicals_index_tokens():
    attempts = build_record_query(ndl_bib_id="000001185032")
    assert [q.cql.split(" AND ")[0] for q, _ in attempts] == [
        'itemno="R100000002-I000001185032"', 'itemno="R000000004-I000001185032"']


@pytest.mark.parametrize("kwargs", [{}, {"jpno": "1", "ndl_bib_id": "2"}, {"jpno": "abc"},
                                    {"ndl_search_id": "not-a-token"}])
def test_record_query_needs_exactly_one_valid_identifier(kwargs):
    with pytest.raises(CoreError) as e:
        build_record_query(**kwargs)
    assert e.value.code is Code.INVALID_INPUT
