"""Small generated EPUBs for the book classes of issue 21 (hand-made, not upstream samples).

No fixture book has Japanese text, ruby, a back-of-book index or a colophon of its own, so
these are written from the EPUB 3 structural vocabulary (``epub:type`` index-group,
index-entry, index-locator-list, colophon) and the markup habits of Japanese e-books
(``<ruby>…<rt>…</rt></ruby>``, a paragraph per sentence group). Each builder returns the
path of one book; tests init them once per module.
"""

from __future__ import annotations

from pathlib import Path

from .make_epub_classes import make_book

__all__ = [
    "JAPANESE_CHAPTERS",
    "make_headings_book",
    "make_index_book",
    "make_japanese_book",
    "make_ruby_book",
]

JAPANESE_CHAPTERS = [
    ("kusamakura",
     "<h1>草枕</h1>"
     "<p>山路を登りながら、こう考えた。智に働けば角が立つ。とかくに人の世は住みにくい。</p>"
     "<p>住みにくさが高じると、安い所へ引き越したくなる。</p>"
     "<p>これは假定の話である。</p>"
     '<p>彼は「そうか」</p><div class="stanza"><p>春の野に</p><p>すみれ摘みにと</p></div>'
     "<p>来し我ぞ野をなつかしみ一夜寝にける．</p>"),
    ("tsugi",
     "<p>次の章の始まり。電話番号は273.879.7501である。</p>"
     "<p>仮定の話もある。</p>"),
]
"""Two paragraphs that a quote runs across after 。, a quote running into a verse block after
」, a chapter ending in ．so a quote runs across the spine, 假定 (kyūjitai) in one chapter and
仮定 in the other, and a number that a shorter number is a prefix of."""


def make_japanese_book(path: Path) -> Path:
    """The Japanese book of :data:`JAPANESE_CHAPTERS`."""
    return make_book(path, JAPANESE_CHAPTERS)


_PROSE = ("The committee met in the long room above the harbour and read the letters aloud, one "
          "after another, until the lamps were lit and the tide had turned again. ")

HEADINGS_NAV = (
    '<nav epub:type="toc" id="toc"><h1>Contents</h1><ol>'
    '<li><a href="intro.xhtml">1. Introduction</a></li>'
    '<li><a href="methods.xhtml">2. Methods</a></li>'
    '<li><a href="ch1.xhtml">Chapter 1</a></li>'
    '<li><a href="ch10.xhtml">Chapter 10</a></li>'
    "</ol></nav>"
)
HEADINGS_CHAPTERS = [
    # the nav entry, then the printed heading with its chapter label; subsections the nav
    # does not list
    ("intro", "<h1>Chapter 1. Introduction</h1><p>Why the harbour matters. " + _PROSE + "</p>"
     "<h2>Background</h2><p>The old quays were built of granite. " + _PROSE * 2 + "</p>"
     "<h3>Earlier surveys</h3><p>Two surveys measured the silt. " + _PROSE * 2 + "</p>"),
    # a title printed three times, emphasis inside the headings
    ("methods", "<header><h1>Methods</h1></header><h1><b>2. Methods</b></h1>"
     "<h2><strong>Methods</strong></h2><p>We counted the boats at dawn. " + _PROSE + "</p>"),
    ("ch1", "<h1><strong>Chapter 1</strong></h1><p>The first chapter of the log.</p>"),
    ("ch10", "<h1><strong>Chapter 10</strong></h1><p>The tenth chapter of the log.</p>"),
    # a colophon in its own spine item, not in the nav
    ("colophon", '<section epub:type="colophon"><h1>奥付</h1><p>発行　二〇二六年一月</p>'
     "<p>Printed at the harbour press.</p></section>"),
]
"""Duplicated and decorated headings, subsections missing from the nav, a colophon of its
own (hand-made)."""


def make_headings_book(path: Path) -> Path:
    """The book of :data:`HEADINGS_CHAPTERS` with :data:`HEADINGS_NAV`."""
    return make_book(path, HEADINGS_CHAPTERS, nav_body=HEADINGS_NAV)


INDEX_CHAPTERS = [
    ("ch1", '<h1>Topics</h1><p id="p12">A <em>topic</em> is what a passage is about. '
     + _PROSE + '</p><p id="p13">A metatopic is a topic about topics: the subject of a '
     "subject. " + _PROSE + "</p>"),
    ("ch2", '<h1>Maps</h1><p id="p46">Topic maps join topics by associations. ' + _PROSE
     + '</p><p id="p47">Scope limits where an association holds. ' + _PROSE + "</p>"),
    # a typed index (EPUB Indexes vocabulary) whose locators link to paragraphs
    ("idx", '<section epub:type="index"><h1>Index</h1>'
     '<div epub:type="index-group"><ul>'
     '<li epub:type="index-entry"><span epub:type="index-term">association</span> '
     '<span epub:type="index-locator-list"><a href="ch2.xhtml#p46">46</a>–'
     '<a href="ch2.xhtml#p47">47</a></span></li>'
     '<li epub:type="index-entry"><span epub:type="index-term">metatopics</span> '
     '<a href="ch1.xhtml#p13">13</a></li>'
     '<li epub:type="index-entry"><span epub:type="index-term">topic maps</span> '
     '<a href="ch2.xhtml#p46">46</a>, <a href="ch1.xhtml">12</a></li>'
     "</ul></div></section>"),
]
"""Two chapters and a back-of-book index in the EPUB Indexes vocabulary (hand-made)."""

UNTYPED_INDEX = ("idx2", "<h1>Index</h1><p>association, 46–47</p><p>scope, 47</p>"
                 "<p>topic maps, 12, 46</p>")
"""An index without index markup, known by its heading."""


def make_index_book(path: Path, *, typed: bool = True) -> Path:
    """The book of :data:`INDEX_CHAPTERS` (with the untyped index instead when not typed)."""
    chapters = INDEX_CHAPTERS if typed else [*INDEX_CHAPTERS[:2], UNTYPED_INDEX]
    return make_book(path, chapters)


RUBY_CHAPTERS = [
    ("ruby",
     "<h1>草枕</h1>"
     "<p>意地を通せば窮屈だ。とかくに人の世は<ruby>寛容<rt>くつろげ</rt></ruby>て住みよくない。</p>"
     "<p><ruby><rb>漢</rb><rp>（</rp><rt>かん</rt><rp>）</rp><rb>字</rb><rp>（</rp><rt>じ</rt>"
     "<rp>）</rp></ruby>の読みを添える。</p>"),
]
"""A gikun reading (寛容《くつろげ》) and ruby with ``<rb>``/``<rp>`` (hand-made, after the
markup of Japanese e-books)."""


def make_ruby_book(path: Path) -> Path:
    """The book of :data:`RUBY_CHAPTERS`."""
    return make_book(path, RUBY_CHAPTERS)
