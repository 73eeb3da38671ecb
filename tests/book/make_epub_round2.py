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
    "make_japanese_book",
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
