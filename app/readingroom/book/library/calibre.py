"""A calibre library as book candidates: each book's preferred format with its metadata.

calibre keeps ``metadata.db`` at the library's root and each book's files in
``<books.path>/<data.name>.<format in lower case>`` (the ``data`` table lists the formats).
Authors come through ``books_authors_link`` in link order (with calibre's sort names),
series through ``books_series_link`` (with ``books.series_index``), publisher, languages
(``item_order``), tags and identifiers (``isbn``, ``doi``, …) through their link tables, the
description from ``comments`` (HTML, read as text). A pubdate in year 101 or before is
calibre's "undefined". The database is read from a private copy, never in place.
"""

from __future__ import annotations

import html
import re
import sqlite3
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...core.errors import Code, CoreError
from .citation import date_parts
from .sources import Candidate, Skipped, sqlite_snapshot

__all__ = ["DEFAULT_FORMATS", "CalibreImport", "parse_database", "read_calibre"]

DEFAULT_FORMATS = ("epub", "pdf")
"""The preferred format first: EPUB (reflowable text, real chapters), else PDF."""
_BOOK_FORMATS = frozenset({"epub", "pdf", "md", "markdown"})


@dataclass
class CalibreImport:
    """What a calibre library offers (as :class:`.zotero.ZoteroImport`)."""

    library_dir: Path
    candidates: list[Candidate] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    present: set[str] = field(default_factory=set)
    library_uuid: str | None = None
    items: int = 0


def read_calibre(library_dir: Path, *, formats: tuple[str, ...] = DEFAULT_FORMATS
                 ) -> CalibreImport:
    """Read a calibre library folder (the one holding ``metadata.db``).

    Raises:
        CoreError: NOT_FOUND (no ``metadata.db``), INVALID_ARGUMENT (a format book-agent
            cannot read), PATH_UNUSABLE (unreadable).
    """
    bad = [f for f in formats if f.lower() not in _BOOK_FORMATS]
    if bad or not formats:
        raise CoreError(Code.INVALID_ARGUMENT, f"--formats takes epub, pdf or md, not "
                        f"{', '.join(bad) or 'nothing'}.",
                        remediation="e.g. --formats pdf,epub (the first present is taken)")
    library_dir = Path(library_dir).expanduser()
    database = library_dir / "metadata.db"
    if not database.is_file():
        raise CoreError(Code.NOT_FOUND, f"No calibre library at {library_dir} (no "
                        "metadata.db).", details={"path": str(database)},
                        remediation="Give the calibre library folder (calibre: the library "
                        "icon → Switch/create library shows it).")
    with sqlite_snapshot(database, what="calibre") as conn:
        return parse_database(conn, library_dir, formats=tuple(f.lower() for f in formats))


def _text(comment: str | None) -> str | None:
    """calibre's HTML description as plain text."""
    if not comment:
        return None
    text = re.sub(r"<(br|/p|/div|/li)\b[^>]*>", "\n", comment, flags=re.I)
    text = html.unescape(re.sub(r"<[^>]+>", "", text))
    text = "\n".join(" ".join(line.split()) for line in text.splitlines())
    return re.sub(r"\n{2,}", "\n", text).strip() or None


def _links(conn: sqlite3.Connection, sql: str) -> dict[int, list[Any]]:
    out: dict[int, list[Any]] = defaultdict(list)
    for row in conn.execute(sql):
        out[row[0]].append(row[1] if len(row) == 2 else row[1:])
    return out


def _index(value: Any) -> str | None:
    if not isinstance(value, int | float):
        return None
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def parse_database(conn: sqlite3.Connection, library_dir: Path, *,
                   formats: tuple[str, ...] = DEFAULT_FORMATS) -> CalibreImport:
    """The candidates of an open calibre ``metadata.db`` (pure over the connection and disk)."""
    out = CalibreImport(library_dir=library_dir)
    try:
        row = conn.execute("SELECT uuid FROM library_id").fetchone()
        out.library_uuid = row[0] if row else None
    except sqlite3.OperationalError:
        out.library_uuid = None
    lib = out.library_uuid or str(library_dir)
    authors = _links(conn, "SELECT l.book, a.name, a.sort FROM books_authors_link l "
                     "JOIN authors a ON a.id = l.author ORDER BY l.book, l.id")
    series = _links(conn, "SELECT l.book, s.name FROM books_series_link l "
                    "JOIN series s ON s.id = l.series")
    publishers = _links(conn, "SELECT l.book, p.name FROM books_publishers_link l "
                        "JOIN publishers p ON p.id = l.publisher")
    languages = _links(conn, "SELECT l.book, g.lang_code FROM books_languages_link l "
                       "JOIN languages g ON g.id = l.lang_code ORDER BY l.book, l.item_order")
    tags = _links(conn, "SELECT l.book, t.name FROM books_tags_link l "
                  "JOIN tags t ON t.id = l.tag ORDER BY t.name")
    identifiers = _links(conn, "SELECT book, type, val FROM identifiers")
    comments = {b: t for b, t in conn.execute("SELECT book, text FROM comments")}
    data = _links(conn, "SELECT book, format, name FROM data")
    books = conn.execute("SELECT id, title, sort, pubdate, series_index, path, uuid, "
                         "last_modified FROM books ORDER BY id").fetchall()
    out.items = len(books)
    for book_id, title, title_sort, pubdate, series_index, rel, uuid, modified in books:
        key = f"calibre:{lib}:{book_id}"
        have = {str(fmt).lower(): str(name) for fmt, name in data.get(book_id, [])}
        readable = [f for f in formats if f in have]
        where = f"{rel} (book {book_id})"
        if not readable:
            reason = ("no format file recorded" if not have else
                      f"no {' or '.join(f.upper() for f in formats)} format (has "
                      f"{', '.join(sorted(f.upper() for f in have))})")
            out.skipped.append(Skipped("calibre", where, reason, title))
            continue
        out.present.add(key)
        fmt = readable[0]
        file = library_dir.joinpath(*str(rel).split("/")) / f"{have[fmt]}.{fmt}"
        if not file.is_file():
            out.skipped.append(Skipped("calibre", where, f"missing file ({file.name})", title))
            continue
        people = [{"name": n, "sort": s} for n, s in authors.get(book_id, [])]
        ids = {str(t).lower(): str(v) for t, v in identifiers.get(book_id, [])}
        issued = date_parts(pubdate)
        csl: dict[str, Any] = {"type": "book", "title": title}
        names = []
        for person in people:
            family, sep, given = str(person["sort"] or "").partition(",")
            names.append({"family": family.strip(), "given": given.strip()}
                         if sep and family.strip() and given.strip()
                         else {"literal": person["name"]})
        if names:
            csl["author"] = names
        if issued and "date-parts" in issued:
            csl["issued"] = issued
        for csl_key, value in (("publisher", (publishers.get(book_id) or [None])[0]),
                               ("collection-title", (series.get(book_id) or [None])[0]),
                               ("collection-number", _index(series_index)
                                if series.get(book_id) else None),
                               ("ISBN", ids.get("isbn")), ("DOI", ids.get("doi")),
                               ("URL", ids.get("uri") or ids.get("url")),
                               ("language", (languages.get(book_id) or [None])[0]),
                               ("abstract", _text(comments.get(book_id)))):
            if value:
                csl[csl_key] = value
        metadata = {
            "source": "calibre", "title": title, "title_sort": title_sort,
            "authors": [p["name"] for p in people], "author_sort": [p["sort"] for p in people],
            "series": (series.get(book_id) or [None])[0],
            "series_index": series_index if series.get(book_id) else None,
            "publisher": (publishers.get(book_id) or [None])[0],
            "pubdate": pubdate if issued and "date-parts" in issued else None,
            "year": str(issued["date-parts"][0][0]) if issued and "date-parts" in issued
            else None,
            "languages": languages.get(book_id, []), "tags": tags.get(book_id, []),
            "identifiers": ids, "comments": _text(comments.get(book_id)),
            "calibre": {"book_id": book_id, "uuid": uuid, "library_uuid": out.library_uuid,
                        "path": rel, "format": fmt.upper(),
                        "formats": sorted(f.upper() for f in have)},
        }
        metadata = {k: v for k, v in metadata.items() if v not in (None, "", [], {})}
        out.candidates.append(Candidate(
            path=file,
            origin={"kind": "calibre", "key": key, "path": str(file),
                    "library_dir": str(library_dir), "book_id": book_id, "uuid": uuid,
                    "format": fmt.upper(), "date_modified": str(modified or "")},
            title_hint=str(title or file.stem), metadata=metadata, reference=csl))
    return out
