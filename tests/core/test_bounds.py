"""core.bounds: a body is counted before it is parsed and refused past the caller's limit."""

from __future__ import annotations

import pytest

from readingroom.core import bounds
from readingroom.core.errors import Code, CoreError


def _refusal(kind: str):
    def build(value: object) -> CoreError:
        return CoreError(Code.API_ERROR, f"{kind}: {value}", details={"reason": kind,
                                                                       "value": value})
    return build


def test_a_per_record_limit_grows_with_the_records_asked_and_counts_at_least_one():
    page = bounds.PerRecord(base=20, per_record=10)
    assert [page.limit(n) for n in (0, 1, 2, 50)] == [30, 30, 40, 520]


def test_counts_are_upper_bounds_of_what_a_parse_builds():
    assert bounds.json_containers(b'{"a": [1, {"b": []}], "c": "[{"}') == 6  # text counts too
    assert bounds.xml_tags(b"<a><b/>text</a>") == 3
    body = b'["a,b,c", "[[[", 1]'
    assert bounds.json_values(body, exact_above=100) == 8  # rough: within the limit
    assert bounds.json_values(body, exact_above=3) == 3  # redone without the strings' insides


def test_load_json_refuses_past_the_limit_before_decoding():
    body = b"[" + b"{}," * 10 + b"{}]"  # 12 containers; not JSON at all would not matter
    with pytest.raises(CoreError) as caught:
        bounds.load_json(body, limit=11, too_many=_refusal("too_many"),
                         unreadable=_refusal("unreadable"))
    assert caught.value.details == {"reason": "too_many", "value": 12}
    assert bounds.load_json(body, limit=12, too_many=_refusal("too_many"),
                            unreadable=_refusal("unreadable")) == [{}] * 11


@pytest.mark.parametrize(("body", "reason"), [
    (b"\xff", "not UTF-8"),
    (b"{nope", "not JSON"),
    (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
])
def test_an_unreadable_body_is_named_by_its_reason_without_quoting_it(body: bytes, reason: str):
    with pytest.raises(CoreError) as caught:
        bounds.load_json(body, limit=10**6, too_many=_refusal("too_many"),
                         unreadable=_refusal("unreadable"))
    assert caught.value.details == {"reason": "unreadable", "value": reason}
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


def test_a_caller_may_count_values_instead_of_containers():
    body = b"[" + b"1," * 50 + b"1]"  # one container, 51 values
    assert bounds.load_json(body, limit=1, too_many=_refusal("too_many"),
                            unreadable=_refusal("unreadable")) == [1] * 51
    with pytest.raises(CoreError):
        bounds.load_json(body, limit=40, too_many=_refusal("too_many"),
                         unreadable=_refusal("unreadable"),
                         count=lambda b: bounds.json_values(b, exact_above=40))


def test_check_xml_passes_the_body_through_within_its_limit_and_refuses_past_it():
    body = b"<r>" + b"<a/>" * 9 + b"</r>"  # 11 tags
    assert bounds.check_xml(body, limit=11, too_many=_refusal("tags")) is body
    with pytest.raises(CoreError) as caught:
        bounds.check_xml(body, limit=10, too_many=_refusal("tags"))
    assert caught.value.details == {"reason": "tags", "value": 11}


@pytest.mark.parametrize(("body", "limit", "deeper"), [
    (b"[[[]]]", 3, False),
    (b"[[[[]]]]", 3, True),
    (b'["[[[[[[", {"a": "{{{{"}]', 3, False),  # brackets in strings do not nest
    (b"[]" * 50, 3, False),  # many brackets side by side, none deep
    (b'{"a": [{"b": [1]}]}', 3, True),
])
def test_nesting_is_measured_without_recursion_and_strings_skipped(body: bytes, limit: int,
                                                                   deeper: bool):
    assert bounds.json_nests_deeper(body, limit) is deeper


def test_a_very_deep_body_is_found_deeper_without_a_recursion_error():
    assert bounds.json_nests_deeper(b"[" * 200_000 + b"]" * 200_000, 64)
