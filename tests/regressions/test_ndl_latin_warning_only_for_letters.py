"""SCRIPT_LATIN_QUERY is raised for terms with Latin letters only, not for identifier digits.

Evidence: japan-apis.md 6.3 — digit-only identifier searches (ISBN, ISSN, NDC) must not raise
the romaji warning, or readers learn to ignore it.
"""

from __future__ import annotations

import pytest

from readingroom.core.errors import Code, CoreError
from readingroom.ndl.service import NdlService
from readingroom.ndl.upstreams.ndl_search import NdlClient


@pytest.mark.anyio
@pytest.mark.parametrize("fields,latin", [
    ({"isbn": "4-00-310101-4"}, False),
    ({"issn": "0387-3250", "ndc": "913.6"}, False),
    ({"title": "こころ"}, False),
    ({"title": "Kokoro"}, True),
    ({"creator": "Ｓｏｓｅｋｉ"}, True),
])
async def test_latin_warning(fields, latin):
    service = NdlService(NdlClient("https://ndl.test/api/sru"), env={})

    async def unreachable(cql, *, start, count):
        raise CoreError(Code.TRANSPORT_ERROR, "offline")

    service.client.search_retrieve = unreachable  # diagnostics are made before sending
    env = await service.search("ndl_search_books", ["iss-ndl-opac"], fields)
    assert env.error is not None and env.error.code == Code.TRANSPORT_ERROR
    warned = {d.field for d in env.diagnostics if d.code == Code.SCRIPT_LATIN_QUERY}
    assert bool(warned) is latin
