"""Property (issue 18 §8, with the §3 mutator): whatever a manifest is turned into, book-agent
answers with a result or a typed error — BOOK_DAMAGED for a manifest it cannot trust — and
never fails as a defect (an exception other than CoreError, which MCP would answer
INTERNAL_ERROR).

Each example writes one mutant of a real manifest (one wrong type, null, huge number, deep
value, missing key or emptied container; ``tests/property/mutate.py``) into a PDF book and an
EPUB book, then lists, reads the status, searches, reads, locates and renders through a fresh
Core, and serialises every envelope as the tools would send it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given

from readingroom.book.service import BookService
from readingroom.core.errors import Code, CoreError
from tests.property.mutate import json_mutants, property_settings

from .make_books import TINY_JPEG, make_epub, make_pdf

TEMPLATE: dict[str, tuple[Path, dict]] = {}


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    root = tmp_path_factory.mktemp("manifest-mutants")
    service = BookService(root / "data")
    service.init(make_pdf(root / "p.pdf", ["Whales swim in the sea.", "Ships sail home."]),
                 book_id="pdf")
    service.init(make_epub(root / "e.epub", [
        ("Sea", "<h1>Sea</h1><p>The sea is wide.</p><img src='images/red.jpg' alt='r'/>")],
        images={"images/red.jpg": TINY_JPEG}), book_id="epub")
    for book_id in ("pdf", "epub"):
        path = service.registry.get(book_id).path / "manifest.json"
        TEMPLATE[book_id] = (path, json.loads(path.read_text(encoding="utf-8")))
    return root / "data"


def _exercise(data: Path, book_id: str) -> list[str]:
    """Every Core call a tool makes on the book; the codes of the typed errors met."""
    service = BookService(data)
    codes: list[str] = []
    calls = [
        lambda: service.list(),
        lambda: service.status(),
        lambda: service.status(book_id),
        lambda: service.search(book_id, "sea"),
        lambda: service.read_entry(book_id, "r0001"),
        lambda: service.read_markdown(book_id, start_line=1),
        lambda: service.locate(book_id, text="sea"),
        lambda: service.skill_file(book_id),
        (lambda: service.render_page(book_id, 0, dpi=30)[0]) if book_id == "pdf" else
        (lambda: service.epub_image(book_id, None, "images/red.jpg")[0]),
    ]
    for call in calls:
        try:
            env = call()
        except CoreError as err:
            codes.append(str(err.code))
            assert err.code is not Code.INTERNAL_ERROR, err.message
            continue
        json.loads(env.to_json())  # what the tool sends must serialise
    return codes


@pytest.mark.parametrize("book_id", ["pdf", "epub"])
def test_a_mutated_manifest_is_a_result_or_a_typed_error(library, book_id):
    path, original = TEMPLATE[book_id]

    @given(json_mutants(original))
    @property_settings()
    def check(mutant):
        description, manifest = mutant
        path.write_text(json.dumps(manifest), encoding="utf-8")
        try:
            _exercise(library, book_id)
        except Exception as exc:
            raise AssertionError(f"manifest {description}: {type(exc).__name__}: {exc}") \
                from exc
        finally:
            path.write_text(json.dumps(original), encoding="utf-8")

    check()
    assert _exercise(library, book_id) == [], "the restored manifest is whole again"
