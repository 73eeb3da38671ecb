"""``add --zotero``: a library built from Zotero's own schema, read while Zotero holds it.

One library per module (an upgraded database: ids differ from a fresh one), with real
fixture books as stored and linked attachments, a missing file, notes, a web link, an HTML
snapshot, a trashed item, a non-ASCII title, collections, tags and a group library.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from readingroom.book.library.batch import run_add
from readingroom.book.library.sources import SourceSpec
from readingroom.book.library.zotero import read_zotero
from readingroom.book.service import BookService

from ..conftest import fixture_books
from .zotero_builder import ZoteroLibrary

# Starts real server or command processes: left out of the quick tier (tests/conftest.py).
pytestmark = pytest.mark.stdio

TITLE_A = "Über die Quellen: «Ἱστορίαι» und Topologie"


def build(root: Path) -> dict:
    books = fixture_books()
    z = ZoteroLibrary(root / "Zotero", upgraded=True)
    thesis = z.collection("Thesis")
    chapter = z.collection("Chapter 1", parent=thesis)
    a = z.item("book", {"title": TITLE_A, "date": "2019-00-00 2019", "publisher": "Springer",
                        "place": "Berlin", "ISBN": "978-3-16-148410-0", "language": "de",
                        "url": "https://example.org/quellen", "abstractNote": "An abstract.",
                        "edition": "2"},
               creators=[("Martin", "Thoma", "author"), ("Ada", "Lovelace", "author"),
                         ("", "World Health Organization", "editor")],
               tags=["Topologie", "reading"])
    z.file_into(chapter, a)
    z.attach(a, file=books / "venus-and-adonis-epub2.epub", content_type="application/epub+zip")
    z.attach(a, link_mode=3, content_type="text/html", path=None, title="Publisher page")
    z.note(a, "Remember chapter two")
    b = z.item("thesis", {"title": "A Thesis on Numbered Pages", "university": "ETH Zürich",
                          "date": "2020-05-00 May 2020", "DOI": "10.1234/thesis.5"},
               creators=[("Grace", "Hopper", "author")], tags=["reading"])
    z.attach(b, file=books / "latex-4-pages-numbered.pdf")
    outside = root / "elsewhere"
    outside.mkdir()
    shutil.copyfile(books / "georgia-cfi.epub", outside / "georgia.epub")
    c = z.item("journalArticle", {"title": "Linked Article", "publicationTitle": "Journal X",
                                  "date": "2018-03-14 2018-03-14"},
               creators=[("Alan", "Turing", "author")])
    z.attach(c, link_mode=2, content_type="application/epub+zip",
             path=str(outside / "georgia.epub"))
    z.attach(c, link_mode=1, content_type="text/html", name="snapshot.html",
             file=None)
    base = root / "base"
    (base / "Sub").mkdir(parents=True)
    shutil.copyfile(books / "alice-epub3-images.epub", base / "Sub" / "alice.epub")
    d = z.item("book", {"title": "Relative Linked Book", "date": "1865-00-00 1865"},
               creators=[("Lewis", "Carroll", "author")])
    z.attach(d, link_mode=2, content_type="application/epub+zip",
             path="attachments:Sub/alice.epub")
    e = z.item("book", {"title": "Never Synced"})
    z.attach(e, name="gone.pdf")  # a stored attachment whose file is not there
    f = z.item("book", {"title": "In The Trash"})
    z.attach(f, file=books / "latex-4-pages-numbered.pdf", name="trash.pdf")
    z.trash(f)
    z.note(None, "A standalone note")
    group = z.group(4242, "Lab Group")
    g = z.item("book", {"title": "Le Vrai Régime anti-cancer", "language": "fr"},
               creators=[("David", "Khayat", "author")], library=group)
    z.attach(g, file=books / "regime-anticancer-arabic.epub",
             content_type="application/epub+zip", library=group)
    z.close()
    return {"zotero": root / "Zotero", "base": base}


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    root = tmp_path_factory.mktemp("zotero")
    info = build(root)
    info["root"] = root
    return info


def _spec(info, **more) -> SourceSpec:
    return SourceSpec("zotero", str(info["zotero"]), attachments_base=str(info["base"]), **more)


LOCKER = textwrap.dedent("""
    import sqlite3, sys
    db = sqlite3.connect(sys.argv[1], isolation_level=None)
    db.execute("PRAGMA locking_mode=EXCLUSIVE")
    db.execute("BEGIN EXCLUSIVE")
    db.execute("INSERT INTO dbDebug1 VALUES (1)")
    print("locked", flush=True)
    sys.stdin.read()
    db.execute("ROLLBACK")
""")


@pytest.fixture(scope="module")
def imported(library, tmp_path_factory):
    """The library added once while another process holds zotero.sqlite in a write
    transaction (as a running Zotero does)."""
    database = library["zotero"] / "zotero.sqlite"
    before = hashlib.sha256(database.read_bytes()).hexdigest()
    holder = subprocess.Popen([sys.executable, "-c", LOCKER, str(database)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        import sqlite3

        with pytest.raises(sqlite3.OperationalError, match="locked"):
            sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=0).execute(
                "SELECT count(*) FROM items").fetchone()
        service = BookService(tmp_path_factory.mktemp("data"))
        env = run_add(service, [_spec(library)], jobs=1)
    finally:
        holder.stdin.close()
        holder.wait(timeout=10)
    assert hashlib.sha256(database.read_bytes()).hexdigest() == before
    return service, env


def test_reader_joins_by_name_in_an_upgraded_database(library, tmp_path):
    fresh = ZoteroLibrary(tmp_path / "fresh")
    upgraded = ZoteroLibrary(tmp_path / "upgraded", upgraded=True)
    assert fresh.id_of("fields", "title") != upgraded.id_of("fields", "title")
    fresh.close()
    upgraded.close()
    z = read_zotero(library["zotero"], attachments_base=library["base"])
    assert "version 41" in z.csl_mapping
    by_title = {c.metadata["title"]: c for c in z.candidates}
    assert set(by_title) == {TITLE_A, "A Thesis on Numbered Pages", "Linked Article",
                             "Relative Linked Book", "Le Vrai Régime anti-cancer"}
    a = by_title[TITLE_A]
    assert a.metadata["item_type"] == "book" and a.metadata["year"] == "2019"
    assert a.metadata["date"] == "2019"
    assert a.metadata["authors"] == ["Martin Thoma", "Ada Lovelace"]
    assert a.metadata["creators"][2] == {"literal": "World Health Organization",
                                         "role": "editor"}
    assert a.metadata["tags"] == ["Topologie", "reading"]
    assert a.metadata["collections"] == ["Thesis/Chapter 1"]
    assert a.reference["issued"] == {"date-parts": [[2019]]}
    assert a.reference["publisher-place"] == "Berlin" and a.reference["edition"] == "2"
    assert a.reference["author"][0] == {"family": "Thoma", "given": "Martin"}
    thesis = by_title["A Thesis on Numbered Pages"].reference
    assert thesis["type"] == "thesis" and thesis["publisher"] == "ETH Zürich"  # base field
    assert thesis["issued"] == {"date-parts": [[2020, 5]]} and thesis["DOI"] == "10.1234/thesis.5"
    article = by_title["Linked Article"]
    assert article.reference["container-title"] == "Journal X"
    assert article.origin["link_mode"] == "linked"
    assert by_title["Relative Linked Book"].path == library["base"] / "Sub" / "alice.epub"
    group = by_title["Le Vrai Régime anti-cancer"]
    assert group.key.startswith("zotero:group-4242:")
    assert group.metadata["zotero"]["library_name"] == "Lab Group"
    reasons = sorted(s.reason.split(" (")[0] for s in z.skipped)
    assert reasons == ["missing file", "not a PDF or EPUB", "note", "note", "web link"]


def test_linked_file_relative_to_an_unknown_base_is_reported(library, tmp_path,
                                                              monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    z = read_zotero(library["zotero"], home=tmp_path)
    why = [s for s in z.skipped if "base attachment folder" in s.reason]
    assert [s.title for s in why] == ["Relative Linked Book"]


def test_prefs_give_the_base_folder(library, tmp_path):
    profile = tmp_path / ".zotero" / "zotero" / "abcd.default"
    profile.mkdir(parents=True)
    # hand-made prefs.js in the format Firefox-based Zotero writes (user_pref lines)
    (profile / "prefs.js").write_text(
        '// Mozilla User Preferences\n'
        f'user_pref("extensions.zotero.baseAttachmentPath", "{library["base"]}");\n'
        'user_pref("extensions.zotero.useDataDir", false);\n', encoding="utf-8")
    z = read_zotero(library["zotero"], home=tmp_path)
    assert any(c.metadata["title"] == "Relative Linked Book" for c in z.candidates)


def test_add_registers_attachments_with_parent_metadata(imported):
    service, env = imported
    counts = env.data["counts"]
    assert counts["added"] == 5 and counts["refused"] == 0
    assert counts["skipped"] == 5
    ids = {i["title"]: i["book_id"] for i in env.items}
    assert ids[TITLE_A] == "uber-die-quellen-und-topologie"  # Greek has no ASCII form
    status = service.status(ids[TITLE_A]).data
    assert status["title"] == TITLE_A
    assert status["authors"] == ["Martin Thoma", "Ada Lovelace"]
    meta = status["library"]["metadata"]
    assert meta["zotero"]["item_key"] and meta["publisher"] == "Springer"
    assert meta["isbn"] == "978-3-16-148410-0" and meta["language"] == "de"
    assert status["reference"]["ISBN"] == "978-3-16-148410-0"
    assert status["citation"].startswith("Thoma, M.; Lovelace, A. (2019). Über die Quellen")
    assert status["origin"]["kind"] == "zotero"
    skill = service.skill_file(ids[TITLE_A]).data["text"]
    assert "Reference (from the library it was imported from): Thoma, M.; Lovelace, A. " \
        "(2019)" in skill
    loc = service.locate(ids[TITLE_A], record_id="r0002").items[0]["locator"]
    assert loc["reference"]["title"] == TITLE_A and loc["reference"]["label"] == "chapter"
    assert service.read_source(loc).data["verified"] is True
    listed = {b["book_id"]: b for b in service.list().items}
    assert listed[ids["Le Vrai Régime anti-cancer"]]["origin"]["library"] == "group-4242"


def test_search_hits_carry_the_citation(imported):
    service, env = imported
    book = next(i["book_id"] for i in env.items if i["title"] == "A Thesis on Numbered Pages")
    hits = service.search(book, "page").items
    assert hits and hits[0]["reference"]["DOI"] == "10.1234/thesis.5"
    assert hits[0]["citation"].startswith("Hopper, G. (2020). A Thesis on Numbered Pages.")
    assert hits[0]["reference"]["label"] == "page"


def test_library_search_over_the_import_names_each_book_by_its_reference(imported):
    """Issue 20 acceptance 4 on an imported library: one search without a book id returns
    hits from several books, each naming its book with the metadata Zotero gave it."""
    service, env = imported
    titles = {i["book_id"]: i["title"] for i in env.items}
    answer = service.search_library("and", top_k=50, wait=None)
    assert answer.data["books_searched"] == len(titles) == 5
    assert answer.data["books_skipped"] == []
    hit_books = {h["book_id"]: h["book"] for h in answer.items}
    assert len(hit_books) >= 3
    for book_id, book in hit_books.items():
        assert book["title"] == titles[book_id]
    for hit in answer.items:  # the reference follows the book, as in a one-book search
        one_book = service.search(hit["book_id"], "and", top_k=50).items
        same = next(h for h in one_book if h["record_id"] == hit["record_id"])
        assert hit["reference"] == same["reference"] and hit["citation"] == same["citation"]
    quellen = next(b for b, t in titles.items() if t == TITLE_A)
    in_thesis = service.search_library("and", collection="Thesis", wait=None)
    assert {h["book_id"] for h in in_thesis.items} == {quellen}
    assert in_thesis.data["books_selected"] == 1
    # The library's date, not the file's own dc:date (this EPUB says 1593).
    assert in_thesis.items[0]["book"] == {"title": TITLE_A,
                                          "authors": ["Martin Thoma", "Ada Lovelace"],
                                          "year": 2019}
    assert in_thesis.items[0]["citation"].startswith("Thoma, M.; Lovelace, A. (2019).")
    tagged = service.search_library("and", tag="reading", wait=None)
    assert tagged.data["books_selected"] == 2


def test_second_run_is_unchanged_and_reads_no_file_again(imported, library):
    service, _env = imported
    again = run_add(service, [_spec(library)], jobs=1)
    assert again.data["counts"]["unchanged"] == 5
    assert again.data["counts"]["added"] == again.data["counts"]["updated"] == 0


def test_changes_removals_and_prune(library, imported, tmp_path):
    service, _env = imported
    data = tmp_path / "data"
    shutil.copytree(service.registry.data_dir, data)
    zotero = tmp_path / "Zotero"
    shutil.copytree(library["zotero"], zotero)
    copy = BookService(data)
    import sqlite3

    db = sqlite3.connect(zotero / "zotero.sqlite")
    field = db.execute("SELECT fieldID FROM fields WHERE fieldName='title'").fetchone()[0]
    value = db.execute("INSERT INTO itemDataValues (valueID, value) VALUES "
                       "((SELECT MAX(valueID)+1 FROM itemDataValues), 'A Thesis, Revised') "
                       "RETURNING valueID").fetchone()[0]
    thesis = db.execute("SELECT d.itemID FROM itemData d JOIN itemDataValues v USING(valueID) "
                        "WHERE v.value='A Thesis on Numbered Pages'").fetchone()[0]
    db.execute("UPDATE itemData SET valueID=? WHERE itemID=? AND fieldID=?",
               (value, thesis, field))
    db.execute("UPDATE items SET dateModified='2025-01-01 00:00:00' WHERE itemID=?", (thesis,))
    linked = db.execute("SELECT d.itemID FROM itemData d JOIN itemDataValues v USING(valueID) "
                        "WHERE v.value='Linked Article'").fetchone()[0]
    db.execute("INSERT INTO deletedItems (itemID) VALUES (?)", (linked,))
    db.commit()
    db.close()
    spec = SourceSpec("zotero", str(zotero), attachments_base=str(library["base"]))
    changed = run_add(copy, [spec], jobs=1)
    by = {i["origin"]: i for i in changed.items}
    updated = [i for i in changed.items if i["status"] == "updated"]
    assert [i["title"] for i in updated] == ["A Thesis, Revised"]
    assert updated[0]["version"] == 2
    assert len(by) == 4
    removed = changed.data["removed"]
    assert len(removed) == 1 and copy.registry.is_registered(removed[0]["book_id"])
    book = updated[0]["book_id"]
    assert copy.status(book).data["title"] == "A Thesis, Revised"
    pruned = run_add(copy, [spec], jobs=1, prune=True)
    assert pruned.data["pruned"] == [removed[0]["book_id"]]
    assert not copy.registry.is_registered(removed[0]["book_id"])


def test_collection_and_tag_filters(library):
    service = BookService(library["root"] / "unused-data")
    env = run_add(service, [_spec(library, collection="Thesis")], dry_run=True)
    assert [i["title"] for i in env.items] == [TITLE_A]
    env = run_add(service, [_spec(library, tag="READING")], dry_run=True)
    assert sorted(i["title"] for i in env.items) == ["A Thesis on Numbered Pages", TITLE_A]
    assert {i["status"] for i in env.items} == {"would_add"}
    assert not service.registry.list_ids()
