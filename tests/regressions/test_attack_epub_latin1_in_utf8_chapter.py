"""Attack: Latin-1 bytes in a chapter that declares UTF-8.

The bytes that are not UTF-8 became U+FFFD in the raw text with no warning, so a book could
register with damaged words and nobody would know. The text is still read as declared (the
raw text stays what the file says), but each chapter with undecodable bytes now gets a warning
with the count.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from tests.book.make_books import make_epub

from readingroom.book.ingest import ingest

LATIN1_BODY = "<p>café au lait, crème brûlée, naïve façade</p>"  # 6 non-ASCII letters


def _latin1_chapter_epub(path: Path, chapters: int = 1) -> Path:
    make_epub(path, [(f"C{i}", f"<p>chapter {i}</p>") for i in range(chapters)])
    for i in range(1, chapters + 1):
        _latin1_entry(path, f"OEBPS/chapter{i:02d}.xhtml")
    return path


def _latin1_entry(path: Path, name: str) -> None:
    with zipfile.ZipFile(path) as zf:
        entries = [(info, zf.read(info)) for info in zf.infolist()]
    with zipfile.ZipFile(path, "w") as zf:
        for info, data in entries:
            if info.filename == name:
                head, _sep, rest = data.decode("utf-8").partition("<body>")
                _body, _sep, tail = rest.partition("</body>")
                # The declaration still says utf-8; the body is written as Latin-1.
                data = head.encode() + b"<body>" + LATIN1_BODY.encode("latin-1") + b"</body>"
                data += tail.encode()
            zf.writestr(info, data)


def test_latin1_bytes_in_a_utf8_chapter_are_counted_per_chapter(tmp_path: Path) -> None:
    doc = ingest(_latin1_chapter_epub(tmp_path / "latin1.epub", chapters=2))
    assert [u.text.count("\ufffd") for u in doc.units] == [6, 6]
    warned = [w for w in doc.warnings if "not valid UTF-8" in w]
    assert len(warned) == 2, doc.warnings
    assert "OEBPS/chapter01.xhtml" in warned[0] and "OEBPS/chapter02.xhtml" in warned[1]
    assert all("6 byte sequences" in w and "U+FFFD" in w for w in warned)


def test_clean_utf8_and_genuine_replacement_characters_are_not_warned(tmp_path: Path) -> None:
    body = "<p>café \ufffd literally</p>"
    doc = ingest(make_epub(tmp_path / "clean.epub", [("A", body)]))
    assert doc.units[0].text == "café \ufffd literally"
    assert not [w for w in doc.warnings if "U+FFFD" in w]
