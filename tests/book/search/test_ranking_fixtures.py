"""Ranking on real fixture books, through the package's init path (issue 11 §3, §4)."""

from __future__ import annotations

from pathlib import Path

import pytest

from readingroom.book.search.index import BookIndex
from readingroom.book.service import BookService

from ..conftest import fixture_books


@pytest.fixture(scope="module")
def alice(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = tmp_path_factory.mktemp("alice")
    env = BookService(data).init(fixture_books() / "alice-epub3-images.epub")
    return Path(env.data["package"]) / "index.sqlite"


@pytest.mark.parametrize("engine", ["fts5", "python"])
@pytest.mark.parametrize("title", ["Down the Rabbit-Hole", "The Pool of Tears",
                                   "Advice from a Caterpillar"])
def test_a_chapter_title_finds_the_chapter_not_the_contents(alice: Path, engine: str,
                                                            title: str):
    with BookIndex.open(alice, engine=engine) as index:
        result = index.search(title)
        assert result.hits[0].heading_path[-1].casefold() == title.casefold()
        with_contents = index.search(title, include_contents=True)
        assert with_contents.hits[0].heading_path[-1].casefold() == title.casefold()
        assert with_contents.contents_left_out == 0
        assert result.total_matches + result.contents_left_out == with_contents.total_matches


@pytest.mark.parametrize("engine", ["fts5", "python"])
def test_the_opening_line_unquoted_finds_chapter_one(alice: Path, engine: str):
    with BookIndex.open(alice, engine=engine) as index:
        hit = index.search("Alice was beginning to get very tired").hits[0]
        assert hit.heading_path[-1].casefold() == "down the rabbit-hole"
        assert "«beginning» «to» «get» «very» «tired»" in hit.snippet


@pytest.mark.parametrize("engine", ["fts5", "python"])
@pytest.mark.parametrize("part", ["caucus", "race", "caucusrace"])
def test_hyphen_parts_of_a_title_are_found(alice: Path, engine: str, part: str):
    with BookIndex.open(alice, engine=engine) as index:
        hit = index.search(part).hits[0]
        assert hit.heading_path[-1] == "A Caucus-Race And A Long Tale"
