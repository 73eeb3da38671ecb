"""The national bibliography is dpid iss-ndl-opac-national, not the seed's misspelling.

Evidence: ckgerteis/ndl-mcp CHANGELOG 1.0.1 and NDL 附録1 (japan-apis.md 0): the misspelled
'iss-ndl-opacnational' named no provider and returned a clean zero with no diagnostic.
"""

from __future__ import annotations

import pytest

from readingroom.core.errors import Code, CoreError
from readingroom.ndl.cql import build_search_query
from readingroom.ndl.server import tool_specs
from readingroom.ndl.sources import ALL_DPIDS


def test_declared_set_uses_the_corrected_spelling():
    assert "iss-ndl-opac-national" in ALL_DPIDS
    assert "iss-ndl-opacnational" not in ALL_DPIDS


def test_the_misspelling_is_refused_not_sent():
    with pytest.raises(CoreError) as e:
        build_search_query({"title": "x"}, ["iss-ndl-opacnational"])
    assert e.value.code is Code.PROVIDER_NOT_PERMITTED


def test_national_bibliography_tool_queries_the_corrected_dpid():
    spec = {t.name: t for t in tool_specs(service=None)}["ndl_search_national_bibliography"]
    assert "iss-ndl-opac-national" in spec.description
