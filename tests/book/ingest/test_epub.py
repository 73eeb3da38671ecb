"""EPUB ingestion: NCX and nav contents, fragments, text rules, images, tolerance."""

from __future__ import annotations

import re
import warnings
import zipfile

from readingroom.book.ingest import ingest

from ..make_books import TINY_JPEG, make_epub, rewrite_entry

VENUS = "venus-and-adonis-epub2.epub"
ALICE = "alice-epub3-images.epub"


# --- the real books --------------------------------------------------------------------------


def test_venus_epub2_contents_come_from_the_ncx(samples):
    path = samples / "books" / VENUS
    with zipfile.ZipFile(path) as zf:
        ncx = zf.read("OPS/fb.ncx").decode()
    labels = re.findall(r"<navLabel>\s*<text>([^<]+)</text>", ncx)
    sources = re.findall(r'<content src="([^"]+)"', ncx)
    doc = ingest(path)
    assert doc.format == "epub"
    assert doc.metadata["epub_version"].startswith("2")
    assert doc.title and doc.authors and doc.language
    assert [e.title for e in doc.toc] == labels
    assert [doc.units[e.unit_index].href for e in doc.toc] == ["OPS/" + s for s in sources]
    assert all(e.level == 1 and e.char_offset == 0 for e in doc.toc)
    assert {u.kind for u in doc.units} == {"epub_chapter"}
    assert sum(len(u.text) for u in doc.units) > 50_000


def test_venus_keeps_every_spine_item_in_order(samples):
    path = samples / "books" / VENUS
    with zipfile.ZipFile(path) as zf:
        opf = zf.read("OPS/fb.opf").decode()
    spine = re.findall(r'<itemref idref="([^"]+)"', opf)
    doc = ingest(path)
    assert [u.label for u in doc.units] == spine
    assert [u.index for u in doc.units] == list(range(len(spine)))


def test_alice_epub3_contents_come_from_the_nav(samples):
    path = samples / "books" / ALICE
    with zipfile.ZipFile(path) as zf:
        nav = zf.read("OPS/toc.xhtml").decode()
    nav_titles = [" ".join(t.split()) for t in re.findall(r"<a[^>]*>([^<]+)</a>", nav)]
    doc = ingest(path)
    assert doc.metadata["epub_version"].startswith("3")
    assert [e.title for e in doc.toc] == nav_titles
    assert len({e.unit_index for e in doc.toc}) == len(doc.toc)
    for entry in doc.toc[1:]:
        assert doc.units[entry.unit_index].text.startswith(entry.title)


def test_alice_images_resolve_to_container_paths_that_exist(samples):
    path = samples / "books" / ALICE
    with zipfile.ZipFile(path) as zf:
        names = set(zf.namelist())
    jpegs = {n for n in names if n.endswith(".jpg")}
    doc = ingest(path)
    images = [img for unit in doc.units for img in unit.images]
    assert set(images) <= names
    assert set(images) <= jpegs
    assert len(set(images)) >= 25
    chapter = next(u for u in doc.units if len(u.images) >= 2)
    for image in chapter.images:
        assert f"]({image})" in chapter.markdown
    assert not [w for w in doc.warnings if "Image" in w]


def test_alice_anchors_are_offsets_into_the_text(samples):
    doc = ingest(samples / "books" / ALICE)
    for unit in doc.units:
        for _name, offset in unit.anchors:
            assert 0 <= offset <= len(unit.text)
    assert sum(len(u.anchors) for u in doc.units) > 20


# --- generated: contents ---------------------------------------------------------------------

_ONE_FILE = """
<h1 id="top">The Only File</h1>
<p>Opening words.</p>
<h2 id="s1">First Part</h2>
<p>Text of the first part.</p>
<h2 id="s2">Second Part</h2>
<p>Text of the second part.</p>
<h2 id="s3">Third Part</h2>
<p>Text of the third part.</p>
"""


def test_fragment_contents_give_several_entries_in_one_unit(tmp_path):
    nav = [
        (1, "The Only File", "chapter01.xhtml"),
        (2, "First Part", "chapter01.xhtml#s1"),
        (2, "Second Part", "chapter01.xhtml#s2"),
        (2, "Third Part", "chapter01.xhtml#s3"),
    ]
    doc = ingest(make_epub(tmp_path / "b.epub", [("One", _ONE_FILE)], nav=nav))
    assert len(doc.units) == 1
    assert [e.unit_index for e in doc.toc] == [0, 0, 0, 0]
    assert [e.fragment for e in doc.toc] == [None, "s1", "s2", "s3"]
    offsets = [e.char_offset for e in doc.toc]
    assert offsets == sorted(offsets) and len(set(offsets)) == 4
    text = doc.units[0].text
    for entry in doc.toc:
        assert text[entry.char_offset :].startswith(entry.title)
    assert dict(doc.units[0].anchors)["s2"] == text.index("Second Part")


def test_ncx_fragments_in_epub2(tmp_path):
    ncx = [(1, "First Part", "chapter01.xhtml#s1"), (1, "Third Part", "chapter01.xhtml#s3")]
    doc = ingest(make_epub(tmp_path / "b.epub", [("One", _ONE_FILE)], version=2, ncx=ncx))
    text = doc.units[0].text
    assert [text[e.char_offset :].split("\n")[0] for e in doc.toc] == ["First Part", "Third Part"]


def test_nested_nav_gives_levels(tmp_path):
    chapters = [(f"C{i}", f"<h1>Chapter {i}</h1><p>Body {i}.</p>") for i in range(1, 4)]
    nav = [
        (1, "Part", "chapter01.xhtml"),
        (2, "Chapter 2", "chapter02.xhtml"),
        (3, "Deep", "chapter03.xhtml"),
        (1, "Back", "chapter03.xhtml"),
    ]
    doc = ingest(make_epub(tmp_path / "b.epub", chapters, nav=nav))
    assert [(e.level, e.unit_index) for e in doc.toc] == [(1, 0), (2, 1), (3, 2), (1, 2)]


def test_nav_wins_over_a_conflicting_ncx(tmp_path):
    chapters = [("A", "<h1>Alpha</h1><p>a</p>"), ("B", "<h1>Beta</h1><p>b</p>")]
    nav = [(1, "Nav Alpha", "chapter01.xhtml"), (1, "Nav Beta", "chapter02.xhtml")]
    ncx = [(1, "NCX Beta only", "chapter02.xhtml")]
    doc = ingest(make_epub(tmp_path / "b.epub", chapters, nav=nav, ncx=ncx))
    assert [e.title for e in doc.toc] == ["Nav Alpha", "Nav Beta"]
    assert any("nav document was used" in w for w in doc.warnings)


def test_empty_nav_href_is_skipped_with_a_warning(tmp_path):
    chapters = [("A", "<h1>Alpha</h1><p>a</p>"), ("B", "<h1>Beta</h1><p>b</p>")]
    nav = [(1, "Alpha", "chapter01.xhtml"), (1, "Nowhere", ""), (1, "Beta", "chapter02.xhtml")]
    doc = ingest(make_epub(tmp_path / "b.epub", chapters, nav=nav))
    assert [e.title for e in doc.toc] == ["Alpha", "Beta"]
    assert any("Nowhere" in w and "empty link" in w for w in doc.warnings)


def test_percent_encoded_and_non_spine_hrefs(tmp_path):
    chapters = [("A", "<h1>Alpha</h1><p>a</p>"), ("B", "<h1 id='x y'>Beta</h1><p>b</p>")]
    nav = [
        (1, "Encoded", "chapter%301.xhtml"),
        (1, "Fragment", "chapter02.xhtml#x%20y"),
        (1, "Stylesheet", "style.css"),
        (1, "Gone", "missing.xhtml"),
        (1, "Web", "https://example.org/"),
    ]
    doc = ingest(make_epub(tmp_path / "b.epub", chapters, nav=nav, css="p { margin: 0 }"))
    assert [(e.title, e.unit_index) for e in doc.toc] == [("Encoded", 0), ("Fragment", 1)]
    assert doc.toc[1].fragment == "x y"
    assert any("outside the spine" in w for w in doc.warnings)
    assert any("missing file" in w for w in doc.warnings)
    assert any("outside the book" in w for w in doc.warnings)


def test_no_contents_falls_back_to_chapter_headings(tmp_path):
    chapters = [("A", "<h1>Alpha</h1><p>a</p>"), ("B", "<p>no heading</p>")]
    doc = ingest(make_epub(tmp_path / "b.epub", chapters, nav=False, ncx=False))
    assert [(e.title, e.unit_index) for e in doc.toc] == [("Alpha", 0)]
    assert any("no usable contents" in w for w in doc.warnings)


def test_empty_nav_falls_back_to_the_ncx(tmp_path):
    chapters = [("A", "<h1>Alpha</h1><p>a</p>")]
    doc = ingest(make_epub(tmp_path / "b.epub", chapters, nav=[], ncx=True))
    assert [e.title for e in doc.toc] == ["A"]
    assert any("NCX was used" in w for w in doc.warnings)


# --- generated: tolerance --------------------------------------------------------------------


def test_missing_manifest_file_is_skipped_not_fatal(tmp_path):
    chapters = [("A", "<p>alpha</p>"), ("B", "<p>beta</p>")]
    doc = ingest(make_epub(tmp_path / "b.epub", chapters, missing_chapters=["gone.xhtml"]))
    assert [u.text for u in doc.units] == ["alpha", "beta"]
    assert any("gone.xhtml" in w and "missing" in w for w in doc.warnings)


def test_spine_idref_without_manifest_item_is_skipped(tmp_path):
    path = make_epub(tmp_path / "b.epub", [("A", "<p>alpha</p>")])
    rewrite_entry(
        path,
        "OEBPS/content.opf",
        lambda t: t.replace("</spine>", '<itemref idref="nope"/></spine>'),
    )
    doc = ingest(path)
    assert [u.text for u in doc.units] == ["alpha"]
    assert any("'nope'" in w for w in doc.warnings)


def test_manifest_href_climbing_out_is_ignored(tmp_path):
    path = make_epub(tmp_path / "b.epub", [("A", "<p>alpha</p>")])
    rewrite_entry(
        path,
        "OEBPS/content.opf",
        lambda t: t.replace(
            "</manifest>",
            '<item id="esc" href="../../etc/passwd" media-type="application/xhtml+xml"/>'
            "</manifest>",
        ).replace("</spine>", '<itemref idref="esc"/></spine>'),
    )
    doc = ingest(path)
    assert [u.text for u in doc.units] == ["alpha"]
    assert any("outside the container" in w for w in doc.warnings)


def test_non_linear_items_are_kept_in_spine_order(tmp_path):
    chapters = [("A", "<p>one</p>"), ("N", "<p>note</p>"), ("B", "<p>two</p>")]
    doc = ingest(make_epub(tmp_path / "b.epub", chapters, linear=[True, False, True]))
    assert [u.text for u in doc.units] == ["one", "note", "two"]
    assert any("non-linear" in w for w in doc.warnings)


def test_malformed_xhtml_is_read_as_html(tmp_path):
    body = "<p>Broken <b>markup<p>still text</p>"
    doc = ingest(make_epub(tmp_path / "b.epub", [("A", body)]))
    assert "Broken markup" in doc.units[0].text
    assert "still text" in doc.units[0].text
    assert any("read as HTML" in w for w in doc.warnings)


def test_missing_image_and_unlisted_image_are_warned(tmp_path):
    body = '<p><img src="images/a.jpg" alt="A"/><img src="images/b.jpg" alt="B"/></p>'
    path = make_epub(
        tmp_path / "b.epub",
        [("A", body + "<p>text</p>")],
        extra_files={"OEBPS/images/b.jpg": TINY_JPEG},
    )
    doc = ingest(path)
    assert doc.units[0].images == ()
    assert any("not in the manifest" in w for w in doc.warnings)


# --- generated: text rules -------------------------------------------------------------------


def test_epub2_xhtml11_doctype_and_html_entities_are_read(tmp_path):
    body = "<p>caf&eacute;&nbsp;au&#160;lait &amp; more</p>"
    doc = ingest(make_epub(tmp_path / "b.epub", [("A", body)], version=2))
    assert doc.units[0].text == "café\xa0au\xa0lait & more"


def test_blocks_breaks_whitespace_scripts(tmp_path):
    body = (
        "<h1>Title</h1>\n<p>one\n   two</p><div>three<br/>four</div>"
        "<script>var x = 1;</script><style>p {}</style>"
        "<ul><li>item a</li><li>item <em>b</em></li></ul>"
        "<table><tr><td>c1</td><td>c2</td></tr></table>"
    )
    doc = ingest(make_epub(tmp_path / "b.epub", [("A", body)]))
    assert doc.units[0].text == "Title\none two\nthree\nfour\nitem a\nitem b\nc1 c2"


def test_ruby_keeps_base_text_only(tmp_path):
    body = (
        "<p><ruby>吾輩<rp>（</rp><rt>わがはい</rt><rp>）</rp></ruby>は猫である。"
        "<ruby><rb>名</rb><rt>な</rt><rb>前</rb><rt>まえ</rt></ruby>はまだ無い。</p>"
    )
    doc = ingest(make_epub(tmp_path / "b.epub", [("A", body)], language="ja"))
    assert doc.units[0].text == "吾輩は猫である。名前はまだ無い。"


def test_source_line_break_between_cjk_adds_no_space(tmp_path):
    body = "<p>吾輩は猫である。\n名前はまだ無い。 English\nwords</p>"
    doc = ingest(make_epub(tmp_path / "b.epub", [("A", body)], language="ja"))
    assert doc.units[0].text == "吾輩は猫である。名前はまだ無い。 English words"


def test_vertical_css_and_rtl_progression_are_reported(tmp_path):
    css = "html.vrtl { -epub-writing-mode: vertical-rl; writing-mode: vertical-rl; }"
    path = make_epub(
        tmp_path / "v.epub",
        [("一", "<p>縦書きの本文。</p>")],
        css=css,
        language="ja",
        page_progression="rtl",
    )
    rewrite_entry(
        path, "OEBPS/chapter01.xhtml", lambda t: t.replace("<html ", '<html class="vrtl" ')
    )
    doc = ingest(path)
    assert doc.units[0].writing_mode == "vertical"
    assert doc.metadata["page_progression_direction"] == "rtl"
    assert doc.language == "ja"
    assert doc.units[0].text == "縦書きの本文。"


def test_markdown_view_of_a_chapter(tmp_path):
    body = (
        "<h1>Heading</h1><p>Some <em>em</em> and <strong>strong</strong> text_with*stars.</p>"
        "<ul><li>one</li><li>two<ul><li>nested</li></ul></li></ul>"
        "<ol><li>first</li></ol><blockquote><p>quoted</p></blockquote>"
        '<p><img src="images/pic.jpg" alt="A picture"/></p><p>line<br/>break</p>'
    )
    doc = ingest(
        make_epub(tmp_path / "b.epub", [("A", body)], images={"images/pic.jpg": TINY_JPEG})
    )
    unit = doc.units[0]
    assert unit.images == ("OEBPS/images/pic.jpg",)
    assert unit.markdown.split("\n\n") == [
        "# Heading",
        "Some *em* and **strong** text\\_with\\*stars.",
        "- one\n- two\n  - nested",
        "1. first",
        "> quoted",
        "![A picture](OEBPS/images/pic.jpg)",
        "line\\\nbreak",
    ]


def test_svg_cover_image_is_resolved(tmp_path):
    body = (
        '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">'
        '<image xlink:href="images/cover.jpg" width="10" height="10"/></svg><p>Cover</p>'
    )
    doc = ingest(
        make_epub(tmp_path / "b.epub", [("A", body)], images={"images/cover.jpg": TINY_JPEG})
    )
    assert doc.units[0].images == ("OEBPS/images/cover.jpg",)


def test_progress_reports_every_spine_item(tmp_path):
    chapters = [(f"C{i}", f"<p>{i}</p>") for i in range(4)]
    calls: list[tuple[int, int]] = []
    ingest(make_epub(tmp_path / "b.epub", chapters), progress=lambda d, t: calls.append((d, t)))
    assert calls == [(1, 4), (2, 4), (3, 4), (4, 4)]


def test_font_obfuscation_is_not_drm(tmp_path):
    encryption = (
        '<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" '
        'xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData>'
        '<enc:EncryptionMethod Algorithm="http://www.idpf.org/2008/embedding"/>'
        '<enc:CipherData><enc:CipherReference URI="OEBPS/fonts/f.otf"/></enc:CipherData>'
        "</enc:EncryptedData></encryption>"
    )
    path = make_epub(
        tmp_path / "b.epub",
        [("A", "<p>text</p>")],
        extra_files={"META-INF/encryption.xml": encryption},
    )
    assert ingest(path).units[0].text == "text"


def test_declared_encodings_unknown_or_not_text_fall_back_to_utf8(tmp_path):
    path = make_epub(tmp_path / "b.epub", [("A", "<p>café</p>"), ("B", "<p>thé</p>")])
    rewrite_entry(path, "OEBPS/chapter01.xhtml", lambda t: t.replace("utf-8", "no-such-codec"))
    rewrite_entry(path, "OEBPS/chapter02.xhtml", lambda t: t.replace("utf-8", "base64"))
    doc = ingest(path)
    assert [u.text for u in doc.units] == ["café", "thé"]
    assert not [w for w in doc.warnings if "U+FFFD" in w]


def test_duplicate_directory_entries_are_harmless(tmp_path):
    path = make_epub(tmp_path / "b.epub", [("A", "<p>alpha</p>")])
    with warnings.catch_warnings(), zipfile.ZipFile(path, "a") as zf:
        warnings.simplefilter("ignore")  # zipfile warns "Duplicate name"
        zf.writestr(zipfile.ZipInfo("OEBPS/images/"), b"")
        zf.writestr(zipfile.ZipInfo("OEBPS/images/"), b"")
    assert ingest(path).units[0].text == "alpha"


def test_a_file_listed_by_two_manifest_items_is_read_once(tmp_path):
    path = make_epub(tmp_path / "b.epub", [("A", "<p>alpha</p>"), ("B", "<p>beta</p>")])
    rewrite_entry(
        path,
        "OEBPS/content.opf",
        lambda t: t.replace(
            "</manifest>",
            '<item id="again" href="chapter01.xhtml" media-type="application/xhtml+xml"/>'
            "</manifest>",
        ).replace("</spine>", '<itemref idref="again"/></spine>'),
    )
    doc = ingest(path)
    assert [u.text for u in doc.units] == ["alpha", "beta"]
    assert any("1 spine entry repeats a chapter" in w for w in doc.warnings)
