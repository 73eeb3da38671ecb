"""The page rule (shape.py), the SIKART/SNM cursor (paging.py), bounded JSON (egress.py)."""

from __future__ import annotations

import pytest

from readingroom.core.errors import Code, CoreError
from readingroom.heritage import paging
from readingroom.heritage.egress import containers_for, decode_json
from readingroom.heritage.shape import TOO_DEEP, bounded, count_of, page_of, text_of


@pytest.mark.parametrize(("value", "count", "noted"), [
    (12, 12, False), ("12", 12, False), (None, None, False), (0, 0, False),
    ("oops", None, True), (-1, None, True), (True, None, True), (1.5, None, True),
    ([], None, True), ("9" * 40, None, True),
])
def test_a_count_is_a_number_or_unknown_never_zero(value, count, noted):
    found, why = count_of(value)
    assert found == count and bool(why) is noted


def test_text_of_takes_only_scalars():
    assert (text_of("a"), text_of(3), text_of(True), text_of({"a": 1})) == ("a", "3", None, None)


def test_bounded_cuts_deep_values_and_counts_them():
    deep: object = "bottom"
    for _ in range(5000):
        deep = [deep]
    cut = [0]
    kept = bounded({"a": deep, "b": [1, {"c": 2}]}, 4, cut)
    assert kept["b"] == [1, {"c": 2}] and cut == [1]
    assert kept["a"][0][0] == [TOO_DEEP]  # 4 levels: the mapping and three lists


def _page(records, total, **kw):
    return page_of("X", records, total, readable=lambda r: isinstance(r, dict), **kw)


def test_page_rule():
    page = _page([{"a": 1}] * 3, 10, offset=0, limit=3)
    assert (len(page.rows), page.total, page.has_more, page.notes) == (3, 10, True, [])
    over = _page([{}] * 5, 5, offset=0, limit=2)
    assert len(over.rows) == 2 and over.has_more and over.notes[0][0] is Code.COUNT_CAPPED
    unknown = _page([{}] * 3, "oops", offset=0, limit=3)
    assert unknown.total is None and unknown.has_more  # a full page pages on
    short = _page([{}] * 2, None, offset=0, limit=3)
    assert short.total is None and not short.has_more
    inconsistent = _page([{}] * 3, 1, offset=0, limit=5)
    assert inconsistent.total is None
    assert _page([], 0, offset=3, limit=3).total == 0  # past the end of nothing: fine
    some = _page([{}, None], 2, offset=0, limit=5)
    assert len(some.rows) == 1 and some.notes[0][0] is Code.RECORD_UNREADABLE


@pytest.mark.parametrize(("records", "total", "reason"), [
    ("oops", 3, "container_not_a_list"),
    ({"a": 1}, 3, "container_not_a_list"),
    ([None, None, 3], 3, "every_record_unreadable"),
    ([], 9, "count_without_records"),
    ([], "many", "count_unreadable"),
])
def test_damaged_pages_are_errors(records, total, reason):
    with pytest.raises(CoreError) as err:
        _page(records, total, offset=0, limit=5)
    assert err.value.code is Code.API_ERROR and err.value.details["reason"] == reason


def test_cursor_round_trip_and_refusals():
    cursor = paging.OffsetCursor("sik_isea", 3, True, paging.fingerprint("Alberto  Giacometti"))
    text = paging.encode(cursor)
    assert paging.decode(text, kind="sik_isea", query="alberto giacometti") == cursor
    for bad, kind, query in ((text, "snm", "alberto giacometti"),
                             (text, "sik_isea", "Diego Giacometti"),
                             ("!!", "sik_isea", "x"), ("e30", "sik_isea", "x"),
                             ("x" * 600, "sik_isea", "x")):
        with pytest.raises(CoreError) as err:
            paging.decode(bad, kind=kind, query=query)
        assert err.value.code is Code.INVALID_INPUT


def test_json_is_decoded_within_its_container_budget():
    assert decode_json(b'{"a": [1, 2]}', containers_for(1)) == {"a": [1, 2]}
    with pytest.raises(CoreError) as err:
        decode_json(b"[" + b"{}," * 5000 + b"{}]", containers_for(1))
    assert err.value.details["reason"] == "too_many_items"
    with pytest.raises(CoreError) as deep:
        decode_json(b"[" * 5000 + b"]" * 5000, 10**6)
    assert deep.value.details["reason"] == "nested too deeply"
    with pytest.raises(CoreError) as bad:
        decode_json(b"\xff", 10)
    assert bad.value.details["reason"] == "not UTF-8"
