"""Attack: a chapter nesting elements more than 256 levels deep.

libxml2 stops at 256 levels (its resource limit without XML_PARSE_HUGE, which would also lift
the text-node, name and expansion limits). The XML parse failed, the HTML fallback hit the same
limit and quietly dropped everything after the deep point, and the only warning said "not
well-formed". Now a document past the depth limit refuses the book as UNSAFE_SOURCE with a
message that says its text would be lost; shallower chapters, well-formed or not, read as
before.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from tests.book.make_books import make_epub

from readingroom.book.ingest import ingest
from readingroom.core.errors import Code, CoreError


def _deep(depth: int, *, closed: bool) -> str:
    return (
        "<p>before the deep point</p>"
        + "<div>" * depth
        + "<p>deep text</p>"
        + ("</div>" * depth if closed else "")
        + "<p>after the deep point</p>"
    )


@pytest.mark.parametrize("closed", [True, False], ids=["well-formed", "malformed"])
@pytest.mark.parametrize("depth", [300, 50_000])
def test_deep_nesting_is_refused_not_truncated(tmp_path: Path, depth: int, closed: bool) -> None:
    path = make_epub(tmp_path / "deep.epub", [("Deep", _deep(depth, closed=closed))])
    started = time.monotonic()
    with pytest.raises(CoreError) as caught:
        ingest(path)
    assert time.monotonic() - started < 30
    error = caught.value
    assert error.code is Code.UNSAFE_SOURCE
    assert error.details["reason"] == "depth"
    assert error.details["entry"] == "OEBPS/chapter01.xhtml"
    assert "256" in error.message and "text" in error.message and "lost" in error.message
    assert "\n" not in error.message and error.remediation


@pytest.mark.parametrize("closed", [True, False], ids=["well-formed", "malformed"])
def test_nesting_within_the_limit_keeps_all_text(tmp_path: Path, closed: bool) -> None:
    path = make_epub(tmp_path / "deep.epub", [("Deep", _deep(200, closed=closed))])
    text = ingest(path).units[0].text
    assert text == "before the deep point\ndeep text\nafter the deep point"
