"""Book Skills of the real fixture books: golden files, and the Agent Skills rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from readingroom.book.service import BookService
from readingroom.book.skill.validate import validate_skill

from ..conftest import fixture_books
from ..golden_util import assert_matches_golden

# Builds the Book Skills of the real sample books: left out of the quick tier.
pytestmark = pytest.mark.slow

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
BOOKS = {
    "geotopo": ("geotopo-textbook-outline.pdf", {}),
    "huckfinn": ("huckfinn-scanned-page.pdf", {"allow_image_only": True}),
    "venus": ("venus-and-adonis-epub2.epub", {}),
    "alice": ("alice-epub3-images.epub", {}),
}


@pytest.fixture(scope="module")
def skills(tmp_path_factory):
    books = fixture_books()
    service = BookService(tmp_path_factory.mktemp("data"))
    out = {}
    for book_id, (name, options) in BOOKS.items():
        service.init(books / name, book_id=book_id, **options)
        out[book_id] = service.registry.get(book_id).skill_dir()
    return out


@pytest.mark.parametrize("book_id", sorted(BOOKS))
def test_fixture_skill_obeys_the_rules(skills, book_id):
    assert validate_skill(skills[book_id]) == []
    text = (skills[book_id] / "SKILL.md").read_text(encoding="utf-8")
    assert "untrusted" in text.lower()


@pytest.mark.parametrize("book_id", sorted(BOOKS))
def test_fixture_skill_matches_golden(skills, book_id):
    assert_matches_golden(skills[book_id], GOLDEN / f"skill-fixture-{book_id}")
