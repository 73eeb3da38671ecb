"""book-agent's Core end to end on the real fixture books and generated Japanese books."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from readingroom.book.service import MAX_CHARS_CEILING, BookService
from readingroom.core.errors import Code, CoreError

from .conftest import fixture_books
from .make_books import make_epub, make_japanese_pdf, make_pdf

TEXTBOOK = "geotopo-textbook-outline.pdf"
SCAN = "huckfinn-scanned-page.pdf"
VENUS = "venus-and-adonis-epub2.epub"
ALICE = "alice-epub3-images.epub"


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    books = fixture_books()
    service = BookService(tmp_path_factory.mktemp("data"))
    service.init(books / TEXTBOOK, book_id="textbook")
    service.init(books / SCAN, book_id="scan", allow_image_only=True)
    service.init(books / VENUS, book_id="venus")
    service.init(books / ALICE, book_id="alice")
    return service


def test_all_four_fixture_books_initialise(library):
    listed = {b["book_id"]: b for b in library.list().items}
    assert set(listed) == {"textbook", "scan", "venus", "alice"}
    assert listed["textbook"]["units"] == 117
    assert all(b["records"] > 0 for b in listed.values())


def test_scanned_page_reports_no_text_layer_yet_renders(library):
    status = library.status("scan").data
    assert status["capabilities"]["no_text_layer_units"] == [0]
    assert status["capabilities"]["text_layer_units"] == 0
    env, png = library.render_page("scan", 0)
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    assert env.data["has_text_layer"] is False


def test_textbook_reports_labels_and_indexes(library):
    hits = library.search("textbook", "topologischer Raum", top_k=3).items
    assert hits
    loc = library.locate("textbook", record_id=hits[0]["record_id"]).items[0]["locator"]
    assert loc["page_index"] is not None and loc["page_label"] is not None
    labels = {}
    for r in library._load("textbook").units:
        labels[r.index] = r.label
    assert labels[0] == "i" and labels[5] == "3"  # labels differ from indices
    entry = library.read_entry("textbook", hits[0]["record_id"]).items[0]
    assert "page_index" in entry and "page_label" in entry


def test_epub_images_resolve(library):
    loaded = library._load("alice")
    unit = next(u for u in loaded.units if u.images)
    rec = next(r for r in loaded.records if r.unit_start <= unit.index <= r.unit_end)
    loc = library.locate("alice", record_id=rec.record_id).items[0]["locator"]
    # The chapter's Markdown gives image hrefs relative to the container; pass one relative
    # to the chapter, as the chapter's own XHTML would.
    import posixpath

    image = unit.images[0]
    href = posixpath.relpath(image, posixpath.dirname(unit.href))
    env, data, mime = library.epub_image("alice", loc if loc["unit_index"] == unit.index else
                                         _chapter_locator(library, "alice", unit.index), href)
    assert mime in ("image/jpeg", "image/png") and len(data) > 100
    assert env.data["path"] == image
    assert library.status("alice").data["capabilities"]["epub_images"] >= 20


def _chapter_locator(service, book_id, unit_index):
    loaded = service._load(book_id)
    rec = next(r for r in loaded.records if r.unit_start == unit_index)
    return service.locate(book_id, record_id=rec.record_id).items[0]["locator"]


def test_epub_image_outside_container_is_refused(library):
    loc = _chapter_locator(library, "alice", 3)
    for href in ("../../etc/passwd.png", "/abs.png", "http://x/y.png", "chapter.xhtml"):
        with pytest.raises(CoreError) as e:
            library.epub_image("alice", loc, href)
        assert e.value.code in (Code.PATH_NOT_ALLOWED, Code.NOT_FOUND)


def test_venus_epub2_navigation_gives_records(library):
    status = library.status("venus").data
    assert status["counts"]["toc_entries"] > 0
    hits = library.search("venus", "Adonis", top_k=5).items
    assert hits and all(h["matched_by"] == ["lexical"] for h in hits)


def test_render_is_bounded(library):
    env, png = library.render_page("textbook", 5, dpi=600)
    assert max(env.data["width"], env.data["height"]) <= 2000
    assert len(png) <= 1_500_000 and env.data["dpi_lowered"] is True
    with pytest.raises(CoreError) as e:
        library.render_page("textbook", 500)
    assert e.value.code is Code.NOT_FOUND
    with pytest.raises(CoreError) as e:
        library.render_page("venus", 0)
    assert e.value.code is Code.CAPABILITY_UNAVAILABLE


def test_reads_are_paginated_in_structured_output(library):
    loaded = library._load("textbook")
    long_rec = max(loaded.records, key=lambda r: len(r.text))
    env = library.read_entry("textbook", long_rec.record_id, max_chars=500)
    item = env.items[0]
    assert len(item["text"]) == 500 and item["truncated"] and env.data["truncated"]
    assert not item["text"].endswith("[truncated]")  # no note glued into the text
    md = library.read_markdown("textbook", start_line=1, end_line=4000, max_chars=1000).data
    assert md["truncated"] and md["next_line"] == md["end_line"] + 1
    assert len(md["text"]) <= 1000
    huge = library.read_markdown("textbook", start_line=1, max_chars=10**9).data
    assert len(huge["text"]) <= MAX_CHARS_CEILING


def test_read_markdown_by_heading_and_ambiguous_heading(library):
    one = library.read_markdown("textbook", heading="1.1 Topologische Räume").data
    assert one["text"].lstrip("#").strip().startswith("1.1 Topologische Räume")
    many = library.read_markdown("textbook", heading="Topolog")
    assert many.data["status"] == "ambiguous" and len(many.items) > 1
    assert all("line" in c for c in many.items)


def test_skill_paths_are_confined(library):
    assert library.skill_file("textbook").data["text"].startswith("---")
    for bad in ("../manifest.json", "/etc/passwd", "references/../../book.md"):
        with pytest.raises(CoreError) as e:
            library.skill_file("textbook", bad)
        assert e.value.code is Code.PATH_NOT_ALLOWED


def test_locate_passage_across_a_page_break_is_verified(library):
    loaded = library._load("textbook")
    # the last words of a page and the first words of the next
    for u in range(10, 40):
        a, b = loaded.units[u].text.split(), loaded.units[u + 1].text.split()
        if len(a) > 6 and len(b) > 6:
            passage = " ".join(a[-4:] + b[:4])
            env = library.locate("textbook", text=passage)
            if env.data["status"] == "verified":
                loc = env.items[0]["locator"]
                assert loc["unit_index"] == u and loc["unit_end_index"] == u + 1
                read = library.read_source(loc).data
                assert read["verified"] and read["text"].split()[0] == a[-4]
                return
    pytest.fail("no verified page-crossing passage found in pages 10-40")


def test_repeated_phrase_is_ambiguous_with_every_candidate(library):
    env = library.locate("textbook", text="Topologische Räume")
    assert env.data["status"] == "ambiguous"
    assert len(env.items) == env.data["match_count"] > 1
    assert all(c["status"] == "ambiguous" for c in env.items)


def test_stale_and_edited_locators_are_refused(library, tmp_path):
    from .make_books import make_pdf as _make

    src = _make(tmp_path / "twice.pdf", ["The first version of a page.", "Page two here."])
    library.init(src, book_id="twice")
    loc = library.locate("twice", text="first version").items[0]["locator"]
    library.init(src, book_id="twice", replace=True)
    with pytest.raises(CoreError) as e:
        library.read_source(loc)
    assert e.value.code is Code.STALE_LOCATOR
    fresh = library.locate("twice", text="first version").items[0]["locator"]
    edited = dict(fresh, char_end=fresh["char_end"] + 3)
    with pytest.raises(CoreError) as e:
        library.read_source(json.dumps(edited))
    assert e.value.code is Code.INVALID_LOCATOR
    assert library.read_source(fresh).data["text"] == "first version"
    library.remove("twice")


def test_search_hints_and_strict(library):
    narrowed = library.search("textbook", "Raum", hints={"pages": "5-6"}).items
    assert narrowed and all(h["unit_start"] <= 6 and h["unit_end"] >= 5 for h in narrowed)
    with pytest.raises(CoreError) as e:
        library.search("textbook", "Raum", hints={"colour": "red"})
    assert e.value.code is Code.INVALID_ARGUMENT


# --------------------------------------------------------------------------- Japanese books
@pytest.mark.parametrize("vertical", [False, True])
def test_japanese_two_character_query_finds_its_record(tmp_path, vertical):
    paragraphs = ["吾輩は猫である。名前はまだ無い。", "どこで生れたかとんと見当がつかぬ。",
                  "古い電燈の下で本を読んでいた。", "東京の大学で講義を聴いた。"]
    src = make_japanese_pdf(tmp_path / "jp.pdf", paragraphs, vertical=vertical,
                            title="猫の話")
    service = BookService(tmp_path / "data")
    service.init(src, book_id="jp")
    for word, sentence in (("電燈", paragraphs[2]), ("東京", paragraphs[3])):
        hits = service.search("jp", word).items
        assert hits, f"{word} not found (vertical={vertical})"
        texts = [service.read_entry("jp", h["record_id"]).items[0]["text"] for h in hits]
        assert any(word in t.replace("\n", "") for t in texts)
        env = service.locate("jp", text=sentence)
        assert env.data["status"] == "verified", (vertical, sentence)
    if vertical:
        assert service.status("jp").data["capabilities"]["vertical_units"]


# --------------------------------------------------------------------------- bad inputs
def _no_package(data: Path, book_id: str) -> bool:
    book = data / "books" / book_id
    return not book.exists() or not any(p.name.startswith("v") for p in book.iterdir())


def _write(name: str, data: bytes):
    def make(folder: Path) -> Path:
        path = folder / name
        path.write_bytes(data)
        return path

    return make


@pytest.mark.parametrize("make,code", [
    (_write("broken.pdf", b"%PDF-1.7\nbroken"), Code.CORRUPT_SOURCE),
    (_write("broken.epub", b"PK\x03\x04 not a zip"), Code.CORRUPT_SOURCE),
    (_write("letter.docx", b"PK\x03\x04"), Code.UNSUPPORTED_FORMAT),
    (_write("picture.png", b"\x89PNG\r\n\x1a\n"), Code.UNSUPPORTED_FORMAT),
])
def test_bad_input_fails_cleanly_and_registers_nothing(tmp_path, make, code):
    src = make(tmp_path)
    service = BookService(tmp_path / "data")
    with pytest.raises(CoreError) as e:
        service.init(src, book_id="bad")
    assert e.value.code is code and "\n" not in e.value.message and e.value.remediation
    assert _no_package(tmp_path / "data", "bad") and service.list().items == []


def test_encrypted_image_only_and_empty_inputs(tmp_path):
    from .make_books import make_encrypted_pdf, make_image_only_pdf

    service = BookService(tmp_path / "data")
    cases = [(make_encrypted_pdf(tmp_path / "enc.pdf"), Code.ENCRYPTED_SOURCE),
             (make_image_only_pdf(tmp_path / "img.pdf"), Code.EMPTY_SOURCE)]
    empty = tmp_path / "empty.md"
    empty.write_text("", encoding="utf-8")
    cases.append((empty, Code.EMPTY_SOURCE))
    for src, code in cases:
        with pytest.raises(CoreError) as e:
            service.init(src, book_id="x")
        assert e.value.code is code, src
        assert _no_package(tmp_path / "data", "x")


def test_duplicate_id_needs_replace_and_replace_makes_a_new_version(tmp_path):
    src = make_pdf(tmp_path / "b.pdf", ["Alpha page.", "Beta page."])
    service = BookService(tmp_path / "data")
    assert service.init(src, book_id="b").data["version"] == 1
    with pytest.raises(CoreError) as e:
        service.init(src, book_id="b")
    assert e.value.code is Code.BOOK_EXISTS
    assert service.init(src, book_id="b", replace=True).data["version"] == 2
    assert service.status("b").data["versions"] == [1, 2]


def test_failed_init_leaves_registry_and_earlier_version_untouched(tmp_path, monkeypatch):
    src = make_pdf(tmp_path / "b.pdf", ["Alpha page.", "Beta page."])
    service = BookService(tmp_path / "data")
    service.init(src, book_id="b")

    def boom(*a, **k):
        raise KeyboardInterrupt  # an interrupted build, mid-way

    monkeypatch.setattr("readingroom.book.search.index.build_index", boom)
    with pytest.raises(KeyboardInterrupt):
        service.init(src, book_id="b", replace=True)
    book = tmp_path / "data" / "books" / "b"
    assert sorted(p.name for p in book.iterdir() if not p.name.startswith(".lock")) == [
        "CURRENT", "v1"]
    assert service.status("b").data["version"] == 1


def test_two_inits_at_once_are_safe(tmp_path):
    src = make_pdf(tmp_path / "b.pdf", ["Alpha page.", "Beta page."])
    service = BookService(tmp_path / "data")
    results, errors = [], []

    def go():
        try:
            results.append(BookService(tmp_path / "data").init(src, book_id="b", replace=True))
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=go) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors
    assert sorted(r.data["version"] for r in results) == [1, 2, 3]
    assert service.status("b").data["version"] in (1, 2, 3)


def test_epub_with_fragment_contents_splits_one_file_into_records(tmp_path):
    body = ("<h1 id='a'>One</h1><p>" + "First part. " * 30 + "</p>"
            "<h1 id='b'>Two</h1><p>" + "Second part. " * 30 + "</p>")
    src = make_epub(tmp_path / "f.epub", [("Only", body)],
                    nav=[(1, "One", "chapter01.xhtml#a"), (1, "Two", "chapter01.xhtml#b")])
    service = BookService(tmp_path / "data")
    service.init(src, book_id="f")
    records = service._load("f").records
    assert [r.heading_path for r in records] == [("One",), ("Two",)]
    assert records[0].unit_start == records[1].unit_start == 0
    assert "Second part" not in records[0].text and "Second part" in records[1].text
