"""Refusals: every error has its code, a one-line message and a remediation."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from readingroom.book.ingest import detect_format, ingest
from readingroom.core.errors import Code, CoreError

from ..make_books import (
    TINY_JPEG,
    make_encrypted_pdf,
    make_epub,
    make_image_only_pdf,
    make_pdf,
    make_zip_bomb,
    rewrite_entry,
)


def _refused(path: Path, code: Code, **kwargs) -> CoreError:
    with pytest.raises(CoreError) as caught:
        ingest(path, **kwargs)
    error = caught.value
    assert error.code is code, error.message
    assert error.message and "\n" not in error.message
    assert error.remediation and "\n" not in error.remediation
    return error


# --- format detection ------------------------------------------------------------------------


def test_detect_format_by_content_not_name(tmp_path):
    pdf = make_pdf(tmp_path / "book.bin", ["text"])
    epub = make_epub(tmp_path / "book.zip", [("A", "<p>a</p>")])
    md = tmp_path / "book.md"
    md.write_text("# Title\n", "utf-8")
    assert detect_format(pdf) == "pdf"
    assert detect_format(epub) == "epub"
    assert detect_format(md) == "markdown"


def test_epub_without_mimetype_is_known_by_its_container(tmp_path):
    path = make_epub(tmp_path / "b.epub", [("A", "<p>a</p>")], mimetype=False)
    assert detect_format(path) == "epub"
    assert ingest(path).units[0].text == "a"


def test_docx_is_unsupported(tmp_path):
    path = tmp_path / "letter.docx"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("[Content_Types].xml", "<Types/>")
        zf.writestr("word/document.xml", "<document/>")
    _refused(path, Code.UNSUPPORTED_FORMAT)


def test_png_is_unsupported(tmp_path):
    path = tmp_path / "page.png"
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 64)
    error = _refused(path, Code.UNSUPPORTED_FORMAT)
    assert "PDF, EPUB or Markdown" in error.remediation


def test_txt_is_unsupported(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("plain text", "utf-8")
    _refused(path, Code.UNSUPPORTED_FORMAT)


def test_missing_file_is_not_found(tmp_path):
    _refused(tmp_path / "nothing.pdf", Code.NOT_FOUND)


# --- PDF -------------------------------------------------------------------------------------


def test_garbage_with_pdf_header_is_corrupt(tmp_path):
    path = tmp_path / "bad.pdf"
    path.write_bytes(b"%PDF-1.7\n" + b"this is not a pdf body\n" * 20)
    _refused(path, Code.CORRUPT_SOURCE)


def test_truncated_pdf_is_corrupt(tmp_path, samples):
    data = (samples / "books" / "geotopo-textbook-outline.pdf").read_bytes()
    path = tmp_path / "cut.pdf"
    path.write_bytes(data[:50_000])
    _refused(path, Code.CORRUPT_SOURCE)


def test_pdf_named_file_without_header_is_corrupt(tmp_path):
    path = tmp_path / "fake.pdf"
    path.write_bytes(b"hello")
    _refused(path, Code.CORRUPT_SOURCE)


def test_encrypted_pdf(tmp_path):
    error = _refused(make_encrypted_pdf(tmp_path / "locked.pdf"), Code.ENCRYPTED_SOURCE)
    assert "password" in error.message


def test_image_only_pdf(tmp_path):
    path = make_image_only_pdf(tmp_path / "scan.pdf", pages=3)
    error = _refused(path, Code.EMPTY_SOURCE)
    assert "image-only" in error.message
    assert "ocrmypdf" in error.remediation and "--allow-image-only" in error.remediation
    doc = ingest(path, allow_image_only=True)
    assert [u.has_text_layer for u in doc.units] == [False, False, False]


# --- EPUB ------------------------------------------------------------------------------------


def test_zip_bomb_is_unsafe(tmp_path):
    error = _refused(make_zip_bomb(tmp_path / "bomb.epub"), Code.UNSAFE_SOURCE)
    assert error.details["reason"] == "ratio"


def test_too_many_entries_is_unsafe(tmp_path):
    extra = {f"OEBPS/filler/{n}.txt": "" for n in range(10_001)}
    path = make_epub(tmp_path / "many.epub", [("A", "<p>a</p>")], extra_files=extra)
    error = _refused(path, Code.UNSAFE_SOURCE)
    assert error.details["reason"] == "entries"


@pytest.mark.parametrize("name", ["../evil.xhtml", "OEBPS/../../evil", "/etc/passwd", "C:/x"])
def test_entry_leaving_the_container_is_unsafe(tmp_path, name):
    path = make_epub(tmp_path / "b.epub", [("A", "<p>a</p>")], extra_files={name: "x"})
    error = _refused(path, Code.UNSAFE_SOURCE)
    assert error.details["reason"] == "path"


def test_internal_subset_doctype_is_unsafe(tmp_path):
    doctype = '<!DOCTYPE html [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>'
    path = make_epub(tmp_path / "xxe.epub", [("A", "<p>&xxe;</p>")], doctype=doctype)
    error = _refused(path, Code.UNSAFE_SOURCE)
    assert error.details["reason"] == "doctype"


def test_billion_laughs_in_the_package_is_unsafe(tmp_path):
    path = make_epub(tmp_path / "lol.epub", [("A", "<p>a</p>")])
    bomb = '<!DOCTYPE package [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;">]>\n'
    rewrite_entry(path, "OEBPS/content.opf", lambda t: t.replace("<package", bomb + "<package"))
    _refused(path, Code.UNSAFE_SOURCE)


def test_drm_encrypted_epub(tmp_path):
    encryption = (
        '<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" '
        'xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData>'
        '<enc:EncryptionMethod Algorithm="http://www.w3.org/2001/04/xmlenc#aes128-cbc"/>'
        '<enc:CipherData><enc:CipherReference URI="OEBPS/chapter01.xhtml"/></enc:CipherData>'
        "</enc:EncryptedData></encryption>"
    )
    path = make_epub(
        tmp_path / "drm.epub",
        [("A", "<p>a</p>")],
        extra_files={"META-INF/encryption.xml": encryption},
    )
    _refused(path, Code.ENCRYPTED_SOURCE)


def test_truncated_epub_is_corrupt(tmp_path):
    good = make_epub(tmp_path / "good.epub", [("A", "<p>" + "text " * 2000 + "</p>")])
    path = tmp_path / "cut.epub"
    path.write_bytes(good.read_bytes()[:400])
    _refused(path, Code.CORRUPT_SOURCE)


def test_epub_without_package_document_is_corrupt(tmp_path):
    path = tmp_path / "empty.epub"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("mimetype", "application/epub+zip")
        zf.writestr("OEBPS/chapter.xhtml", "<html/>")
    _refused(path, Code.CORRUPT_SOURCE)


def test_malformed_package_document_is_corrupt(tmp_path):
    path = make_epub(tmp_path / "b.epub", [("A", "<p>a</p>")])
    rewrite_entry(path, "OEBPS/content.opf", lambda t: t.replace("</package>", ""))
    _refused(path, Code.CORRUPT_SOURCE)


def test_epub_without_text_is_empty(tmp_path):
    body = '<p><img src="images/a.jpg" alt=""/></p>'
    path = make_epub(tmp_path / "b.epub", [("A", body)], images={"images/a.jpg": TINY_JPEG})
    _refused(path, Code.EMPTY_SOURCE)


# --- Markdown --------------------------------------------------------------------------------


def test_empty_markdown(tmp_path):
    path = tmp_path / "empty.md"
    path.write_text("\n  \n\n", "utf-8")
    _refused(path, Code.EMPTY_SOURCE)


def test_front_matter_only_markdown_is_empty(tmp_path):
    path = tmp_path / "meta.md"
    path.write_text("---\ntitle: Nothing else\n---\n\n", "utf-8")
    _refused(path, Code.EMPTY_SOURCE)


def test_undecodable_markdown_is_corrupt(tmp_path):
    path = tmp_path / "latin1.md"
    path.write_bytes("# Überschrift\n\nGrüße\n".encode("latin-1"))
    _refused(path, Code.CORRUPT_SOURCE)
