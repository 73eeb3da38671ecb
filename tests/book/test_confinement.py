"""The one-book rule in one place (book/confinement.py): the tools and the Core refuse alike.

Before issue 19 §3 the MCP tools refused another book as BOOK_NOT_ALLOWED and the Core, asked
directly, as BOOK_NOT_FOUND ("does not serve"): one rule, two codes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from readingroom.book.confinement import Confinement
from readingroom.book.service import BookService
from readingroom.core.errors import Code, CoreError


def _md(folder: Path, name: str) -> Path:
    path = folder / f"{name}.md"
    path.write_text(f"# {name.title()}\n\nThe text of {name}, with a word: lighthouse.\n",
                    "utf-8")
    return path


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("confined")
    service = BookService(folder / "data")
    service.init(_md(folder, "one"), book_id="one")
    service.init(_md(folder, "two"), book_id="two")
    return folder / "data"


def test_a_single_book_core_refuses_another_registered_book_as_not_allowed(data_dir: Path):
    core = BookService(data_dir, served="one")
    with pytest.raises(CoreError) as refused:
        core.read_markdown("two", start_line=1, end_line=2)
    assert refused.value.code == Code.BOOK_NOT_ALLOWED
    assert refused.value.details == {"served": ["one"], "asked": "two"}
    assert core.read_markdown("one", start_line=1, end_line=2).error is None


def test_a_single_book_core_lists_and_searches_its_book_only(data_dir: Path):
    core = BookService(data_dir, served="one")
    assert [item["book_id"] for item in core.list().items] == ["one"]
    everything = BookService(data_dir)
    assert sorted(item["book_id"] for item in everything.list().items) == ["one", "two"]


def test_the_rule_itself():
    every, one = Confinement(), Confinement("one")
    assert every.allows("x") and one.allows("one") and not one.allows("two")
    assert every.book("x") == "x" and every.book(None, required=False) is None
    assert one.book(None) == "one" and one.book("one") == "one"
    with pytest.raises(CoreError) as missing:
        every.book(None)
    assert missing.value.code == Code.INVALID_ARGUMENT
    with pytest.raises(CoreError) as other:
        one.book("two")
    assert other.value.code == Code.BOOK_NOT_ALLOWED
    assert other.value.remediation == "Omit book_id or pass 'one'."
