"""The declaration agrees with the modules, and the self-test passes against its fakes."""

from __future__ import annotations

import pytest

from readingroom.catalog import SERVERS
from readingroom.heritage import SERVER, URL_SETTINGS
from readingroom.heritage.fake import PREFIXES
from readingroom.heritage.sources import ENV_CKAN, ENV_DODIS, ENV_MEMOBASE
from readingroom.heritage.upstreams.helveticat import HELVETICAT_OAI_URL, HELVETICAT_SRU_URL


def test_one_catalogue_line_and_the_settings_match():
    assert SERVERS[SERVER.name] is SERVER and SERVER.prefix == "heritage_"
    names = {s.name for s in SERVER.settings}
    assert names == {n for n, _w, _d in URL_SETTINGS} == set(PREFIXES.values())
    assert {ENV_CKAN, ENV_MEMOBASE, ENV_DODIS, HELVETICAT_SRU_URL, HELVETICAT_OAI_URL} == names


@pytest.mark.slow
def test_self_test_passes():
    from readingroom.heritage.selftest import run_self_test

    report = run_self_test()
    assert report.ok, report.render()
    assert len(report.checks) >= 10
