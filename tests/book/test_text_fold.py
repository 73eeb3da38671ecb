"""The one fold search and locate share: a quote matches however it was typed.

Straight punctuation against typographic, ASCII dashes against em dashes, three dots against an
ellipsis, NBSP and thin spaces, full-width forms, kyūjitai against shinjitai, Arabic and Hebrew
with and without their marks; the offset map stays exact.
"""

from __future__ import annotations

import pytest

from readingroom.book.locate import SourceText
from readingroom.book.model import SourceUnit
from readingroom.book.text import (
    FOLD_NAMES,
    describe_folds,
    folds_between,
    normalise,
    normalise_with_offsets,
    raw_span,
)
from readingroom.book.variants import KANJI_VARIANTS

EQUAL = [
    ("it’s the ‘end’", "it's the 'end'"),
    ("“Hello,” she said", '"Hello," she said'),
    ("„Guten Tag“", '"Guten Tag"'),
    ("« Bonjour » dit-il", '"Bonjour" dit-il'),
    ("word—word", "word -- word"),
    ("word—word", "word - word"),
    ("word — word", "word--word"),
    ("word – word", "word—word"),
    ("1914–1918", "1914-1918"),
    ("and then…", "and then..."),
    ("wait … what", "wait... what"),
    ("wait . . . what", "wait... what"),
    ("a\u00a0b", "a b"),
    ("a\u2009b\u202fc\u2007d", "a b c d"),
    ("Quoi\u202f?", "Quoi?"),
    ("ＡＢＣ１２３の本", "ABC123の本"),
    ("「ＰＤＦ」を読む", "「PDF」を読む"),
    ("假名", "仮名"),
    ("古い電燈の下で", "古い電灯の下で"),
    ("澤田さんの國學", "沢田さんの国学"),
    ("كَتَبَ الوَلَدُ", "كتب الولد"),
    ("كـــتـــاب", "كتاب"),
    ("أحمد وإبراهيم آدم", "احمد وابراهيم ادم"),
    ("שָׁלוֹם עֲלֵיכֶם", "שלום עליכם"),
    ("בְּרֵאשִׁ֖ית בָּרָ֣א", "בראשית ברא"),
    ("צה״ל ות׳", 'צה"ל ות\''),
    ("exam-\nple", "example"),
    ("exam\u00ad\nple", "example"),
    ("exam\u00adple", "example"),
]


@pytest.mark.parametrize(("book", "typed"), EQUAL)
def test_typed_and_printed_forms_fold_alike(book, typed):
    assert normalise(book) == normalise(typed)


@pytest.mark.parametrize("compound", ["Match-Box", "well-known", "COVID-19"])
def test_a_hyphen_inside_a_word_on_one_line_is_kept(compound):
    folded = normalise(f"The {compound} story")
    assert compound.lower() in folded


def test_only_end_of_line_hyphenation_is_joined():
    assert normalise("topologi-\nscher Raum") == "topologischer raum"
    assert normalise("topologi-   \n  scher") == "topologischer"
    # A dash at a line end is not hyphenation: the words stay apart.
    assert normalise("this—\nthat") == "this-that"
    assert normalise("this --\nthat") == "this-that"


def test_different_text_stays_different():
    assert normalise("well-known") != normalise("well known")
    assert normalise("it's") != normalise("its")
    assert normalise("仮名") != normalise("仮面")


@pytest.mark.parametrize("text", [book for book, _ in EQUAL] + [
    "", " ", "ﬁne Straße", "e\u0301te\u0301", "  lead and trail  ", "x \u200b\u200b y",
    "\u05d0\u05b0", "\u0301alone", "日本\n語", "a - - b", "‘’“”", "..........",
    "a \u00ad b", "\u00ad", "x\u00ad", "ex\u00ad ample", "ا\u0654\u064e",
])
def test_offset_map_is_exact(text):
    folded, offsets = normalise_with_offsets(text)
    assert len(offsets) == len(folded) + 1 and offsets[-1] == len(text)
    assert offsets == sorted(offsets)
    assert all(0 <= o <= len(text) for o in offsets)
    if folded:
        # The whole folded text maps back to a raw span that folds to the same text.
        a, b = raw_span(offsets, 0, len(folded), len(text))
        assert normalise(text[a:b]) == folded


def test_describe_folds_names_what_changed():
    assert describe_folds("it’s 假名") == ["punctuation", "kanji_variant"]
    assert describe_folds("plain ascii text") == []
    assert describe_folds("a\u00a0b") == ["space"]
    assert describe_folds("ＡＢＣ") == ["width"]
    assert describe_folds("ﬁne") == ["compatibility"]
    assert describe_folds("كَتَبَ") == ["diacritics"]
    assert describe_folds("أحمد") == ["letter_variant"]
    assert describe_folds("exam-\nple") == ["hyphenation"]
    assert set(describe_folds("soft\u00adhyphen — «x» ﬁ")) <= set(FOLD_NAMES)


def test_folds_between_reports_only_the_folds_that_mattered():
    assert folds_between("it's", "it’s") == ["punctuation"]
    assert folds_between("it’s", "it’s") == []
    assert folds_between("Word", "word") == []
    assert folds_between("仮名", "假名") == ["kanji_variant"]
    assert folds_between("word -- word", "word—word") == ["punctuation"]
    assert folds_between("كتب", "كَتَبَ") == ["diacritics"]


def test_kanji_table_is_one_to_one_and_already_folded():
    assert all(len(k) == 1 and len(v) == 1 and k != v for k, v in KANJI_VARIANTS.items())
    assert not set(KANJI_VARIANTS) & set(KANJI_VARIANTS.values())  # no chains
    assert {"假": "仮", "燈": "灯", "澤": "沢", "國": "国", "學": "学"}.items() <= \
        KANJI_VARIANTS.items()


def unit(text: str, index: int = 0, **kw) -> SourceUnit:
    return SourceUnit("epub_chapter", index, text, href=f"c{index}.xhtml", **kw)


@pytest.mark.parametrize(("book", "typed"), [
    ("He said, “It’s only a Match-Box—nothing more…”", "He said, \"It's only a Match-Box -- "
     "nothing more...\""),
    ("古い電燈の下で假名を書く。", "古い電灯の下で仮名を書く"),
    ("قال: كَتَبَ الوَلَدُ الدَّرْسَ", "كتب الولد الدرس"),
    ("וַיֹּאמֶר אֱלֹהִים יְהִי אוֹר", "ויאמר אלהים יהי אור"),
])
def test_locate_finds_the_typed_quote_and_says_which_fold_mattered(book, typed):
    source = SourceText([unit(book)], book_id="b", version=1, source_sha256="a" * 64)
    _, spans = source.find(typed)
    assert len(spans) == 1
    (_, c0), (_, c1) = spans[0]
    assert normalise(book[c0:c1]) == normalise(typed).strip()
    assert source.match_folds(typed, spans)
    # And back: the book's own text finds itself with no fold to report.
    _, again = source.find(book[c0:c1])
    assert again == spans and source.match_folds(book[c0:c1], again) == []


def test_a_compound_typed_with_its_hyphen_finds_it_broken_at_a_line_end():
    source = SourceText([unit("a well-\nknown fact and a well-known one")], book_id="b",
                        version=1, source_sha256="a" * 64)
    _, spans = source.find("well-known")
    assert [s[0][1] for s in spans] == [2, 25]
