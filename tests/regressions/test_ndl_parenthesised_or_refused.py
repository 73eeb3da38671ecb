"""NDL refuses every parenthesised OR ("illegal query syntax"), so several providers are
asked for with the one form the specification documents: ``dpid any "a b"`` (table 3-3).

Evidence: japan-apis.md 1.4 (measured refusal by ckgerteis, 2026-08-23).
"""

from __future__ import annotations

from readingroom.ndl.cql import build_record_query, build_search_query
from readingroom.ndl.sources import ALL_DPIDS


def test_multi_provider_query_has_no_parentheses_and_one_dpid_clause():
    q = build_search_query({"anywhere": "漱石"}, list(ALL_DPIDS))
    assert "(" not in q.cql and ")" not in q.cql
    assert q.cql.count("dpid") == 1
    assert q.cql.endswith('dpid any "' + " ".join(ALL_DPIDS) + '"')


def test_single_provider_uses_plain_equality():
    q = build_search_query({"title": "こころ"}, ["zassaku"])
    assert q.cql.endswith('dpid="zassaku"')


def test_record_lookup_is_also_parenthesis_free():
    for q, _ in build_record_query(ndl_bib_id="5173508"):
        assert "(" not in q.cql
