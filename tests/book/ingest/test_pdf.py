"""PDF ingestion: pages, labels, outline offsets, reading order, vertical Japanese, speed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from readingroom.book.ingest import ingest
from readingroom.book.text import is_cjk, normalise
from readingroom.core.errors import Code, CoreError

from ..ingested import ingested
from ..make_books import make_image_only_pdf, make_japanese_pdf, make_pdf, make_two_column_pdf

TEXTBOOK = "geotopo-textbook-outline.pdf"
SCAN = "huckfinn-scanned-page.pdf"

SOSEKI = [
    "吾輩は猫である。名前はまだ無い。どこで生れたかとんと見当がつかぬ。"
    "何でも薄暗いじめじめした所でニャーニャー泣いていた事だけは記憶している。",
    "吾輩はここで始めて人間というものを見た。しかもあとで聞くとそれは書生という"
    "人間中で一番獰悪な種族であったそうだ。",
    "この書生というのは時々我々を捕えて煮て食うという話である。",
]


def _book(samples: Path, name: str) -> Path:
    return samples / "books" / name


# --- the real textbook -----------------------------------------------------------------------


@pytest.fixture
def textbook(samples: Path):
    """The textbook, read once per test run (the samples fixture skips without it)."""
    return ingested(_book(samples, TEXTBOOK))


def test_textbook_has_one_unit_per_page_with_labels_apart_from_indices(textbook):
    assert textbook.format == "pdf"
    assert len(textbook.units) == 117
    assert [u.index for u in textbook.units] == list(range(117))
    assert {u.kind for u in textbook.units} == {"pdf_page"}
    assert textbook.units[0].label == "i"
    assert textbook.units[5].label == "3"
    assert all(u.has_text_layer for u in textbook.units[:10])


def test_textbook_metadata_comes_from_the_pdf(textbook):
    assert textbook.title
    assert textbook.authors
    assert textbook.metadata["page_count"] == "117"


def test_textbook_outline_has_three_levels_mapped_to_pages(textbook):
    toc = textbook.toc
    assert len(toc) >= 30
    assert {e.level for e in toc} == {1, 2, 3}
    assert all(0 <= e.unit_index < len(textbook.units) for e in toc)
    positions = [(e.unit_index, e.char_offset) for e in toc]
    assert positions == sorted(positions), "outline order is reading order"


def test_textbook_outline_offsets_point_at_the_headings(textbook):
    found = 0
    for entry in textbook.toc:
        text = textbook.units[entry.unit_index].text
        if normalise(text[entry.char_offset :]).startswith(normalise(entry.title)):
            found += 1
        else:
            assert entry.char_offset == 0
    assert found >= 0.8 * len(textbook.toc)
    assert any(e.char_offset > 0 for e in textbook.toc)


def test_textbook_keeps_ligatures_in_raw_text_and_is_not_reordered(textbook):
    raw = "".join(u.text for u in textbook.units)
    assert any(lig in raw for lig in "ﬁﬂﬀ")
    assert not any("re-read by columns" in w for w in textbook.warnings)
    assert "\x00" not in raw


def test_progress_reports_every_page(samples):
    calls: list[tuple[int, int]] = []
    ingest(_book(samples, TEXTBOOK), progress=lambda done, total: calls.append((done, total)))
    assert calls[0] == (1, 117)
    assert calls[-1] == (117, 117)
    assert len(calls) == 117


# --- the real scan ---------------------------------------------------------------------------


def test_scanned_page_is_refused_without_allow_image_only(samples):
    with pytest.raises(CoreError) as caught:
        ingest(_book(samples, SCAN))
    assert caught.value.code is Code.EMPTY_SOURCE
    assert "\n" not in caught.value.message
    assert "ocrmypdf" in caught.value.remediation
    assert "--allow-image-only" in caught.value.remediation


def test_scanned_page_registers_for_rendering_with_allow_image_only(samples):
    doc = ingest(_book(samples, SCAN), allow_image_only=True)
    assert len(doc.units) == 1
    assert doc.units[0].has_text_layer is False
    assert doc.units[0].text == ""
    assert doc.warnings


# --- generated PDFs --------------------------------------------------------------------------


def test_outline_and_labels_of_a_generated_pdf(tmp_path):
    pages = [
        "Preface\nWhy this book exists.",
        "Chapter One\nThe first chapter begins here.\nA Section\nMore text.",
        "Chapter Two\nThe second chapter.",
    ]
    path = make_pdf(
        tmp_path / "b.pdf",
        pages,
        outline=[
            (1, "Preface", 1),
            (1, "Chapter One", 2),
            (2, "A Section", 2),
            (1, "Chapter Two", 3),
        ],
        labels=[
            {"startpage": 0, "prefix": "", "style": "r", "firstpagenum": 1},
            {"startpage": 1, "prefix": "", "style": "D", "firstpagenum": 1},
        ],
        metadata={"title": "Generated", "author": "Ann Author"},
    )
    doc = ingest(path)
    assert [u.label for u in doc.units] == ["i", "1", "2"]
    assert doc.title == "Generated"
    assert doc.authors == ("Ann Author",)
    assert [(e.title, e.level, e.unit_index) for e in doc.toc] == [
        ("Preface", 1, 0),
        ("Chapter One", 1, 1),
        ("A Section", 2, 1),
        ("Chapter Two", 1, 2),
    ]
    section = doc.toc[2]
    assert section.char_offset > 0
    assert doc.units[1].text[section.char_offset :].startswith("A Section")


def test_pdf_without_labels_has_no_labels(tmp_path):
    doc = ingest(make_pdf(tmp_path / "b.pdf", ["one", "two"]))
    assert [u.label for u in doc.units] == [None, None]
    assert doc.toc == ()


def test_repeated_heading_resolves_to_the_outline_destination(tmp_path):
    # A running head repeats the section title above the heading itself.
    page = "Methods\nAn opening paragraph that is not the section.\nMethods\nThe methods section."
    doc = ingest(make_pdf(tmp_path / "b.pdf", [page], outline=[(1, "Methods", 1)]))
    entry = doc.toc[0]
    assert entry.char_offset == doc.units[0].text.rindex("Methods")


def test_two_columns_read_column_by_column(tmp_path):
    left = [f"Left paragraph {i} " + "alpha " * 30 for i in range(3)]
    right = [f"Right paragraph {i} " + "omega " * 30 for i in range(3)]
    doc = ingest(make_two_column_pdf(tmp_path / "c.pdf", left, right, title="A Paper Title"))
    text = doc.units[0].text
    marks = ["A Paper Title"] + [f"Left paragraph {i}" for i in range(3)]
    marks += [f"Right paragraph {i}" for i in range(3)]
    positions = [text.index(m) for m in marks]
    assert positions == sorted(positions)


def test_implausible_stream_order_is_reread_by_columns(tmp_path):
    left = [f"Left paragraph {i} " + "alpha " * 30 for i in range(4)]
    right = [f"Right paragraph {i} " + "omega " * 30 for i in range(4)]
    path = make_two_column_pdf(tmp_path / "c.pdf", left, right, order="reversed")
    doc = ingest(path)
    text = doc.units[0].text
    marks = [f"Left paragraph {i}" for i in range(4)] + [f"Right paragraph {i}" for i in range(4)]
    positions = [text.index(m) for m in marks]
    assert positions == sorted(positions)
    assert any("re-read by columns" in w for w in doc.warnings)


def _unbroken(paragraph: str, text: str) -> None:
    assert paragraph in text, f"paragraph not found unbroken in {text!r}"


def test_japanese_horizontal_lines_join_into_paragraphs(tmp_path):
    doc = ingest(make_japanese_pdf(tmp_path / "h.pdf", SOSEKI, vertical=False, title="第一章"))
    unit = doc.units[0]
    assert unit.writing_mode == "horizontal"
    for paragraph in SOSEKI:
        _unbroken(paragraph, unit.text)
    # Paragraphs stay apart, in order.
    assert unit.text.index(SOSEKI[0]) < unit.text.index(SOSEKI[1]) < unit.text.index(SOSEKI[2])
    assert SOSEKI[0] + SOSEKI[1] not in unit.text


@pytest.mark.parametrize("method", ["cmap", "glyphs"])
def test_japanese_vertical_columns_join_right_to_left(tmp_path, method):
    import pymupdf

    path = make_japanese_pdf(
        tmp_path / "v.pdf", SOSEKI, vertical=True, method=method, title="第一章"
    )
    with pymupdf.open(path) as pdf:
        plain = pdf[0].get_text()
        lines = [ln for b in pdf[0].get_text("dict")["blocks"] for ln in b["lines"]]
    # What a naive extractor sees: one glyph per line.
    assert max(len(line) for line in plain.splitlines()) <= 3
    if method == "cmap":
        assert all(ln["wmode"] == 1 and ln["dir"] == (0.0, 1.0) for ln in lines)
    doc = ingest(path)
    unit = doc.units[0]
    assert unit.writing_mode == "vertical"
    assert any("vertical" in w for w in doc.warnings)
    assert unit.text.startswith("第一章\n")
    for paragraph in SOSEKI:
        _unbroken(paragraph, unit.text)
    assert unit.text.index(SOSEKI[0]) < unit.text.index(SOSEKI[1]) < unit.text.index(SOSEKI[2])
    assert SOSEKI[0] + SOSEKI[1] not in unit.text


@pytest.mark.parametrize("vertical", [False, True])
def test_ruby_readings_are_left_out_of_the_raw_text(tmp_path, vertical):
    path = make_japanese_pdf(
        tmp_path / "r.pdf", SOSEKI, vertical=vertical, ruby={"吾輩": "わがはい", "獰悪": "どうあく"}
    )
    doc = ingest(path)
    text = doc.units[0].text
    for paragraph in SOSEKI:
        _unbroken(paragraph, text)
    assert "わがはい" not in text and "どうあく" not in text
    assert any("ruby" in w for w in doc.warnings)


def test_vertical_text_flows_over_pages(tmp_path):
    long = [SOSEKI[0] * 3, SOSEKI[1] * 2]
    doc = ingest(make_japanese_pdf(tmp_path / "v.pdf", long, vertical=True, lines_per_page=8))
    assert len(doc.units) > 1
    assert all(u.writing_mode == "vertical" for u in doc.units if u.text)
    joined = "".join(u.text for u in doc.units)
    assert "".join(long) == "".join(ch for ch in joined if is_cjk(ch) or ch in "。、ー")


def test_mixed_scan_pages_are_flagged_not_refused(tmp_path):
    import pymupdf

    text_pdf = make_pdf(tmp_path / "t.pdf", ["Some real text on a page."])
    scan_pdf = make_image_only_pdf(tmp_path / "s.pdf", pages=2)
    with pymupdf.open(text_pdf) as merged, pymupdf.open(scan_pdf) as scans:
        merged.insert_pdf(scans)
        merged.save(tmp_path / "mixed.pdf")
    doc = ingest(tmp_path / "mixed.pdf")
    assert [u.has_text_layer for u in doc.units] == [True, False, False]
    assert any("no text layer" in w for w in doc.warnings)


def test_damaged_pdf_prints_nothing_on_stdout(tmp_path):
    good = make_pdf(tmp_path / "g.pdf", ["page one", "page two"])
    data = good.read_bytes()
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(data[: len(data) // 2] + b"garbage" + data[len(data) // 2 + 40 :])
    script = (
        "import sys\n"
        "from readingroom.book.ingest import ingest\n"
        "from readingroom.core.errors import CoreError\n"
        "try:\n"
        f"    ingest({str(broken)!r})\n"
        "except CoreError:\n"
        "    pass\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    assert result.stdout == ""


def test_upright_digits_in_a_vertical_column_stay_in_place(tmp_path):
    import pymupdf

    doc = pymupdf.open()
    page = doc.new_page(width=420, height=595)
    page.insert_font(fontname="japan", wmode=1)
    x = 360.0
    for column in ("吾輩は猫である。名前はまだ無い。", "これは第"):
        page.insert_text((x, 60), column, fontname="japan", fontsize=14)
        x -= 22
    # "12" set upright (tate-chu-yoko) in the cell after 第, then "章です。" below it.
    page.insert_text((x + 22 - 5, 60 + 5 * 14 + 9), "12", fontname="helv", fontsize=9)
    page.insert_text((x + 22, 60 + 5 * 14), "章です。", fontname="japan", fontsize=14)
    doc.save(tmp_path / "t.pdf")
    unit = ingest(tmp_path / "t.pdf").units[0]
    assert unit.writing_mode == "vertical"
    assert "これは第12章です。" in unit.text
