"""Regression: one blanket licence string stood for records that carry their own.

e-rara and e-manuscripta items say ``dc:rights`` ``PDM 1.0``; a Helveticat MARC record may
say it in 540. The item now carries its own ``rights`` and ``licence``; a record that says
nothing gets no licence invented.
"""

from __future__ import annotations

from pathlib import Path

from tests.heritage.helveticat.helpers import hand

from readingroom.core.oaipmh import parse_oai
from readingroom.core.sru import parse_search_retrieve
from readingroom.heritage.dublin_core import parse_dc_record
from readingroom.heritage.marc21 import parse_marc_record

PDM = {"name": "Public Domain Mark 1.0",
       "url": "https://creativecommons.org/publicdomain/mark/1.0/"}


def test_erara_items_carry_the_public_domain_mark(samples: Path):
    resp = parse_oai((samples / "heritage" / "erara_oai_listrecords_oai_dc.xml").read_bytes())
    items = [parse_dc_record(r.metadata) for r in resp.records]
    assert [i["licence"] for i in items] == [PDM, PDM]
    assert [i["rights"] for i in items] == [["PDM 1.0"], ["PDM 1.0"]]


def test_marc_540_licence_and_no_invented_licence(samples: Path):
    page = parse_oai(hand("oai_listrecords_marc21_page1_token.xml"))
    assert parse_marc_record(page.records[0].metadata)["licence"] == PDM
    assert "licence" not in parse_marc_record(page.records[2].metadata)
    sru = parse_search_retrieve(
        (samples / "heritage" / "helveticat_sru_dc_sammlung_3of12675.xml").read_bytes())
    assert all("licence" not in parse_dc_record(r.payload) for r in sru.records)
