"""Regression: ``dcndl:transcription`` is a katakana reading, not a romanisation.

An earlier client put the katakana reading in a field named "romanized". DC-NDL has no romanised
title; the item exposes the reading as ``title_reading`` and has no romanisation field at all.
"""

from __future__ import annotations

from pathlib import Path

from readingroom.ndl.models import NdlItem
from readingroom.ndl.upstreams.ndl_search import parse


def test_reading_is_katakana(samples: Path) -> None:
    body = (samples / "ndl" / "ckgerteis-ndl-mcp_sru_article_zassaku.xml").read_bytes()
    [item] = parse(body).items
    assert item.title_reading == "アイコクテキ ロウドウ ウンドウ ノ ハモン"


def test_no_field_claims_to_be_a_romanisation() -> None:
    assert not [name for name in NdlItem.model_fields if "roman" in name]
