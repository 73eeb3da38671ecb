"""Semantic Scholar answers zero hits as ``{"total": 0, "offset": 0}`` with no ``data`` key
(s2py cassette test_empty_paginated_results): a real zero, not a malformed answer."""

from __future__ import annotations

from readingroom.literature.upstreams import semantic_scholar


def test_zero_hits_without_data_is_empty() -> None:
    page = semantic_scholar.parse({"total": 0, "offset": 0})
    assert page.records == () and page.total == 0
