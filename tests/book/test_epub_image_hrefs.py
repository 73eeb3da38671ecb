"""issue 11 §6: an EPUB image is found however its href is written, and a miss says what was tried.

book.md prints an image's container path (``OPS/images/x.jpg``); the chapter's XHTML writes it
relative to the chapter; the OPF manifest relative to the package document. Each names the same
image; ``epub-image`` used to refuse the first with the false "not an image the EPUB's manifest
declares".
"""

from __future__ import annotations

import json
import posixpath
import re

import pytest

from readingroom.book.render import IMAGE_HREF_FORMS, resolve_epub_image
from readingroom.book.service import BookService
from readingroom.core.errors import Code, CoreError
from tests.forked import book_agent

from .conftest import fixture_books
from .make_books import TINY_JPEG
from .make_image_hrefs import make_nested_epub

# Starts real server or command processes: left out of the quick tier (tests/conftest.py).
pytestmark = pytest.mark.stdio

IMAGE_LINK = re.compile(r"!\[[^\]]*\]\(([^)\s]+)\)")


def book_md_images(service: BookService, book_id: str) -> list[tuple[int, str]]:
    """(line number, href) of every image link book.md prints."""
    text = service._load(book_id).pkg.file("book.md").read_text(encoding="utf-8")
    return [(n, m.group(1)) for n, line in enumerate(text.splitlines(), start=1)
            for m in IMAGE_LINK.finditer(line)]


def chapter_locator(service: BookService, book_id: str, line: int) -> dict:
    """The locator of the record whose book.md lines hold ``line`` (else the first record)."""
    records = service._load(book_id).records
    rec = next((r for r in records if r.md_line_start <= line <= r.md_line_end), records[0])
    return service.locate(book_id, record_id=rec.record_id).items[0]["locator"]


@pytest.fixture(scope="module")
def alice(tmp_path_factory):
    service = BookService(tmp_path_factory.mktemp("data"))
    service.init(fixture_books() / "alice-epub3-images.epub", book_id="alice")
    return service


@pytest.fixture(scope="module")
def nested(tmp_path_factory):
    root = tmp_path_factory.mktemp("nested")
    src = make_nested_epub(root / "nested.epub", [
        ("One", "<h1>One</h1><p>A first chapter with a figure.</p>"
                '<img src="../images/fig%201.jpg" alt="Figure one"/>'),
        ("Two", "<h1>Two</h1><p>A second chapter, and a second figure.</p>"
                '<img src="../images/fig2.jpg" alt="Figure two"/>'),
    ], {"fig 1.jpg": TINY_JPEG, "fig2.jpg": TINY_JPEG, "unused.jpg": TINY_JPEG})
    service = BookService(root / "data")
    service.init(src, book_id="nested")
    return service


def test_every_image_href_book_md_prints_is_readable(alice):
    printed = book_md_images(alice, "alice")
    assert printed, "book.md of the illustrated Alice prints image links"
    for line, href in printed:
        env, data, mime = alice.epub_image("alice", chapter_locator(alice, "alice", line), href)
        assert data[:3] == b"\xff\xd8\xff" and mime == "image/jpeg", href
        assert env.data["href_form"] in IMAGE_HREF_FORMS
        assert env.data["path"].endswith(posixpath.normpath(href).lstrip("./"))


def test_every_image_a_chapter_references_reads_chapter_relative(alice):
    loaded = alice._load("alice")
    seen = 0
    for unit in loaded.units:
        rec = next((r for r in loaded.records if r.unit_start == unit.index), None)
        if rec is None or not unit.images:
            continue
        loc = alice.locate("alice", record_id=rec.record_id).items[0]["locator"]
        for image in unit.images:
            href = posixpath.relpath(image, posixpath.dirname(unit.href))
            env, _data, _mime = alice.epub_image("alice", loc, href)
            assert env.data["path"] == image
            seen += 1
    assert seen >= 20


def test_three_spellings_name_the_same_image(nested):
    loc = nested.locate("nested", text="A first chapter with a figure").items[0]["locator"]
    assert loc["href"] == "OEBPS/text/c01.xhtml"
    forms = {"../images/fig%201.jpg": "chapter-relative",
             "OEBPS/images/fig 1.jpg": "container path",
             "images/fig%201.jpg": "package-relative"}
    for href, form in forms.items():
        env, data, _mime = nested.epub_image("nested", loc, href)
        assert env.data["path"] == "OEBPS/images/fig 1.jpg" and env.data["href_form"] == form
        assert data == TINY_JPEG
    # The image of another chapter, named as book.md prints it, from this chapter's locator.
    env, _, _ = nested.epub_image("nested", loc, "OEBPS/images/fig2.jpg")
    assert env.data["referenced_by"] == ["OEBPS/text/c02.xhtml"]


def test_book_md_prints_a_spelling_the_tool_accepts(nested):
    printed = book_md_images(nested, "nested")
    assert {href for _, href in printed} >= {"OEBPS/images/fig2.jpg"}
    for line, href in printed:
        nested.epub_image("nested", chapter_locator(nested, "nested", line), href)


def test_a_miss_says_what_was_looked_up_and_lists_some_images(nested):
    loc = nested.locate("nested", text="A first chapter with a figure").items[0]["locator"]
    with pytest.raises(CoreError) as caught:
        nested.epub_image("nested", loc, "images/nope.jpg")
    err = caught.value
    assert err.code is Code.NOT_FOUND
    assert "manifest declares" not in err.message.split(":")[0]  # the old, false sentence
    assert "'OEBPS/text/images/nope.jpg' (as chapter-relative)" in err.message
    assert "'images/nope.jpg' (as container path)" in err.message
    assert "'OEBPS/images/nope.jpg' (as package-relative)" in err.message
    assert err.details["accepted_forms"] == list(IMAGE_HREF_FORMS)
    assert "OEBPS/images/fig2.jpg" in err.details["declared_examples"]
    assert "'OEBPS/images/fig2.jpg'" in err.message


def test_an_image_no_chapter_references_is_not_served(nested):
    # In the manifest and the container, but no chapter shows it: not part of the book's text.
    loc = nested.locate("nested", text="A first chapter with a figure").items[0]["locator"]
    with pytest.raises(CoreError) as caught:
        nested.epub_image("nested", loc, "OEBPS/images/unused.jpg")
    assert caught.value.code is Code.NOT_FOUND


@pytest.mark.parametrize("href", ["../../../x.jpg", "/OEBPS/images/fig2.jpg", "http://h/x.jpg",
                                  "%2e%2e/%2e%2e/%2e%2e/x.jpg", "text/c01.xhtml"])
def test_hrefs_outside_or_not_images_stay_refused(nested, href):
    loc = nested.locate("nested", text="A first chapter with a figure").items[0]["locator"]
    with pytest.raises(CoreError) as caught:
        nested.epub_image("nested", loc, href)
    assert caught.value.code in (Code.PATH_NOT_ALLOWED, Code.NOT_FOUND)


def test_resolve_prefers_the_chapter_relative_reading():
    declared = {"A/text/images/x.png", "A/images/x.png"}
    assert resolve_epub_image("images/x.png", declared, chapter_href="A/text/c.xhtml",
                              package_dir="A") == ("A/text/images/x.png", "chapter-relative")
    assert resolve_epub_image("images/x.png", {"A/images/x.png"}, chapter_href="A/text/c.xhtml",
                              package_dir="A") == ("A/images/x.png", "package-relative")


def test_cli_reads_the_book_md_href(alice, tmp_path):
    line, href = book_md_images(alice, "alice")[-1]
    loc_file = tmp_path / "loc.json"
    loc_file.write_text(json.dumps(chapter_locator(alice, "alice", line)), encoding="utf-8")
    out = tmp_path / "image.jpg"
    done = book_agent(
        ["--data-dir", str(alice.registry.data_dir),
         "epub-image", "alice", f"@{loc_file}", href, "--out", str(out), "--json"],
        text=True, encoding="utf-8", timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["data"]["href_form"] == "container path"
    assert out.read_bytes()[:3] == b"\xff\xd8\xff"


def test_an_href_as_book_md_prints_it_needs_no_locator(nested):
    env, data, _mime = nested.epub_image("nested", None, "OEBPS/images/fig2.jpg")
    assert data == TINY_JPEG and env.data["chapter"] is None
    assert nested.epub_image("nested", None, "images/fig2.jpg")[0].data["href_form"] == \
        "package-relative"
    with pytest.raises(CoreError) as caught:  # relative to a chapter, but which one?
        nested.epub_image("nested", None, "../images/fig2.jpg")
    assert caught.value.code is Code.NOT_FOUND
    assert "no chapter locator was given" in caught.value.message


def test_cli_reads_an_image_without_a_locator(alice, tmp_path):
    _line, href = book_md_images(alice, "alice")[0]
    out = tmp_path / "first.jpg"
    done = book_agent(
        ["--data-dir", str(alice.registry.data_dir),
         "epub-image", "alice", href, "--out", str(out)],
        text=True, encoding="utf-8", timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"wrote {out}: ") and "container path href" in done.stdout
    assert out.read_bytes()[:3] == b"\xff\xd8\xff"
