"""EPUB Markdown blocks (issue 11 §5): one pass yields the raw text and the blocks with their
raw spans, so the blocks cover the text in reading order and keep the book's structure."""

from __future__ import annotations

import re

import pytest

from readingroom.book.furniture import mask_furniture
from readingroom.book.ingest import ingest
from readingroom.book.text import normalise

from ..conftest import fixture_books
from ..ingested import ingested
from ..make_epub_classes import BLOCKS_BODY, VERSE_BODY, make_book

_FIXTURES = (
    "georgia-cfi.epub", "epub30-spec.epub", "alice-epub3-images.epub",
    "venus-and-adonis-epub2.epub", "linear-algebra.epub", "israelsailing.epub",
    "regime-anticancer-arabic.epub",
)



def _check_blocks(unit) -> float:
    """Asserts the blocks' order and bounds; returns the share of the text they cover."""
    previous = 0
    for start, end, markdown in unit.blocks:
        assert previous <= start <= end <= len(unit.text), (unit.href, start, end)
        assert markdown.strip()
        previous = end
    words = normalise(mask_furniture(unit.text, unit.furniture)).split()
    if not words:
        return 1.0
    covered = "".join(
        normalise(mask_furniture(unit.text[s:e], [(a - s, b - s, k) for a, b, k in
                                                  unit.furniture if a >= s and b <= e]))
        for s, e, _md in unit.blocks
    )
    return len(covered.replace(" ", "")) / len("".join(words))


def test_a_chapter_keeps_its_structure(tmp_path):
    unit = ingest(make_book(tmp_path / "b.epub", [("c", BLOCKS_BODY)])).units[0]
    assert _check_blocks(unit) == 1.0
    blocks = [md for _s, _e, md in unit.blocks]
    assert blocks[0] == "# Blocks"
    assert "*emphasis*" in blocks[1] and "**strong words**" in blocks[1]
    assert blocks[2] == "A second paragraph."
    assert blocks[3] == "- apples\n- pears\n  1. green\n  2. red"
    assert blocks[4] == "> A quoted line.\n>\n> Another quoted line."
    assert blocks[5].startswith("Prices\n\n| Fruit | Price |\n| --- | --- |\n| Apple | 3 |")
    assert blocks[6] == "```\ncode line one\n  code line two\n```"
    assert "* * *" in blocks and "![A figure](OEBPS/pic.png)" in blocks
    assert blocks[-2:] == ["## After", "The end."]
    # the Markdown view of the unit is the blocks, for callers that read it whole
    assert unit.markdown == "\n\n".join(blocks)


def test_block_spans_are_the_raw_text_of_their_block(tmp_path):
    unit = ingest(make_book(tmp_path / "b.epub", [("c", BLOCKS_BODY)])).units[0]
    spans = {md: unit.text[s:e] for s, e, md in unit.blocks}
    assert spans["# Blocks"] == "Blocks"
    assert spans["A second paragraph."] == "A second paragraph."
    table = next(md for md in spans if md.startswith("Prices"))
    assert spans[table] == "Prices\nFruit Price\nApple 3\nPear 4"


def test_verse_keeps_its_line_breaks(tmp_path):
    unit = ingest(make_book(tmp_path / "b.epub", [("c", VERSE_BODY)])).units[0]
    stanzas = [md for _s, _e, md in unit.blocks[1:]]
    # a stanza of one-line paragraphs is one block with hard breaks, as is one built on <br/>
    assert [len(md.split("\\\n")) for md in stanzas] == [4, 2]
    assert stanzas[0].startswith("Even as the sun with purple-colour'd face\\\nHad ta'en")
    assert stanzas[1] == ("Sick-thoughted Venus makes amain unto him,\\\n"
                          "And like a bold-faced suitor 'gins to woo him.")


def test_emphasis_with_spaces_inside_closes_at_the_word(tmp_path):
    body = "<p>A<em> word </em>here and <b>bold</b>, <i></i>none.</p>"
    unit = ingest(make_book(tmp_path / "b.epub", [("c", body)])).units[0]
    assert unit.text == "A word here and bold, none."
    assert unit.blocks[0][2] == "A *word* here and **bold**, none."


def test_cjk_blocks_have_no_soft_wraps(tmp_path):
    body = "<p>吾輩は猫である。\n名前はまだ無い。</p><p>どこで生れたか\nとんと見当がつかぬ。</p>"
    unit = ingest(make_book(tmp_path / "b.epub", [("c", body)])).units[0]
    assert [md for _s, _e, md in unit.blocks] == [
        "吾輩は猫である。名前はまだ無い。", "どこで生れたかとんと見当がつかぬ。"
    ]


def test_a_layout_table_is_not_a_markdown_table(tmp_path):
    body = "<table><tr><td><p>First paragraph.</p><p>Second paragraph.</p></td></tr></table>"
    unit = ingest(make_book(tmp_path / "b.epub", [("c", body)])).units[0]
    assert [md for _s, _e, md in unit.blocks] == ["First paragraph.", "Second paragraph."]


def test_mathml_reads_as_text(tmp_path):
    body = (
        '<p>Let <math xmlns="http://www.w3.org/1998/Math/MathML"><msub><mi>x</mi><mn>1</mn>'
        "</msub><mo>+</mo><msup><mi>y</mi><mn>2</mn></msup><mo>=</mo><mfrac><mi>a</mi>"
        '<mi>b</mi></mfrac><mfenced open="[" close="]"><mi>A</mi></mfenced><msqrt><mn>2</mn>'
        "</msqrt></math> hold.</p>"
    )
    unit = ingest(make_book(tmp_path / "b.epub", [("c", body)])).units[0]
    assert unit.text == "Let x1+y2=abA2 hold."  # the raw text keeps the characters only
    assert unit.blocks == ((0, 20, "Let x\\_{1}+y^{2}=(a)/(b)[A]√(2) hold."),)


@pytest.mark.slow
@pytest.mark.parametrize("name", _FIXTURES)
def test_fixture_blocks_cover_every_chapter(name):
    doc = ingested(fixture_books() / name)
    for unit in doc.units:
        if unit.text.strip():
            assert _check_blocks(unit) >= 0.95, unit.href


def test_fixture_tables_and_images_survive():
    spec = ingested(fixture_books() / "epub30-spec.epub")
    assert any(md.startswith("|") or "\n| --- |" in md
               for u in spec.units for _s, _e, md in u.blocks)
    alice = ingested(fixture_books() / "alice-epub3-images.epub")
    images = [m for u in alice.units for _s, _e, md in u.blocks
              for m in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", md)]
    declared = {path for u in alice.units for path in u.images}
    assert images and set(images) <= declared


def test_comments_and_processing_instructions_are_not_text(tmp_path):
    body = "<h1>T<!-- note to self --></h1><p>A <!-- hidden --> b<?pi x?> c.</p>"
    doc = ingest(make_book(tmp_path / "b.epub", [("c", body)]))
    assert doc.units[0].text == "T\nA b c."
    assert [md for _s, _e, md in doc.units[0].blocks] == ["# T", "A b c."]
