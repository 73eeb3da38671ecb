"""Markdown ingestion: one unit per heading section, lines as written, front matter."""

from __future__ import annotations

from pathlib import Path

from readingroom.book.ingest import ingest


def _write(tmp_path: Path, text: str, name: str = "book.md", *, bom: bool = False) -> Path:
    path = tmp_path / name
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8"))
    return path


BOOK = """\
Preface text before any heading.

# Part One

Opening of part one.

## Chapter 1 ##

Body of chapter one.

```
# a comment in code, not a heading
```

Setext Chapter
==============

Body two.

Second Level
------------

Body three.
"""


def test_one_unit_per_heading_section_of_any_level(tmp_path):
    doc = ingest(_write(tmp_path, BOOK))
    assert doc.format == "markdown"
    assert [(e.title, e.level, e.unit_index) for e in doc.toc] == [
        ("Part One", 1, 1),
        ("Chapter 1", 2, 2),
        ("Setext Chapter", 1, 3),
        ("Second Level", 2, 4),
    ]
    assert all(e.char_offset == 0 for e in doc.toc)
    assert [u.kind for u in doc.units] == ["markdown_section"] * 5
    assert doc.units[0].text == "Preface text before any heading."
    assert doc.title == "Part One"


def test_units_are_the_lines_as_written_with_line_numbers(tmp_path):
    path = _write(tmp_path, BOOK)
    lines = path.read_text("utf-8").split("\n")
    doc = ingest(path)
    for unit in doc.units:
        assert unit.markdown == unit.text
        assert unit.href == "book.md"
        assert unit.text == "\n".join(lines[unit.line_start - 1 : unit.line_end])
    chapter = doc.units[2]
    assert chapter.text.startswith("## Chapter 1 ##")
    assert "# a comment in code" in chapter.text
    starts = [u.line_start for u in doc.units]
    assert starts == sorted(starts)
    assert all(a.line_end < b.line_start for a, b in zip(doc.units, doc.units[1:], strict=False))


def test_front_matter_gives_metadata_and_no_text(tmp_path):
    text = (
        '---\ntitle: "A Front Matter Title"\nauthors:\n  - Ann\n  - Bob\nlang: ja\n---\n'
        "# Heading\n\nText.\n"
    )
    doc = ingest(_write(tmp_path, text, bom=True))
    assert doc.title == "A Front Matter Title"
    assert doc.authors == ("Ann", "Bob")
    assert doc.language == "ja"
    assert len(doc.units) == 1
    assert doc.units[0].line_start == 8
    assert doc.units[0].text == "# Heading\n\nText."


def test_crlf_and_bom_do_not_leak_into_text(tmp_path):
    doc = ingest(_write(tmp_path, "# Title\r\n\r\nLine one\r\nLine two\r\n", bom=True))
    assert doc.units[0].text == "# Title\n\nLine one\nLine two"
    assert doc.units[0].line_start == 1 and doc.units[0].line_end == 4


def test_file_without_headings_is_one_unit(tmp_path):
    doc = ingest(_write(tmp_path, "Just some text.\nOn two lines.\n", name="notes.markdown"))
    assert len(doc.units) == 1
    assert doc.toc == ()
    assert doc.units[0].line_end == 2


def test_thematic_break_and_list_are_not_setext_headings(tmp_path):
    doc = ingest(_write(tmp_path, "# A\n\ntext\n\n---\n\n- item\n---\n\nend\n"))
    assert [e.title for e in doc.toc] == ["A"]


def test_heading_markup_is_stripped_from_titles(tmp_path):
    doc = ingest(_write(tmp_path, "# The *Great* [Book](x.html)\n\ntext\n"))
    assert doc.toc[0].title == "The Great Book"


def test_cjk_headings(tmp_path):
    doc = ingest(
        _write(tmp_path, "# 第一章　猫\n\n吾輩は猫である。\n\n## 第二節\n\n名前はまだ無い。\n")
    )
    assert [e.title for e in doc.toc] == ["第一章　猫", "第二節"]
    assert doc.units[1].text.endswith("名前はまだ無い。")


def test_progress_reports_every_section(tmp_path):
    calls: list[tuple[int, int]] = []
    ingest(_write(tmp_path, BOOK), progress=lambda d, t: calls.append((d, t)))
    assert calls == [(i, 5) for i in range(1, 6)]
