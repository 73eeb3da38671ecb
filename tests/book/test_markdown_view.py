"""The Markdown view reads like the book (issue 11 §5), on generated source documents.

Each test builds a :class:`SourceDocument` by hand — blocks, furniture and roles as an ingester
hands them over — and checks records and ``book.md`` together.
"""

from __future__ import annotations

import re
from itertools import pairwise

from readingroom.book.model import SourceDocument, SourceUnit, TocEntry
from readingroom.book.records import MAX_RECORD_CHARS, build_book_text
from readingroom.book.text import is_cjk
from readingroom.book.view import NO_TEXT_LAYER


def _chapter(index: int, title: str, paragraphs: list[tuple[str, str]], **kw) -> SourceUnit:
    """An EPUB chapter: a heading block and (raw, markdown) paragraph blocks, one raw line each."""
    raw_lines = [title] + [raw for raw, _ in paragraphs]
    text = "\n".join(raw_lines)
    blocks, pos = [], 0
    for line, md in zip(raw_lines, [f"# {title}"] + [md for _, md in paragraphs], strict=True):
        blocks.append((pos, pos + len(line), md))
        pos += len(line) + 1
    return SourceUnit("epub_chapter", index, text, href=f"ch{index}.xhtml", blocks=tuple(blocks),
                      **kw)


def _long_chapter(index: int = 0, n: int = 40) -> SourceUnit:
    paragraphs = []
    for p in range(n):
        words = " ".join(f"word{p}x{w}" for w in range(25))
        paragraphs.append((f"Paragraph {p} has an emphasised phrase here. {words}.",
                           f"Paragraph {p} has an *emphasised phrase* here. {words}."))
    return _chapter(index, "The Long Chapter", paragraphs)


def _record_lines(bt, r) -> str:
    return "\n".join(bt.markdown.splitlines()[r.md_line_start - 1:r.md_line_end])


def test_a_long_chapter_keeps_its_paragraphs_and_emphasis_in_every_record():
    unit = _long_chapter()
    doc = SourceDocument("epub", (unit,), toc=(TocEntry("The Long Chapter", 1, 0),))
    bt = build_book_text(doc)
    assert len(bt.records) >= 3  # several records …
    assert bt.markdown_fallback_units == []  # … and none fell back to raw text
    for r in bt.records:
        assert len(r.text) <= MAX_RECORD_CHARS
        # The record's text is the raw span; its Markdown is its own blocks, emphasis kept.
        assert r.text == unit.text[r.char_start:r.char_end]
        chunk = _record_lines(bt, r)
        numbers = re.findall(r"^Paragraph (\d+) has", r.text, re.MULTILINE)
        assert numbers and all(f"Paragraph {n} has an *emphasised phrase*" in chunk
                               for n in numbers)
    # Records are cut between blocks: every record but the first starts a paragraph.
    assert all(unit.text[r.char_start:].startswith("Paragraph") for r in bt.records[1:])
    body = bt.markdown.split("\n\n")
    assert sum(1 for b in body if b.startswith("Paragraph")) == 40  # 40 paragraphs, not merged


def test_one_heading_per_heading():
    unit = _long_chapter(n=3)
    doc = SourceDocument("epub", (unit,), toc=(TocEntry("The Long Chapter", 1, 0),), title="B")
    md = build_book_text(doc).markdown
    assert md.count("The Long Chapter") == 1
    assert "## The Long Chapter" in md.splitlines()
    raw = SourceUnit("pdf_page", 0, "Chapter One\nIt was a dark night.")
    toc = (TocEntry("Chapter One", 1, 0),)
    md = build_book_text(SourceDocument("pdf", (raw,), toc=toc)).markdown
    assert md.count("Chapter One") == 1 and "It was a dark night." in md


def test_subheadings_nest_below_the_section_heading():
    text = "Top\nSub\nBody text."
    unit = SourceUnit("epub_chapter", 0, text, blocks=(
        (0, 3, "# Top"), (4, 7, "## Sub"), (8, 18, "Body text.")))
    md = build_book_text(SourceDocument("epub", (unit,), toc=(TocEntry("Top", 1, 0),),
                                        title="Book")).markdown
    lines = md.splitlines()
    assert "## Top" in lines and "### Sub" in lines and "# Top" not in lines


def test_cjk_text_is_never_broken_inside_a_word():
    sentence = "吾輩は猫である。名前はまだ無い。どこで生れたかとんと見当がつかぬ。"
    para = sentence * 12
    unit = SourceUnit("epub_chapter", 0, f"第一章\n{para}\n{para}",
                      blocks=((0, 3, "# 第一章"), (4, 4 + len(para), para),
                              (5 + len(para), 5 + 2 * len(para), para)))
    whole = "".join(f"其の{'一二三四五六七八九十'[k % 10] * (k % 3 + 1)}、{sentence}"
                    for k in range(30))
    width = next(n for n in range(30, 60)  # printed lines that end inside sentences
                 if all(whole[i + n - 1] != "。" for i in range(0, len(whole) - n, n)))
    wrapped = [whole[i:i + width] for i in range(0, len(whole), width)]
    pdf = SourceUnit("pdf_page", 0, "\n".join(wrapped) + "\n" + "\n".join(wrapped))
    for doc in (SourceDocument("epub", (unit,), toc=(TocEntry("第一章", 1, 0),)),
                SourceDocument("pdf", (pdf,))):
        lines = build_book_text(doc).markdown.splitlines()
        for a, b in pairwise(lines):
            assert not (a and b and is_cjk(a[-1]) and is_cjk(b[0])), (a[-5:], b[:5])
    # The printed lines of a paragraph are joined without a space between CJK; the sentence
    # end of its last line ends the paragraph.
    md = build_book_text(SourceDocument("pdf", (pdf,))).markdown
    assert f"{whole}\n\n{whole}\n" in md


def test_a_contents_unit_is_its_own_record_with_role_contents():
    copyright_ = _chapter(0, "Copyright Page", [("All rights reserved.", "All rights reserved.")])
    nav = SourceUnit("epub_chapter", 1, "Table of Contents\nCopyright Page\nChapter 1",
                     role="contents", blocks=((0, 17, "# Table of Contents"),
                                              (18, 42, "1. Copyright Page\n2. Chapter 1")))
    ch1 = _chapter(2, "Chapter 1", [("It begins.", "It *begins*.")])
    doc = SourceDocument("epub", (copyright_, nav, ch1), toc=(
        TocEntry("Copyright Page", 1, 0), TocEntry("Chapter 1", 1, 2)))
    bt = build_book_text(doc)
    roles = [(r.heading_path, r.role, r.unit_start, r.unit_end) for r in bt.records]
    assert roles == [(("Copyright Page",), "body", 0, 0),
                     (("Table of Contents",), "contents", 1, 1),
                     (("Chapter 1",), "body", 2, 2)]
    lines = bt.markdown.splitlines()
    assert lines.count("# Table of Contents") == 1  # its own honest heading, once
    assert "1. Copyright Page" in lines  # still readable


def test_contents_pages_without_a_heading_are_called_contents():
    pages = (SourceUnit("pdf_page", 0, "Intro text " * 20),
             SourceUnit("pdf_page", 1, "Intro 1\nMethods 5", role="contents"),
             SourceUnit("pdf_page", 2, "Body text " * 20))
    bt = build_book_text(SourceDocument("pdf", pages, toc=(TocEntry("Intro", 1, 0),
                                                           TocEntry("Methods", 1, 2))))
    assert [(r.heading_path, r.role) for r in bt.records] == [
        (("Intro",), "body"), (("Contents",), "contents"), (("Methods",), "body")]


def test_image_only_pages_are_placeholders_in_reading_order():
    pages = (SourceUnit("pdf_page", 0, "First page text.", label="1"),
             SourceUnit("pdf_page", 1, "", label="2", has_text_layer=False),
             SourceUnit("pdf_page", 2, "Third page text.", label="3"))
    bt = build_book_text(SourceDocument("pdf", pages, toc=(TocEntry("All", 1, 0),)))
    assert [(r.unit_start, r.unit_end, r.text) for r in bt.records] == [
        (0, 0, "First page text."), (1, 1, ""), (2, 2, "Third page text.")]
    placeholder = _record_lines(bt, bt.records[1])
    assert '<!-- page index=1 label="2" -->' in placeholder
    assert "Page index 1, label 2" in placeholder and NO_TEXT_LAYER in placeholder
    assert bt.records[1].heading_path == ("All",)
    # Without contents, the page is a section of its own, still a placeholder.
    alone = build_book_text(SourceDocument("pdf", (SourceUnit("pdf_page", 0, "",
                                                              has_text_layer=False),)))
    assert len(alone.records) == 1 and NO_TEXT_LAYER in alone.markdown


def test_record_furniture_offsets_point_at_the_furniture_text():
    p0 = "Running Head\nThe sentence runs to the foot\n12"
    p1 = "Running Head\nof the page and on.\n13"
    spans0 = ((0, 12, "running_head"), (len(p0) - 2, len(p0), "folio"))
    spans1 = ((0, 12, "running_head"), (len(p1) - 2, len(p1), "folio"))
    pages = (SourceUnit("pdf_page", 0, p0, furniture=spans0),
             SourceUnit("pdf_page", 1, p1, furniture=spans1))
    bt = build_book_text(SourceDocument("pdf", pages, toc=(TocEntry("One", 1, 0),)))
    (record,) = bt.records
    assert [record.text[s:e] for s, e, _ in record.furniture] == [
        "Running Head", "12", "Running Head", "13"]
    assert [k for _, _, k in record.furniture] == ["running_head", "folio"] * 2
    # The view leaves running heads and folios out of the prose; page markers stay.
    assert "Running Head" not in bt.markdown and "\n12\n" not in bt.markdown
    assert "<!-- page index=1 -->" in bt.markdown


def test_record_furniture_in_a_split_chapter_and_note_refs_readable():
    unit = _long_chapter(n=30)
    refs = [(m.start(), m.end(), "note_ref") for m in re.finditer(r"x7\b", unit.text)]
    unit = SourceUnit(unit.kind, 0, unit.text, blocks=unit.blocks, furniture=tuple(refs))
    bt = build_book_text(SourceDocument("epub", (unit,)))
    assert len(bt.records) > 1
    found = [r.text[s:e] for r in bt.records for s, e, _ in r.furniture]
    assert found == ["x7"] * len(refs)
    raw = SourceUnit("pdf_page", 0, "A claim12 stands here.", furniture=((7, 9, "note_ref"),))
    assert "A claim<sup>12</sup> stands here." in build_book_text(
        SourceDocument("pdf", (raw,))).markdown


def test_raw_pdf_text_reads_as_paragraphs_with_hyphenation_joined():
    line = "This is a line of ordinary justified text that fills the column to the"
    text = "\n".join([line, line + " exam-", "ple of a paragraph.", line, line,
                      "A second paragraph here.", line + " end."])
    bt = build_book_text(SourceDocument("pdf", (SourceUnit("pdf_page", 0, text),)))
    body = bt.markdown.split("<!-- page index=0 -->\n", 1)[1]
    paragraphs = [p.replace("\n", " ") for p in body.strip().split("\n\n")]
    assert any("example of a paragraph." in p for p in paragraphs)
    assert "exam-" not in bt.markdown
    assert len(paragraphs) == 3 and paragraphs[1].endswith("A second paragraph here.")
    assert bt.records[0].text == text  # the record keeps the raw text


def test_a_huge_list_block_is_cut_at_items_and_stays_a_list():
    items = [f"Item number {i} of a very long list with many words in it" for i in range(200)]
    text = "List\n" + "\n".join(items)
    md = "\n".join(f"{i + 1}. {item}" for i, item in enumerate(items))
    unit = SourceUnit("epub_chapter", 0, text, blocks=((0, 4, "# List"), (5, len(text), md)))
    bt = build_book_text(SourceDocument("epub", (unit,), toc=(TocEntry("List", 1, 0),)))
    assert bt.markdown_fallback_units == [] and len(bt.records) > 2
    assert all(len(r.text) <= MAX_RECORD_CHARS for r in bt.records)
    for i in (0, 99, 199):
        assert f"{i + 1}. Item number {i} of" in bt.markdown


def test_tables_and_verse_blocks_keep_their_shape():
    table = "| a | b |\n| --- | --- |\n| 1 | 2 |"
    verse = ("From fairest creatures we desire increase,  \n"
             "That thereby beauty's rose might never die,")
    text = "a b\n1 2\nFrom fairest creatures we desire increase,\n" \
           "That thereby beauty's rose might never die,"
    unit = SourceUnit("epub_chapter", 0, text, blocks=((0, 7, table), (8, len(text), verse)))
    md = build_book_text(SourceDocument("epub", (unit,))).markdown
    assert table in md and verse in md
    # Raw EPUB text (no blocks): short lines in a run keep their breaks, long lines are paragraphs.
    raw = SourceUnit("epub_chapter", 0, "Line one of verse\nLine two of verse\nLine three\n"
                     + "A long prose paragraph " * 5)
    md = build_book_text(SourceDocument("epub", (raw,))).markdown
    assert "Line one of verse  \nLine two of verse  \nLine three\n\nA long prose" in md


def test_a_lossy_block_rendering_falls_back_for_that_unit_only():
    good = _long_chapter(0, n=3)
    text = "Lossy\n" + "Lots of text. " * 40
    lossy = SourceUnit("epub_chapter", 1, text, blocks=((0, 5, "# Lossy"),
                                                        (6, len(text), "Lots of text.")))
    bt = build_book_text(SourceDocument("epub", (good, lossy), toc=(
        TocEntry("The Long Chapter", 1, 0), TocEntry("Lossy", 1, 1))))
    assert bt.markdown_fallback_units == [1]
    assert bt.markdown.count("Lots of text.") == 40
    assert "*emphasised phrase*" in bt.markdown


def test_records_stay_contiguous_with_blocks_sections_and_roles():
    units = (_long_chapter(0, 20), _long_chapter(1, 20), _long_chapter(2, 5))
    units = (units[0], SourceUnit("epub_chapter", 1, units[1].text, blocks=units[1].blocks,
                                  role="contents"), units[2])
    off = units[0].blocks[10][0]
    doc = SourceDocument("epub", units, toc=(TocEntry("A", 1, 0), TocEntry("B", 2, 0, off),
                                             TocEntry("C", 1, 2)))
    bt = build_book_text(doc)
    spans = [((r.unit_start, r.char_start), (r.unit_end, r.char_end)) for r in bt.records]
    assert spans[0][0] == (0, 0) and spans[-1][1] == (2, len(units[2].text))
    for (_, end), (start, _) in pairwise(spans):
        assert end == start or (start[1] == 0 and end == (start[0] - 1,
                                                          len(units[start[0] - 1].text)))
    assert {r.role for r in bt.records if r.unit_start == 1} == {"contents"}


def test_a_section_number_stays_with_its_heading():
    text = "End of the last section.\n1\nIntroduction\nThe text."
    unit = SourceUnit("pdf_page", 0, text)
    off = text.index("Introduction")
    bt = build_book_text(SourceDocument("pdf", (unit,), toc=(
        TocEntry("Before", 1, 0), TocEntry("1 Introduction", 1, 0, off))))
    assert bt.records[0].text.rstrip().endswith("section.")
    assert bt.records[1].text.startswith("1\nIntroduction")


def test_verse_printed_one_paragraph_per_line_reads_as_stanzas():
    stanzas = [["EVEN as the sun with purple-colour'd face", "Had ta'en his last leave,",
                "Rose-cheek'd Adonis hied him to the chase;"],
               ["'Thrice-fairer than myself,' thus she began,", "The field's chief flower,",
                "Stain to all nymphs, more lovely than a man,"]]
    lines = stanzas[0] + ["\u00a0"] + stanzas[1]
    text = "\n".join(lines)
    blocks, pos = [], 0
    for line in lines:
        if line.strip():  # the empty paragraph between stanzas is no block
            blocks.append((pos, pos + len(line), line))
        pos += len(line) + 1
    unit = SourceUnit("epub_chapter", 0, text, blocks=tuple(blocks))
    md = build_book_text(SourceDocument("epub", (unit,))).markdown
    assert "  \n".join(stanzas[0]) + "\n\n" + "  \n".join(stanzas[1]) in md
    # Short paragraphs of dialogue stay paragraphs.
    talk = ["“Yes.”", "“No.”", "“Why not?”", "“Because.”"]
    text = "\n".join(talk)
    blocks, pos = [], 0
    for line in talk:
        blocks.append((pos, pos + len(line), line))
        pos += len(line) + 1
    md = build_book_text(SourceDocument("epub", (SourceUnit("epub_chapter", 0, text,
                                                            blocks=tuple(blocks)),))).markdown
    assert "\n\n".join(talk) in md


def test_a_repeated_title_after_a_cover_image_is_left_out():
    text = "Manufactures.\nMills and more mills."
    unit = SourceUnit("epub_chapter", 0, text, blocks=(
        (0, 0, "![map](images/map.jpg)"), (0, 13, "## Manufactures."), (14, len(text),
                                                                       "Mills and *more* mills.")))
    md = build_book_text(SourceDocument("epub", (unit,), toc=(TocEntry("Manufactures", 1, 0),),
                                        title="Georgia")).markdown
    assert md.count("Manufactures") == 1 and "![map](images/map.jpg)" in md
    assert "Mills and *more* mills." in md


def test_a_long_raw_section_drops_its_repeated_title_once():
    text = "Chapter Two\n" + "\n\n".join("A sentence of the raw chapter text. " * 12
                                        for _ in range(12))
    unit = SourceUnit("pdf_page", 0, text)
    bt = build_book_text(SourceDocument("pdf", (unit,), toc=(TocEntry("Chapter Two", 1, 0),)))
    assert len(bt.records) > 1 and bt.markdown.count("Chapter Two") == 1


def test_epub_page_marks_stay_as_comments_and_page_break_text_leaves_the_prose():
    text = "First paragraph ends here.\n752\nSecond paragraph begins."
    unit = SourceUnit("epub_chapter", 0, text, page_marks=((27, "752"),),
                      furniture=((27, 30, "page_break"),),
                      blocks=((0, 26, "First paragraph ends here."),
                              (31, len(text), "Second paragraph begins.")))
    md = build_book_text(SourceDocument("epub", (unit,))).markdown
    assert '<!-- page label="752" -->\nSecond paragraph begins.' in md
    assert "\n752\n" not in md


def test_a_printed_contents_page_is_titled_by_its_own_first_line():
    pages = (SourceUnit("pdf_page", 0, "Preface text " * 20),
             SourceUnit("pdf_page", 1, "Inhalt\n1 Anfang . . . . . 3", role="contents",
                        blocks=((0, 6, "**Inhalt**"), (7, 26, "1 Anfang . . . . . 3"))),
             SourceUnit("pdf_page", 2, "Anfang\nDer Text."))
    bt = build_book_text(SourceDocument("pdf", pages, toc=(TocEntry("Vorwort", 1, 0),
                                                           TocEntry("Anfang", 1, 2))))
    assert [r.heading_path for r in bt.records] == [("Vorwort",), ("Inhalt",), ("Anfang",)]
    assert bt.markdown.count("Inhalt") == 1  # the bold title is the heading, written once
    raw = (pages[0], SourceUnit("pdf_page", 1, "Contents of the book\n1 Start 3",
                                role="contents"), pages[2])
    bt = build_book_text(SourceDocument("pdf", raw, toc=(TocEntry("Vorwort", 1, 0),
                                                         TocEntry("Anfang", 1, 2))))
    assert bt.records[1].heading_path == ("Contents of the book",)
    assert bt.markdown.count("Contents of the book") == 1


def test_an_empty_section_inside_a_block_is_no_fallback():
    unit = _long_chapter(n=3)
    inside = unit.blocks[1][0] + 5
    bt = build_book_text(SourceDocument("epub", (unit,), toc=(
        TocEntry("The Long Chapter", 1, 0), TocEntry("Empty", 2, 0, inside),
        TocEntry("Same place", 2, 0, inside))))
    assert any(r.heading_path[-1] == "Empty" and r.text == "" for r in bt.records)
    # The block cut by a section edge falls back, and says so; nothing else does.
    assert bt.markdown_fallback_units == [0]
    assert bt.markdown.count("*emphasised phrase*") == 2


def test_a_heading_without_text_is_its_records_line_and_no_blank_run():
    units = (SourceUnit("markdown_section", 0, "# Book\n", markdown="# Book\n"),
             SourceUnit("markdown_section", 1, "## Part\n\nText *here*.\n",
                        markdown="## Part\n\nText *here*.\n"))
    bt = build_book_text(SourceDocument("markdown", units, toc=(
        TocEntry("Book", 1, 0), TocEntry("Part", 2, 1))))
    lines = bt.markdown.splitlines()
    assert "\n\n\n" not in bt.markdown
    first = bt.records[0]
    assert lines[first.md_line_start - 1] == "# Book" and first.md_line_end == first.md_line_start
    assert "Text *here*." in lines and lines.count("## Part") == 1


def test_an_empty_unit_between_contents_units_does_not_split_them():
    nav1 = SourceUnit("epub_chapter", 0, "Contents\nOne", role="contents")
    blank = SourceUnit("epub_chapter", 1, "")
    nav2 = SourceUnit("epub_chapter", 2, "Two\nThree", role="contents")
    body = SourceUnit("epub_chapter", 3, "One\nThe story.")
    bt = build_book_text(SourceDocument("epub", (nav1, blank, nav2, body),
                                        toc=(TocEntry("One", 1, 3),)))
    assert [(r.role, r.unit_start, r.unit_end) for r in bt.records] == [
        ("contents", 0, 2), ("body", 3, 3)]


def test_no_hard_break_dangles_at_the_end_of_a_record():
    rows = [f"Theorem T{i} A statement of some length about vectors number {i}" for i in range(150)]
    text = "\n".join(rows)
    md = "\\\n".join(rows)
    unit = SourceUnit("epub_chapter", 0, text, blocks=((0, len(text), md),))
    bt = build_book_text(SourceDocument("epub", (unit,)))
    assert len(bt.records) > 2 and bt.markdown_fallback_units == []
    lines = bt.markdown.splitlines()
    for r in bt.records:
        assert not lines[r.md_line_end - 1].endswith(("\\", "  "))
    assert all(f"Theorem T{i} A statement" in bt.markdown for i in (0, 75, 149))


def test_a_title_repeated_after_a_chapter_label_heading_is_left_out():
    text = "Chapter One\nThe Short Sail\nAvishai walked in."
    unit = SourceUnit("epub_chapter", 0, text, blocks=(
        (0, 11, "##### Chapter One"), (12, 26, "### The Short Sail"),
        (27, len(text), "Avishai walked in.")))
    md = build_book_text(SourceDocument("epub", (unit,), toc=(TocEntry("The Short Sail", 1, 0),),
                                        title="Sailing")).markdown
    assert md.count("The Short Sail") == 1 and "Chapter One" in md


def test_a_printed_section_number_stays_with_its_heading_once():
    text = "2.2 Naming\nNames are given here."
    unit = SourceUnit("pdf_page", 0, text, blocks=((0, 10, "## 2.2 Naming"),
                                                   (11, len(text), "Names are given here.")))
    md = build_book_text(SourceDocument("pdf", (unit,), toc=(TocEntry("Naming", 1, 0),),
                                        title="Book")).markdown
    headings = [line for line in md.splitlines() if line.startswith("#")]
    assert headings == ["# Book", "## 2.2 Naming"]
