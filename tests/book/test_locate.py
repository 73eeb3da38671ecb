"""Locators: finding passages in the raw source text, and refusing stale or edited ones."""

from __future__ import annotations

import pytest

from readingroom.book.locate import SourceText, _checksum, check_locator, parse_locator
from readingroom.book.model import SourceUnit
from readingroom.core.errors import Code, CoreError

UNITS = [
    SourceUnit("pdf_page", 0, "Der erste Satz. Deﬁnition 1\nEin topologi-", label="i"),
    SourceUnit("pdf_page", 1, "scher Raum ist da. 日本\n語のテキスト。", label="1"),
    SourceUnit("pdf_page", 2, "Noch einmal Deﬁnition 1 hier.", label="2"),
]


def source(version: int = 1) -> SourceText:
    return SourceText(UNITS, book_id="b", version=version, source_sha256="a" * 64)


def test_passage_across_a_page_break_is_verified_with_both_pages():
    _, spans = source().find("topologischer Raum")
    assert len(spans) == 1
    loc = source().locator(*spans[0])
    assert (loc.page_index, loc.page_label, loc.page_end_index, loc.page_end_label) == (
        0, "i", 1, "1")
    assert loc.quote == "topologi-\nscher Raum"
    assert check_locator(loc, source()) == spans[0]


def test_repeated_phrase_gives_every_candidate():
    _, spans = source().find("definition 1")  # ligature ﬁ folded, case folded
    assert [s[0][0] for s in spans] == [0, 2]


def test_japanese_wrapped_line_is_joined():
    _, spans = source().find("日本語のテキスト")
    assert len(spans) == 1 and source().span_text(*spans[0]) == "日本\n語のテキスト"


def test_unit_range_narrows():
    _, spans = source().find("definition 1", unit_range=(1, 2))
    assert [s[0][0] for s in spans] == [2]


def test_not_found_and_empty_query():
    assert source().find("nicht vorhanden")[1] == []
    with pytest.raises(CoreError) as e:
        source().find("   ")
    assert e.value.code is Code.INVALID_ARGUMENT


def test_edited_locator_is_invalid():
    loc = source().locator(*source().find("Raum ist da")[1][0])
    for change in ({"char_start": loc.char_start + 1}, {"page_label": "99"},
                   {"quote": "something else"}):
        with pytest.raises(CoreError) as e:
            check_locator(loc.model_copy(update=change), source())
        assert e.value.code is Code.INVALID_LOCATOR


@pytest.mark.parametrize("change", [{"quote": "forged"}, {"page_label": "99"},
                                    {"page_index": 2}, {"kind": "epub_chapter"},
                                    {"fragment": "x"}, {"span_sha256": "0" * 64}])
def test_edited_locator_with_a_recomputed_checksum_is_invalid_naming_the_field(change):
    loc = source().locator(*source().find("Raum ist da")[1][0])
    forged = loc.model_copy(update=change)
    forged = forged.model_copy(update={"checksum": _checksum(forged.model_dump(mode="json"))})
    with pytest.raises(CoreError) as e:
        check_locator(forged, source())
    assert e.value.code is Code.INVALID_LOCATOR
    assert e.value.details["fields"] == list(change)


def test_a_damaged_checksum_alone_is_invalid():
    loc = source().locator(*source().find("Raum ist da")[1][0])
    with pytest.raises(CoreError) as e:
        check_locator(loc.model_copy(update={"checksum": "0" * 32}), source())
    assert e.value.details["fields"] == ["checksum"]


def test_oversized_or_deeply_nested_locator_text_is_invalid():
    for text in ("[" * 100_000, " " * 70_000):
        with pytest.raises(CoreError) as e:
            parse_locator(text)
        assert e.value.code is Code.INVALID_LOCATOR


def test_locator_from_another_version_is_stale():
    loc = source(1).locator(*source(1).find("Raum ist da")[1][0])
    with pytest.raises(CoreError) as e:
        check_locator(loc, source(2))
    assert e.value.code is Code.STALE_LOCATOR


def test_locator_for_another_book_is_invalid():
    loc = source().locator(*source().find("Raum ist da")[1][0])
    other = SourceText(UNITS, book_id="c", version=1, source_sha256="a" * 64)
    with pytest.raises(CoreError) as e:
        check_locator(loc, other)
    assert e.value.code is Code.INVALID_LOCATOR


def test_locator_round_trips_through_json():
    loc = source().locator(*source().find("Raum ist da")[1][0])
    again = parse_locator(loc.model_dump_json())
    assert again == loc and check_locator(again, source())
    with pytest.raises(CoreError) as e:
        parse_locator("{not json")
    assert e.value.code is Code.INVALID_LOCATOR
