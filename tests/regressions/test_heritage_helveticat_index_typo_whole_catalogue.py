"""Regression: an unknown SRU index (``dc.title``) made Alma answer with the whole catalogue.

Alma returns 2,244,233 records, HTTP 200 and no diagnostic for an index it does not know
(research §4.5), so a typo looked like a huge result. The index is now a closed list, refused
before anything is sent, both by the tool's input model and by the service.
"""

from __future__ import annotations

import pytest
from pydantic import ValidationError
from tests.heritage.helveticat.helpers import FakeHelveticat, service_for

from readingroom.heritage.cql import build_cql
from readingroom.heritage.server import HelveticatSearchInput


@pytest.mark.anyio
async def test_index_typo_is_refused_before_sending():
    fake = FakeHelveticat(lambda r: b"")
    env = await service_for(fake).search(query="Volksschule", index="dc.title")
    assert env.error.code == "INVALID_INPUT" and "whole catalogue" in env.error.message
    assert fake.requests == []
    with pytest.raises(ValidationError):
        HelveticatSearchInput.model_validate({"query": "Volksschule", "index": "dc.title"})
    with pytest.raises(ValueError):
        build_cql("unknown_index", "x")
