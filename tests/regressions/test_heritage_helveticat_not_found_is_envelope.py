"""Regression: heritage_get_publication answered an unknown id with a plain string.

Now it is a failure envelope with ``NOT_FOUND`` (and the source credited), never a string and
never an empty success.
"""

from __future__ import annotations

import pytest
from tests.heritage.helveticat.helpers import FakeHelveticat, hand, service_for


@pytest.mark.anyio
async def test_unknown_identifier_is_a_not_found_envelope():
    fake = FakeHelveticat(lambda r: hand("oai_error_id_does_not_exist.xml"))
    env = await service_for(fake).get_publication("990000000000000009")
    assert env.error is not None and env.error.code == "NOT_FOUND"
    assert env.error.details["identifier"] == "oai:helveticat.nb.admin.ch:990000000000000009"
    assert env.items == [] and env.sources[0].status == "empty" and env.attribution
    assert env.receipt is not None
    assert env.to_data()["error"]["code"] == "NOT_FOUND"
