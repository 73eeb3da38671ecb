"""Records and the Markdown view from synthetic source documents."""

from __future__ import annotations

from itertools import pairwise

from readingroom.book.model import SourceDocument, SourceUnit, TocEntry
from readingroom.book.records import MAX_RECORD_CHARS, build_book_text


def _pages(n: int, words: int = 300) -> tuple[SourceUnit, ...]:
    return tuple(
        SourceUnit("pdf_page", i, "\n\n".join(f"Page {i} paragraph {p}. " + "word " * words
                                              for p in range(3)), label=f"p{i + 1}")
        for i in range(n)
    )


def _span_text(doc, r):
    pieces = []
    for u in range(r.unit_start, r.unit_end + 1):
        t = doc.units[u].text
        pieces.append(t[r.char_start if u == r.unit_start else 0:
                        r.char_end if u == r.unit_end else len(t)])
    return "\n".join(pieces)


def test_records_follow_contents_and_stay_bounded():
    doc = SourceDocument("pdf", _pages(5), toc=(
        TocEntry("Intro", 1, 0), TocEntry("Part A", 2, 1, 20), TocEntry("Chapter 2", 1, 3)))
    bt = build_book_text(doc)
    assert all(len(r.text) <= MAX_RECORD_CHARS + 10 for r in bt.records)
    assert bt.records[0].heading_path == ("Intro",)
    assert ("Intro", "Part A") in {r.heading_path for r in bt.records}
    assert bt.records[-1].heading_path == ("Chapter 2",)
    assert [r.order for r in bt.records] == list(range(len(bt.records)))
    ids = [r.record_id for r in bt.records]
    assert len(set(ids)) == len(ids) and ids[0] == "r0001"
    assert any(i.endswith("-2") for i in ids)  # long sections are split into parts


def test_records_cover_the_raw_text_exactly_once():
    doc = SourceDocument("pdf", _pages(4), toc=(TocEntry("A", 1, 0, 0), TocEntry("B", 1, 2, 5)))
    bt = build_book_text(doc)
    for r in bt.records:
        assert r.text == _span_text(doc, r)
    spans = [((r.unit_start, r.char_start), (r.unit_end, r.char_end)) for r in bt.records]
    assert spans[0][0] == (0, 0)
    assert spans[-1][1] == (3, len(doc.units[3].text))
    assert all(a[1] == b[0] for a, b in pairwise(spans))  # no gap, no overlap


def test_rebuild_is_deterministic():
    doc = SourceDocument("pdf", _pages(3), toc=(TocEntry("A", 1, 0),))
    a, b = build_book_text(doc), build_book_text(doc)
    assert a.records == b.records and a.markdown == b.markdown


def test_front_matter_before_first_entry_and_no_contents_fallback():
    doc = SourceDocument("pdf", _pages(3, 20), toc=(TocEntry("Late", 1, 1),))
    bt = build_book_text(doc)
    assert bt.records[0].heading_path == ("(front matter)",)
    plain = build_book_text(SourceDocument("pdf", _pages(2, 20)))
    assert [r.heading_path for r in plain.records] == [("Page p1",), ("Page p2",)]


def test_markdown_lines_point_at_record_text():
    doc = SourceDocument("pdf", _pages(2, 20), toc=(TocEntry("Eins", 1, 0),
                                                    TocEntry("Zwei", 1, 1)), title="Buch")
    bt = build_book_text(doc)
    lines = bt.markdown.splitlines()
    assert lines[0] == "# Buch"
    for r in bt.records:
        chunk = "\n".join(lines[r.md_line_start - 1:r.md_line_end])
        first_words = r.text.split()[:3]
        assert " ".join(first_words) in " ".join(chunk.split())
    assert "## Eins" in lines and "## Zwei" in lines
    assert '<!-- page index=1 label="p2" -->' in lines


def test_unit_markdown_used_only_when_it_covers_the_raw_text():
    good = SourceUnit("epub_chapter", 0, "Title\nAll the words of the chapter are here.",
                      markdown="# Title\n\nAll the *words* of the chapter are here.")
    lossy = SourceUnit("epub_chapter", 1, "Second\n" + "Lots of text. " * 40,
                       markdown="# Second\n\nLots of text.")
    doc = SourceDocument("epub", (good, lossy),
                         toc=(TocEntry("Title", 1, 0), TocEntry("Second", 1, 1)))
    bt = build_book_text(doc)
    assert "All the *words*" in bt.markdown
    assert bt.markdown_fallback_units == [1]
    assert bt.markdown.count("Lots of text.") == 40


def test_raw_lines_that_look_like_markdown_syntax_are_escaped():
    unit = SourceUnit("pdf_page", 0, "# not a heading\n- not a list\nplain")
    bt = build_book_text(SourceDocument("pdf", (unit,)))
    assert "\\# not a heading" in bt.markdown and "\\- not a list" in bt.markdown


def test_long_prose_lines_are_soft_wrapped_at_spaces_and_cjk_never_cut():
    latin = SourceUnit("pdf_page", 0, "word " * 400)
    cjk = SourceUnit("pdf_page", 1, "漢字" * 400)
    bt = build_book_text(SourceDocument("pdf", (latin, cjk)))
    body = [line for line in bt.markdown.splitlines() if not line.startswith(("#", "<!--"))]
    assert max(len(line) for line in body if "word" in line) <= 100
    # A renderer turns a line break into a space: CJK text without spaces stays one line.
    assert [line for line in body if "漢" in line] == ["漢字" * 400]
