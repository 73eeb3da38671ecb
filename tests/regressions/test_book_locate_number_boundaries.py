"""Regression (issue 21 §2, small ones): locate checks word and number boundaries.

``273.879.750`` was ``verified`` as a prefix of ``273.879.7501`` — a different number. A quote
that begins or ends with a letter or digit must now stand at a word or number boundary; a match
only inside a longer word or number is ``not_found``, counted in ``partial_matches`` and listed
with status ``partial``, never verified.
"""

from __future__ import annotations

import pytest
from tests.book.make_epub_round2 import make_japanese_book

from readingroom.book.service import BookService


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bounds")
    service = BookService(folder / "data")
    service.init(make_japanese_book(folder / "ja.epub"), book_id="ja")
    return service


def test_a_prefix_of_a_longer_number_is_not_verified(service):
    env = service.locate("ja", text="273.879.750")
    assert env.data["status"] == "not_found"
    assert env.data["partial_matches"] == 1
    assert [c["status"] for c in env.items] == ["partial"]
    assert "part of a longer word or number" in env.diagnostics[0].message


def test_the_whole_number_verifies(service):
    env = service.locate("ja", text="273.879.7501")
    assert env.data["status"] == "verified" and env.data["partial_matches"] == 0
    assert service.locate("ja", text="電話番号は273.879.7501").data["status"] == "verified"


def test_the_tail_of_a_number_is_partial_too(service):
    assert service.locate("ja", text="79.7501").data["status"] == "not_found"
