"""ndl_get_record must query an exact index within the declared sets, never free text.

Evidence: japan-apis.md 6.4 — a fetch by identifier through `anywhere` can match the number
inside another record's notes; an exact index cannot.
"""

from __future__ import annotations

import pytest

from readingroom.ndl.cql import build_record_query
from readingroom.ndl.sources import ALL_DPIDS


@pytest.mark.parametrize("kwargs,index", [
    ({"jpno": "71009951"}, "jpno"),
    ({"ndl_bib_id": "000001185032"}, "itemno"),
    ({"ndl_search_id": "R000000004-I5173508"}, "itemno"),
])
def test_record_queries_use_exact_indexes_restricted_to_the_five(kwargs, index):
    for built, _field in build_record_query(**kwargs):
        first, restrict = built.cql.split(" AND ")
        assert first.startswith(f'{index}="')
        assert restrict == 'dpid any "' + " ".join(ALL_DPIDS) + '"'
        assert all(t.match == "exact" for t in built.terms)
        assert "anywhere" not in built.cql
