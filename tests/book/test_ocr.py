"""issue 21 §3: scanned pages read by optional local OCR (Tesseract through PyMuPDF).

The real scanned fixture page (huckfinn-scanned-page.pdf) becomes searchable text labelled as
OCR, and a quote of one of its lines verifies *against OCR*. The words checked are ones seen on
the rendered page image. Tests that run Tesseract skip with the reason when it is not
installed, and fail instead under READINGROOM_REQUIRE_SAMPLES=1 (``.ci/run`` installs it).
The fixture page is read once per module, at the default 300 dpi (at its scan's own 150 dpi
Tesseract misreads the last lines).
"""

from __future__ import annotations

import json
import os
import shutil

import pytest

from readingroom.book.ocr import (
    MAX_DPI,
    MAX_PIXELS,
    OcrOptions,
    find_engine,
    mean_confidence,
    page_dpi,
)
from readingroom.book.service import BookService
from readingroom.core.errors import Code, CoreError
from tests.forked import book_agent

from . import make_pdf_classes as make
from .conftest import fixture_books

# Starts real server or command processes: left out of the quick tier (tests/conftest.py).
pytestmark = pytest.mark.stdio

SEEN_ON_THE_PAGE = ["tip-toeing", "amongst", "widow", "garden", "branches", "kitchen",
                    "scrouched", "Watson", "stretched", "listening", "itching", "scratch",
                    "shoulders", "noticed", "funeral", "anywheres"]
"""Words read off the rendered page image (bench/ocr/huckfinn-scanned-page.txt)."""
LINE = "the branches wouldn't scrape our heads"


@pytest.fixture(scope="module")
def engine():
    try:
        return find_engine("eng")
    except CoreError as exc:
        reason = f"Tesseract with English data is not installed: {exc.message}"
        if os.environ.get("READINGROOM_REQUIRE_SAMPLES") == "1":
            pytest.fail(reason)
        pytest.skip(reason)


@pytest.fixture(scope="module")
def scanned(tmp_path_factory, engine):
    service = BookService(tmp_path_factory.mktemp("ocr") / "data")
    lines: list[str] = []
    env = service.init(fixture_books() / "huckfinn-scanned-page.pdf", book_id="huck",
                       ocr=OcrOptions(on_page=lines.append))
    return service, env, lines


def test_the_scanned_page_becomes_text_labelled_as_ocr(scanned):
    service, env, lines = scanned
    unit = service._load("huck").units[0]
    assert unit.text_source == "ocr" and unit.has_text_layer
    folded = unit.text.replace("’", "'").casefold()
    missing = [w for w in SEEN_ON_THE_PAGE if w.casefold() not in folded]
    assert len(missing) <= 2, missing
    label = unit.ocr
    assert label["engine"] == "tesseract" and label["language"] == "eng"
    assert label["dpi"] == 300 and label["words"] > 150
    assert label["mean_word_confidence"] is None or 50 < label["mean_word_confidence"] <= 100
    caps = env.data["capabilities"]
    assert caps["ocr_units"] == [0] and caps["no_text_layer_units"] == []
    assert any("read by OCR" in d.message for d in env.diagnostics)
    assert lines and lines[0].startswith("OCR page index 0: ") and "300 dpi" in lines[0]


def test_records_and_search_hits_say_their_text_is_ocr(scanned):
    service, _env, _lines = scanned
    record = service._load("huck").records[0]
    assert record.text_source == "ocr" and record.ocr["pages"] == [0]
    env = service.search("huck", "kitchen garden")
    hit = env.items[0]
    assert hit["text_source"] == "ocr" and hit["ocr"]["engine"] == "tesseract"
    assert not any("no text layer" in d.message for d in env.diagnostics)


def test_a_quote_of_a_line_on_the_page_verifies_against_ocr(scanned):
    service, _env, _lines = scanned
    env = service.locate("huck", text=LINE)
    data = env.data
    assert data["status"] == "verified"
    assert data["verified_against"].startswith("OCR of page index 0 (tesseract")
    assert any("machine-read" in d.message for d in env.diagnostics)
    locator = env.items[0]["locator"]
    assert locator["text_source"] == "ocr" and locator["ocr"]["pages"] == [0]
    read = service.read_source(locator)
    assert read.data["verified"] is True and "scrape our heads" in read.data["text"]
    # the label is part of what is verified: a locator that drops it is refused
    bare = {k: v for k, v in locator.items() if k not in ("checksum",)}
    bare["ocr"] = {**locator["ocr"], "mean_word_confidence": 99.9}
    with pytest.raises(CoreError) as caught:
        service.read_source({**bare, "checksum": locator["checksum"]})
    assert caught.value.code == Code.INVALID_LOCATOR


def test_a_page_past_its_deadline_stays_image_only_and_the_book_is_built(tmp_path, engine):
    service = BookService(tmp_path / "data")
    env = service.init(make.image_pages_pdf(tmp_path / "img.pdf"), book_id="img",
                       ocr=OcrOptions(page_timeout=0.05))
    units = service._load("img").units
    assert [u.text_source for u in units] == ["file"] * 4
    assert [u.ocr["status"] for u in units[1:3]] == ["failed", "failed"]
    assert "did not finish within 0.05 s" in units[1].ocr["reason"]
    assert any("OCR could not read 2 pages" in d.message for d in env.diagnostics)
    assert env.data["capabilities"]["no_text_layer_units"] == [1, 2]


def test_ocr_all_reads_pages_that_have_a_text_layer_too(tmp_path, engine):
    service = BookService(tmp_path / "data")
    service.init(make.note_markers_pdf(tmp_path / "notes.pdf"), book_id="notes",
                 ocr=OcrOptions(mode="all", dpi=150))
    unit = service._load("notes").units[0]
    assert unit.text_source == "ocr" and unit.ocr["replaced_text_layer"] is True
    assert "population" in unit.text and "census" in unit.text


def test_the_command_line_reports_ocr_per_page_on_stderr(tmp_path, engine):
    pdf = make.image_pages_pdf(tmp_path / "img.pdf")
    done = book_agent(["--data-dir", tmp_path / "data", "init", pdf, "--ocr", "--ocr-lang", "eng"],
                      encoding="utf-8", timeout=300)
    assert done.returncode == 0, done.stderr
    assert "book-agent: OCR page index 1: " in done.stderr
    assert "book-agent: OCR page index 2: " in done.stderr
    assert "OCR page index 0" not in done.stderr  # a page with a text layer is not OCR'd
    assert "OCR" not in done.stdout.split("warnings")[0]


def test_add_with_ocr_reads_the_scanned_pages_of_a_folder(tmp_path, engine):
    """``add --ocr`` (issue 21 §3): the folder's scanned PDF, refused as image-only by a plain
    ``add``, is read by OCR on the next ``add --ocr`` (the refusal is not remembered past it)."""
    folder = tmp_path / "books"
    folder.mkdir()
    shutil.copy(fixture_books() / "huckfinn-scanned-page.pdf", folder / "scan.pdf")
    data = tmp_path / "data"

    def add(*more: str) -> tuple[int, dict]:
        done = book_agent(["--data-dir", data, "--json", "add", folder, "--jobs", "1", *more],
                          encoding="utf-8", timeout=300)
        return done.returncode, json.loads(done.stdout)

    code, env = add()
    assert code == 3 and env["data"]["counts"]["refused"] == 1, env["data"]
    assert env["data"]["refused"][0]["reason"].startswith("image-only")
    code, env = add("--ocr")
    assert code == 0 and env["data"]["counts"]["added"] == 1, env["data"]
    loaded = BookService(data)._load(env["items"][0]["book_id"])
    assert [u.index for u in loaded.units if u.text_source == "ocr"] == [0]
    assert "branches" in loaded.units[0].text and "Watson" in loaded.units[0].text


# --- without Tesseract: a clear message, nothing built ------------------------------------------


def test_without_tesseract_init_names_what_to_install_and_builds_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.delenv("TESSDATA_PREFIX", raising=False)
    data = tmp_path / "data"
    service = BookService(data)
    with pytest.raises(CoreError) as caught:
        service.init(make.image_pages_pdf(tmp_path / "img.pdf"), book_id="img",
                     ocr=OcrOptions())
    err = caught.value
    assert err.code == Code.CAPABILITY_UNAVAILABLE
    assert "tesseract-ocr" in err.remediation and "Tesseract-OCR" in err.remediation
    assert service.registry.list_ids() == []
    assert not data.exists() or not any(p.is_file() for p in data.rglob("*"))


def test_missing_language_data_names_its_package(tmp_path):
    (tmp_path / "eng.traineddata").write_bytes(b"")
    with pytest.raises(CoreError) as caught:
        find_engine("jpn+eng", environ={"TESSDATA_PREFIX": str(tmp_path)},
                    which=lambda _name: None)
    assert caught.value.code == Code.CAPABILITY_UNAVAILABLE
    assert "tesseract-ocr-jpn" in caught.value.remediation
    assert caught.value.details["missing"] == ["jpn"]


def test_tessdata_prefix_alone_is_enough_and_confidence_is_then_unknown(tmp_path):
    (tmp_path / "eng.traineddata").write_bytes(b"")
    found = find_engine("eng", environ={"TESSDATA_PREFIX": str(tmp_path)},
                        which=lambda _name: None)
    assert found.tessdata == str(tmp_path) and found.program is None
    assert found.languages == ("eng",)


def test_a_malformed_language_is_refused():
    with pytest.raises(CoreError) as caught:
        find_engine("eng; rm -rf /", environ={}, which=lambda _name: None)
    assert caught.value.code == Code.INVALID_ARGUMENT


def test_the_resolution_is_capped():
    assert page_dpi(595, 842, 1200) == MAX_DPI
    big = page_dpi(72 * 40, 72 * 40, 300)  # a 40-inch page
    assert big < 300 and (40 * big) ** 2 <= MAX_PIXELS
    assert page_dpi(595, 842, 150) == 150


def test_mean_word_confidence_from_tesseract_tsv():
    # Hand-made TSV in Tesseract's column layout (level 5 rows are words; -1: no word).
    head = ("level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\t"
            "height\tconf\ttext")
    rows = ["1\t1\t0\t0\t0\t0\t0\t0\t800\t900\t-1\t", "5\t1\t1\t1\t1\t1\t10\t10\t40\t12\t90\tWe",
            "5\t1\t1\t1\t1\t2\t60\t10\t40\t12\t70\twent", "5\t1\t1\t1\t1\t3\t60\t10\t4\t12\t95\t "]
    assert mean_confidence("\n".join([head, *rows])) == (80.0, 2)
    assert mean_confidence(head) == (None, 0)
