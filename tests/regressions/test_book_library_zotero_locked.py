"""``book-agent add --zotero`` while Zotero holds its database locked.

Fault class: a running Zotero keeps ``zotero.sqlite`` open with an exclusive lock (and may be
in a write transaction); a reader that opens the file in place — even read-only — fails with
"database is locked", or waits and blocks Zotero. Here another process holds the database in
an exclusive write transaction while ``add --zotero`` runs as a real command: the plain
read-only open is seen failing, the add registers the attachment, and the database file is
unchanged afterwards.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import subprocess
import sys
import textwrap

import pytest
from tests.book.conftest import fixture_books
from tests.book.library.zotero_builder import ZoteroLibrary

# Starts real server or command processes: left out of the quick tier (tests/conftest.py).
pytestmark = pytest.mark.stdio

HOLD = textwrap.dedent("""
    import sqlite3, sys
    db = sqlite3.connect(sys.argv[1], isolation_level=None)
    db.execute("PRAGMA locking_mode=EXCLUSIVE")
    db.execute("BEGIN EXCLUSIVE")
    db.execute("UPDATE items SET clientVersion = clientVersion + 1")
    print("locked", flush=True)
    sys.stdin.read()
    db.execute("ROLLBACK")
""")


def test_add_reads_a_zotero_database_another_process_holds_locked(tmp_path):
    z = ZoteroLibrary(tmp_path / "Zotero")
    book = z.item("book", {"title": "Venus and Adonis", "date": "1593-00-00 1593"},
                  creators=[("William", "Shakespeare", "author")])
    z.attach(book, file=fixture_books() / "venus-and-adonis-epub2.epub",
             content_type="application/epub+zip")
    z.close()
    database = tmp_path / "Zotero" / "zotero.sqlite"
    before = hashlib.sha256(database.read_bytes()).hexdigest()
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(database)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=0).execute(
                "SELECT count(*) FROM items").fetchone()
        done = subprocess.run([sys.executable, "-m", "readingroom.book", "--data-dir",
                               str(tmp_path / "data"), "--json", "add", "--zotero",
                               str(tmp_path / "Zotero")], capture_output=True, text=True,
                              timeout=120, env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"})
    finally:
        holder.stdin.close()
        holder.wait(timeout=10)
    assert done.returncode == 0, done.stderr
    env = json.loads(done.stdout)
    assert [(i["status"], i["book_id"]) for i in env["items"]] == [("added",
                                                                    "venus-and-adonis")]
    assert hashlib.sha256(database.read_bytes()).hexdigest() == before
