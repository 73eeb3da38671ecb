"""issue 21, PDF classes: each on the generated book that shows it (tests/book/make_pdf_classes.py),
through the Core (init, records, book.md, search, locate) as a user meets it.

One data folder per module; each book is initialised once.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from readingroom.book.service import BookService

from . import make_pdf_classes as make


class Books(BookService):
    """A data folder whose books are made and initialised when first asked for."""

    def __init__(self, root: Path) -> None:
        super().__init__(root / "data")
        self.root = root
        self.made: set[str] = set()

    def _load(self, book_id: str):
        if book_id not in self.made:
            self.made.add(book_id)
            name = book_id.replace("-", "_")
            self.init(getattr(make, f"{name}_pdf")(self.root / f"{name}.pdf"), book_id=book_id)
        return super()._load(book_id)

    def status(self, book_id: str | None = None):
        if book_id is not None:
            self._load(book_id)
        return super().status(book_id)

    def render_page(self, book_id: str, page_index: int, **kwargs):
        self._load(book_id)
        return super().render_page(book_id, page_index, **kwargs)


@pytest.fixture(scope="module")
def service(tmp_path_factory) -> BookService:
    return Books(tmp_path_factory.mktemp("classes"))


def warnings(service: BookService, book_id: str) -> str:
    return " ".join(service.status(book_id).data["warnings"])


def loaded(service: BookService, book_id: str):
    return service._load(book_id)


def book_md(service: BookService, book_id: str) -> str:
    return loaded(service, book_id).pkg.file("book.md").read_text(encoding="utf-8")


def paths(service: BookService, book_id: str) -> list[tuple[str, ...]]:
    return [r.heading_path for r in loaded(service, book_id).records]


def locate(service: BookService, book_id: str, text: str) -> dict:
    return service.locate(book_id, text=text).data


def search_ids(service: BookService, book_id: str, query: str) -> list[str]:
    return [hit["record_id"] for hit in service.search(book_id, query).items]


# --- §1 section numbers stay with their headings ---------------------------------------------


def test_section_numbers_printed_before_the_title_stay_with_it(service):
    assert paths(service, "numbered-headings") == [("1 Foo",), ("4 Foo",), ("7 Foo",)]
    md = book_md(service, "numbered-headings")
    for number in ("1", "4", "7"):
        assert f"\n## {number} Foo\n" in md
    # the heading, number and all, is the record's own text, not a running head left out
    first = loaded(service, "numbered-headings").records[0]
    assert first.text.startswith("1\nFoo\n")
    assert not first.furniture


def test_a_numbered_heading_is_found_by_its_number_and_title(service):
    hits = service.search("numbered-headings", "4 Foo").items
    assert hits[0]["heading_path"] == ["4 Foo"]


# --- §1 image-only pages are present -----------------------------------------------------------


def test_image_only_pages_have_a_placeholder_and_a_record_each(service):
    md = book_md(service, "image-pages")
    for index in (1, 2):
        assert f"*[Page index {index}: no text layer — render to read]*" in md
    records = loaded(service, "image-pages").records
    covering = {u: [r.record_id for r in records if r.unit_start <= u <= r.unit_end]
                for u in range(4)}
    assert all(covering[u] for u in range(4)), covering
    blind = [r for r in records if r.unit_start in (1, 2)]
    assert [r.unit_start for r in blind] == [1, 2]
    assert all(r.text == "" for r in blind)


def test_an_image_only_page_is_found_by_its_heading_and_read_entry_says_render_it(service):
    hit = service.search("image-pages", "Plate").items[0]
    assert hit["heading_path"] == ["Plate I"]
    item = service.read_entry("image-pages", hit["record_id"]).items[0]
    assert item["page_index"] == 2 and item["no_text_layer_pages"] == [2]
    assert "book_render_page" in item["hint"]
    env, png = service.render_page("image-pages", item["page_index"])
    assert png.startswith(b"\x89PNG") and env.data["has_text_layer"] is False
    # the page before it, inside the first chapter, has its record too (read-entry walks it)
    first = loaded(service, "image-pages").records[0]
    nxt = service.read_entry("image-pages", first.record_id).data["next_record_id"]
    assert service.read_entry("image-pages", nxt).items[0]["no_text_layer_pages"] == [1]


# --- §1 titles keep their spaces -----------------------------------------------------------------


def test_a_tightly_kerned_title_and_heading_get_their_word_spaces(service):
    data = service.status("kerned-title").data
    assert data["title"] == "Two-Column Document with Lorem Ipsum"
    assert ("Two-Column Document with Lorem Ipsum", "Results and Discussion") in paths(
        service, "kerned-title")
    md = book_md(service, "kerned-title")
    assert "Results and Discussion" in md and "ResultsandDiscussion" not in md.split("\n##")[1]


# --- §2 note markers ---------------------------------------------------------------------------


def test_a_note_marker_is_not_part_of_the_number_it_follows(service):
    unit = loaded(service, "note-markers").units[0]
    assert "83,190,5562 in" in unit.text  # the raw text keeps what the file says
    kinds = {unit.text[s:e]: k for s, e, k in unit.furniture}
    assert kinds == {"2": "note_ref", "3": "note_ref"}
    md = book_md(service, "note-markers")
    assert "83,190,556[^2] in the year" in md and "census[^3]," in md
    assert "[^2]: Figure from the national office." in md
    assert "[^3]: The census is taken every ten years." in md


def test_footnotes_are_read_after_the_body_in_their_order_down_the_page(service):
    text = loaded(service, "note-markers").units[0].text
    body = text.index("The next chapter looks at")
    assert body < text.index("2 Figure from") < text.index("3 The census is taken")
    md = book_md(service, "note-markers")
    assert md.index("[^2]: Figure") < md.index("[^3]: The census")


def test_search_and_locate_step_over_a_note_marker(service):
    found = locate(service, "note-markers", "the region was 83,190,556 in the year of the")
    assert found["status"] == "verified"
    stepped = service.locate("note-markers", text="was 83,190,556 in").items[0]["locator"]
    assert stepped["stepped_over"] == [{"kind": "note_ref", "text": "2", "unit_index": 0}]
    hits = service.search("note-markers", '"83,190,556 in the year"').items
    assert hits and "83,190,556" in hits[0]["snippet"]
    assert not service.search("note-markers", "5562", strict=True).items


# --- §2 glyphs without Unicode --------------------------------------------------------------------


def test_a_glyph_without_unicode_is_a_word_break_not_a_letter(service):
    units = loaded(service, "unmapped-glyphs").units
    assert "measured value" in units[0].text and "page holds" in units[1].text
    assert not any("α" in u.text or "\ufffd" in u.text for u in units)
    said = warnings(service, "unmapped-glyphs")
    assert "2 glyphs on 2 pages have no Unicode" in said and "indices 0, 1" in said


def test_search_and_locate_agree_on_text_next_to_an_unmapped_glyph(service):
    for word in ("value", "measured", "holds"):
        assert search_ids(service, "unmapped-glyphs", word), word
        assert locate(service, "unmapped-glyphs", word)["status"] in ("verified", "ambiguous")
    assert locate(service, "unmapped-glyphs", "The measured value was")["status"] == "verified"
    assert search_ids(service, "unmapped-glyphs", '"measured value was"')


# --- §2 outline entries at their destinations -------------------------------------------------


def test_outline_entries_start_at_their_destinations_under_the_printed_headings(service):
    assert paths(service, "outline-dest") == [
        ("Getting Started Quickly",), ("Installing the Tools",), ("Using the Program",)]
    records = loaded(service, "outline-dest").records
    assert [r.text.split("\n", 1)[0] for r in records] == [
        "Getting Started Quickly", "Installing the Tools", "Using the Program"]
    assert all(r.text.strip() for r in records)  # no empty heading-only record
    warning = warnings(service, "outline-dest")
    assert "3 outline titles differ" in warning and "'Usage' → 'Using the Program'" in warning


def test_a_line_continuing_the_previous_pages_sentence_is_never_a_heading(service):
    md = book_md(service, "outline-dest")
    assert "# settings file" not in md
    # the sentence runs on across the page break, under the section it belongs to
    installing = loaded(service, "outline-dest").records[1]
    assert "settings file sits next to them" in installing.text
    hits = service.search("outline-dest", "usage program").items
    assert hits[0]["heading_path"] == ["Using the Program"]


def test_two_entries_at_one_place_make_no_empty_record(service):
    records = loaded(service, "stacked-entries").records
    assert all(r.text.strip() for r in records)
    assert ("Part One", "1 Beginnings") in [r.heading_path for r in records]
    md = book_md(service, "stacked-entries")
    assert "## Part One" in md and "1 Beginnings" in md  # both headings are still shown
    hits = service.search("stacked-entries", "Part One").items
    assert ["Part One", "1 Beginnings"] in [h["heading_path"] for h in hits]
    assert all(h["record_id"] in {r.record_id for r in records} for h in hits)
    assert "outline titles differ" not in warnings(service, "stacked-entries")


# --- §2 headings of papers without an outline ---------------------------------------------------


def test_numbered_bold_lines_at_body_size_are_the_headings_of_a_paper(service):
    got = paths(service, "paper")
    for heading in make.PAPER_HEADINGS:
        assert any(path[-1] == heading for path in got), heading
    assert ("A Study of Patterns", "2 Method", "2.1 Basic Pattern Generation") in got
    assert not any("Note well." in path[-1] for path in got)  # a bold remark, no heading
    md = book_md(service, "paper")
    assert "\n#### 2.1 Basic Pattern Generation\n" in md


def test_a_papers_hits_carry_their_section_in_the_heading_path(service):
    hit = service.search("paper", "rm").items[0]  # "Paragraph 2 … says rm."
    assert hit["heading_path"][-1] == "2.1 Basic Pattern Generation"


def test_paths_exist(tmp_path: Path):
    # every generator of this module writes a PDF PyMuPDF opens (a guard for the fixtures)
    import pymupdf

    for name in make.__all__:
        with pymupdf.open(getattr(make, name)(tmp_path / f"{name}.pdf")) as doc:
            assert doc.page_count >= 1
