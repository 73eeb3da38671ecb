"""A Zotero library as book candidates: every PDF/EPUB attachment with its parent's metadata.

Where Zotero keeps things (its documentation and its own schema files): ``zotero.sqlite`` in
the data directory (``~/Zotero`` on every OS unless the ``extensions.zotero.dataDir``
preference moves it), stored files in ``storage/<attachment key>/<file>`` (``path`` is
``storage:<file>``, link modes 0 and 1), linked files at an absolute path or
``attachments:<relative>`` under the base attachment folder (the
``extensions.zotero.baseAttachmentPath`` preference in the profile's ``prefs.js``; link
mode 2), web links (mode 3) and embedded images (mode 4) with no file of their own.

Item types, fields and creator types have per-database ids, assigned at start-up from the
schema file (Zotero's ``_updateGlobalSchema``): everything here joins by *name*
(``itemTypesCombined.typeName``, ``fieldsCombined.fieldName``, ``creatorTypes.creatorType``),
never by a numeric id. Fields with a base field (``bookTitle`` → ``publicationTitle``,
``university`` → ``publisher``) are read through ``baseFieldMappingsCombined``. The CSL-JSON
mapping is the ``csl`` section of the schema Zotero stored in the database itself
(``settings``: ``globalSchema``/``data``, zlib-compressed JSON); a database without it (older
than Zotero 5.0.80) falls back to a small built-in table of the common types.

The database is read from a private copy (:func:`.sources.sqlite_snapshot`), never opened in
place, so a running Zotero is neither blocked nor disturbed. Items in the trash are left out;
notes, web links, embedded images, other attachment types and missing files are reported.
"""

from __future__ import annotations

import os
import re
import sqlite3
import sys
import zlib
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...core.errors import Code, CoreError
from .citation import date_parts
from .sources import Candidate, Skipped, sqlite_snapshot

__all__ = [
    "BOOK_CONTENT_TYPES",
    "CslMapping",
    "ZoteroImport",
    "default_data_dir",
    "find_prefs",
    "parse_database",
    "read_prefs",
    "read_zotero",
]

BOOK_CONTENT_TYPES = {"application/pdf": ".pdf", "application/epub+zip": ".epub",
                      "application/epub": ".epub", "text/markdown": ".md"}
_LINK_MODES = {0: "stored", 1: "stored", 2: "linked", 3: "web link", 4: "embedded image"}

# The built-in fallback: the common types only (facts of Zotero's CSL mapping).
_FALLBACK_CSL = {
    "types": {"book": ["book"], "chapter": ["bookSection"],
              "article-journal": ["journalArticle"], "thesis": ["thesis"],
              "report": ["report"], "paper-conference": ["conferencePaper"],
              "document": ["document", "attachment"], "manuscript": ["manuscript"],
              "webpage": ["webpage"]},
    "fields": {"text": {"title": ["title"], "container-title": ["publicationTitle"],
                        "publisher": ["publisher"], "publisher-place": ["place"],
                        "DOI": ["DOI"], "ISBN": ["ISBN"], "URL": ["url"],
                        "language": ["language"], "edition": ["edition"],
                        "volume": ["volume"], "collection-title": ["seriesTitle", "series"],
                        "abstract": ["abstractNote"], "citation-key": ["citationKey"],
                        "page": ["pages"], "number-of-pages": ["numPages"]},
               "date": {"issued": "date", "accessed": "accessDate"}},
    "names": {"author": "author", "editor": "editor", "bookAuthor": "container-author",
              "translator": "translator", "seriesEditor": "collection-editor",
              "contributor": "contributor"},
}


def default_data_dir(home: Path | None = None) -> Path:
    """Zotero's default data directory: ``~/Zotero`` on every OS."""
    return (home or Path.home()) / "Zotero"


def find_prefs(home: Path | None = None, platform: str = sys.platform) -> list[Path]:
    """The ``prefs.js`` of each Zotero profile on this machine (newest first)."""
    home = home or Path.home()
    if platform == "win32":
        appdata = Path(os.environ.get("APPDATA") or home / "AppData" / "Roaming")
        roots = [appdata / "Zotero" / "Zotero" / "Profiles"]
    elif platform == "darwin":
        roots = [home / "Library" / "Application Support" / "Zotero" / "Profiles"]
    else:
        roots = [home / ".zotero" / "zotero"]
    found = []
    for root in roots:
        try:
            found += [p / "prefs.js" for p in root.iterdir() if (p / "prefs.js").is_file()]
        except OSError:
            continue
    return sorted(found, key=lambda p: p.stat().st_mtime, reverse=True)


_PREF = re.compile(r'^\s*user_pref\(\s*"([^"]+)"\s*,\s*(.*?)\s*\)\s*;\s*$')


def read_prefs(path: Path) -> dict[str, Any]:
    """The ``user_pref("name", value);`` lines of a Firefox-style ``prefs.js``."""
    out: dict[str, Any] = {}
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return out
    for line in text.splitlines():
        m = _PREF.match(line)
        if not m:
            continue
        raw = m.group(2)
        if raw.startswith('"') and raw.endswith('"'):
            out[m.group(1)] = raw[1:-1].encode("utf-8").decode("unicode_escape", "replace") \
                if "\\" in raw else raw[1:-1]
        elif raw in ("true", "false"):
            out[m.group(1)] = raw == "true"
        else:
            out[m.group(1)] = raw
    return out


@dataclass(frozen=True)
class CslMapping:
    """Zotero → CSL-JSON: item types, text and date fields, creator roles (schema's ``csl``)."""

    types: dict[str, str]
    text: dict[str, list[str]]
    dates: dict[str, str]
    names: dict[str, str]
    source: str

    @classmethod
    def from_schema(cls, csl: Mapping[str, Any], source: str) -> CslMapping:
        """From the ``csl`` section of Zotero's schema.json."""
        types = {z: c for c, zs in (csl.get("types") or {}).items() for z in zs}
        fields = csl.get("fields") or {}
        return cls(types=types, text={k: list(v) for k, v in (fields.get("text") or {}).items()},
                   dates=dict(fields.get("date") or {}), names=dict(csl.get("names") or {}),
                   source=source)

    def to_csl(self, item_type: str, values: Mapping[str, str],
               creators: list[dict[str, Any]]) -> dict[str, Any]:
        """A CSL-JSON item from an item's field values (by name, base fields included).

        As Zotero's own mapping: each CSL variable takes the first of its Zotero fields (in
        the schema's order) that has a value.
        """
        out: dict[str, Any] = {"type": self.types.get(item_type, "document")}
        best: dict[str, tuple[int, str]] = {}
        for name, value in values.items():
            if not value:
                continue
            for csl_field, rank in self._reverse().get(name, ()):
                if csl_field not in best or rank < best[csl_field][0]:
                    best[csl_field] = (rank, value)
        for csl_field in self.text:
            if csl_field in best:
                out[csl_field] = best[csl_field][1]
        for csl_field, name in self.dates.items():
            parts = date_parts(values.get(name))
            if parts:
                out[csl_field] = parts
        for creator in creators:
            role = self.names.get(str(creator.get("role")))
            if role:
                person = {k: v for k, v in creator.items() if k in ("family", "given", "literal")}
                out.setdefault(role, []).append(person)
        return out

    def _reverse(self) -> dict[str, list[tuple[str, int]]]:
        """Zotero field → the CSL variables it feeds, with its rank in each (cached)."""
        cached = self.__dict__.get("_reverse_map")
        if cached is None:
            cached = {}
            for csl_field, names in self.text.items():
                for rank, name in enumerate(names):
                    cached.setdefault(name, []).append((csl_field, rank))
            object.__setattr__(self, "_reverse_map", cached)
        return cached


@dataclass
class ZoteroImport:
    """What a Zotero library offers: candidates, what was skipped and why, and every
    book attachment it still holds (to tell which registered books left it)."""

    data_dir: Path
    candidates: list[Candidate] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    present: set[str] = field(default_factory=set)
    csl_mapping: str = ""
    libraries: list[dict[str, Any]] = field(default_factory=list)
    items: int = 0


def read_zotero(data_dir: Path | None = None, *, collection: str | None = None,
                tag: str | None = None, attachments_base: Path | None = None,
                home: Path | None = None) -> ZoteroImport:
    """Read a Zotero data directory (default ``~/Zotero``) from a copy of its database.

    ``attachments_base``: the base folder of ``attachments:`` paths; default: the
    ``extensions.zotero.baseAttachmentPath`` preference of the newest profile.

    Raises:
        CoreError: NOT_FOUND (no ``zotero.sqlite``), INVALID_ARGUMENT (no such collection),
            PATH_UNUSABLE (unreadable).
    """
    prefs: dict[str, Any] = {}
    for path in find_prefs(home):
        prefs = read_prefs(path)
        if prefs:
            break
    if data_dir is None:
        custom = prefs.get("extensions.zotero.dataDir")
        use_custom = prefs.get("extensions.zotero.useDataDir")
        data_dir = Path(custom) if custom and use_custom else default_data_dir(home)
    data_dir = Path(data_dir).expanduser()
    if attachments_base is None and prefs.get("extensions.zotero.baseAttachmentPath"):
        attachments_base = Path(str(prefs["extensions.zotero.baseAttachmentPath"]))
    database = data_dir / "zotero.sqlite"
    if not database.is_file():
        raise CoreError(Code.NOT_FOUND, f"No Zotero database at {database}.",
                        details={"path": str(database)},
                        remediation="Give Zotero's data directory (Zotero: Settings → "
                        "Advanced → Files and Folders → Data Directory Location): "
                        "book-agent add --zotero DIR.")
    with sqlite_snapshot(database, what="Zotero") as conn:
        return parse_database(conn, data_dir, attachments_base=attachments_base,
                              collection=collection, tag=tag)


def _rows(conn: sqlite3.Connection, sql: str, fallback: str | None = None) -> list[tuple]:
    try:
        return conn.execute(sql).fetchall()
    except sqlite3.OperationalError:
        if fallback is None:
            raise
        return conn.execute(fallback).fetchall()


def _mapping(conn: sqlite3.Connection) -> CslMapping:
    try:
        row = conn.execute("SELECT value FROM settings WHERE setting='globalSchema' "
                           "AND key='data'").fetchone()
        version = conn.execute("SELECT version FROM version WHERE schema='globalSchema'"
                               ).fetchone()
    except sqlite3.OperationalError:
        row = version = None
    if row and row[0]:
        raw = row[0]
        try:
            import json

            data = json.loads(zlib.decompress(raw if isinstance(raw, bytes) else
                                              str(raw).encode("latin-1")))
            if isinstance(data, dict) and isinstance(data.get("csl"), dict):
                which = f"the database's own Zotero schema (version {version[0]})" \
                    if version else "the database's own Zotero schema"
                return CslMapping.from_schema(data["csl"], which)
        except (zlib.error, ValueError, UnicodeError):
            pass
    return CslMapping.from_schema(_FALLBACK_CSL, "book-agent's built-in table (the "
                                  "database holds no Zotero schema)")


def _display(creator: Mapping[str, Any]) -> str:
    if creator.get("literal"):
        return str(creator["literal"])
    return " ".join(p for p in (creator.get("given"), creator.get("family")) if p)


def parse_database(conn: sqlite3.Connection, data_dir: Path, *,
                   attachments_base: Path | None = None, collection: str | None = None,
                   tag: str | None = None) -> ZoteroImport:
    """The candidates of an open Zotero database (pure over the connection and the disk)."""
    out = ZoteroImport(data_dir=data_dir)
    mapping = _mapping(conn)
    out.csl_mapping = mapping.source
    libraries: dict[int, dict[str, Any]] = {}
    for lib_id, kind, group_id, name in _rows(
            conn, "SELECT l.libraryID, l.type, g.groupID, g.name FROM libraries l "
            "LEFT JOIN groups g ON g.libraryID = l.libraryID"):
        libraries[lib_id] = {"id": lib_id, "type": kind, "group_id": group_id,
                             "name": name or ("My Library" if kind == "user" else None),
                             "key": "user" if kind == "user" else f"group-{group_id or lib_id}"}
    out.libraries = list(libraries.values())
    items: dict[int, dict[str, Any]] = {}
    for item_id, key, lib_id, type_name, modified in _rows(
            conn, "SELECT i.itemID, i.key, i.libraryID, t.typeName, i.dateModified FROM items i "
            "JOIN itemTypesCombined t ON t.itemTypeID = i.itemTypeID",
            "SELECT i.itemID, i.key, i.libraryID, t.typeName, i.dateModified FROM items i "
            "JOIN itemTypes t ON t.itemTypeID = i.itemTypeID"):
        items[item_id] = {"key": key, "library": lib_id, "type": type_name,
                          "modified": str(modified or "")}
    out.items = len(items)
    trashed = {r[0] for r in _rows(conn, "SELECT itemID FROM deletedItems")}
    base_of: dict[tuple[str, str], str] = {}
    for type_name, base, name in _rows(
            conn, "SELECT t.typeName, b.fieldName, f.fieldName FROM baseFieldMappingsCombined m "
            "JOIN itemTypesCombined t ON t.itemTypeID = m.itemTypeID "
            "JOIN fieldsCombined b ON b.fieldID = m.baseFieldID "
            "JOIN fieldsCombined f ON f.fieldID = m.fieldID",
            "SELECT t.typeName, b.fieldName, f.fieldName FROM baseFieldMappings m "
            "JOIN itemTypes t ON t.itemTypeID = m.itemTypeID "
            "JOIN fields b ON b.fieldID = m.baseFieldID JOIN fields f ON f.fieldID = m.fieldID"):
        base_of[(type_name, name)] = base
    values: dict[int, dict[str, str]] = defaultdict(dict)
    for item_id, name, value in _rows(
            conn, "SELECT d.itemID, f.fieldName, v.value FROM itemData d "
            "JOIN fieldsCombined f ON f.fieldID = d.fieldID "
            "JOIN itemDataValues v ON v.valueID = d.valueID",
            "SELECT d.itemID, f.fieldName, v.value FROM itemData d "
            "JOIN fields f ON f.fieldID = d.fieldID "
            "JOIN itemDataValues v ON v.valueID = d.valueID"):
        if value is not None and str(value) != "":
            values[item_id][name] = str(value)
    creators: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for item_id, first, last, mode, role, _order in _rows(
            conn, "SELECT ic.itemID, c.firstName, c.lastName, c.fieldMode, ct.creatorType, "
            "ic.orderIndex FROM itemCreators ic JOIN creators c ON c.creatorID = ic.creatorID "
            "JOIN creatorTypes ct ON ct.creatorTypeID = ic.creatorTypeID "
            "ORDER BY ic.itemID, ic.orderIndex"):
        if mode == 1 or not first:
            person: dict[str, Any] = {"literal": str(last or first or "")}
        else:
            person = {"family": str(last or ""), "given": str(first)}
        person["role"] = role
        creators[item_id].append(person)
    primary: dict[str, str] = {}
    for type_name, role in _rows(
            conn, "SELECT t.typeName, ct.creatorType FROM itemTypeCreatorTypes m "
            "JOIN itemTypes t ON t.itemTypeID = m.itemTypeID "
            "JOIN creatorTypes ct ON ct.creatorTypeID = m.creatorTypeID "
            "WHERE m.primaryField = 1"):
        primary[type_name] = role
    tags: dict[int, list[str]] = defaultdict(list)
    for item_id, name in _rows(conn, "SELECT it.itemID, t.name FROM itemTags it "
                               "JOIN tags t ON t.tagID = it.tagID ORDER BY t.name"):
        tags[item_id].append(str(name))
    paths = _collection_paths(conn)
    member: dict[int, list[int]] = defaultdict(list)
    for coll_id, item_id in _rows(conn, "SELECT collectionID, itemID FROM collectionItems"):
        member[item_id].append(coll_id)
    wanted_collections: set[int] | None = None
    if collection is not None:
        wanted_collections = _select_collections(paths, collection)

    notes = _rows(conn, "SELECT n.itemID, n.parentItemID, n.title FROM itemNotes n")
    for item_id, parent_id, title in notes:
        if item_id in trashed or item_id not in items:
            continue
        parent_title = values.get(parent_id or -1, {}).get("title")
        out.skipped.append(Skipped("zotero", _item_where(items[item_id], libraries),
                                   "note (no file)", title or parent_title))

    for att_id, parent_id, link_mode, content_type, raw_path in _rows(
            conn, "SELECT itemID, parentItemID, linkMode, contentType, path "
            "FROM itemAttachments"):
        att = items.get(att_id)
        if att is None or libraries.get(att["library"], {}).get("type") == "feed":
            continue
        parent = items.get(parent_id) if parent_id else None
        owner_id = parent_id if parent is not None else att_id
        lib = libraries.get(att["library"], {"key": f"library-{att['library']}", "type": None,
                                             "id": att["library"]})
        key = f"zotero:{lib['key']}:{att['key']}"
        owner_values = values.get(owner_id, {})
        title = owner_values.get("title") or values.get(att_id, {}).get("title")
        where = _item_where(att, libraries)
        suffix = _book_suffix(content_type, raw_path)
        mode = _LINK_MODES.get(link_mode if isinstance(link_mode, int) else -1, "unknown")
        if att_id in trashed or (parent_id and parent_id in trashed):
            continue  # in the trash: gone as far as the library goes
        if mode in ("web link", "embedded image"):
            out.skipped.append(Skipped("zotero", where, mode + " (no file)", title))
            continue
        if suffix is None:
            out.skipped.append(Skipped(
                "zotero", where, f"not a PDF or EPUB ({content_type or 'no content type'})",
                title))
            continue
        out.present.add(key)
        if wanted_collections is not None and not (set(member.get(owner_id, [])) |
                                                   set(member.get(att_id, []))) & \
                wanted_collections:
            continue
        if tag is not None and tag.casefold() not in {t.casefold() for t in
                                                      tags.get(owner_id, []) +
                                                      tags.get(att_id, [])}:
            continue
        file, why = _resolve(data_dir, att["key"], link_mode, raw_path, attachments_base)
        if file is None or not file.is_file():
            out.skipped.append(Skipped("zotero", where, why or f"missing file ({raw_path})",
                                       title))
            continue
        owner_type = (parent or att)["type"]
        fields = dict(owner_values)
        for name, value in list(fields.items()):
            base = base_of.get((owner_type, name))
            if base and base not in fields:
                fields[base] = value
        people = creators.get(owner_id, [])
        csl = mapping.to_csl(owner_type, fields, people)
        main_role = primary.get(owner_type, "author")
        authors = [c for c in people if c.get("role") == main_role] or \
            [c for c in people if c.get("role") == "editor"] or people
        metadata = {
            "source": "zotero",
            "item_type": owner_type,
            "title": title or file.stem,
            "creators": people,
            "authors": [_display(c) for c in authors if _display(c)],
            "date": fields.get("date", "").split(" ", 1)[-1] if fields.get("date") else None,
            "year": _year(fields.get("date")),
            "publisher": fields.get("publisher"),
            "place": fields.get("place"),
            "doi": fields.get("DOI"),
            "isbn": fields.get("ISBN"),
            "url": fields.get("url"),
            "language": fields.get("language"),
            "abstract": fields.get("abstractNote"),
            "tags": sorted(set(tags.get(owner_id, []))),
            "collections": sorted({paths[c][0] for c in member.get(owner_id, []) if c in paths}),
            "fields": fields,
            "zotero": {"item_key": (parent or att)["key"], "attachment_key": att["key"],
                       "library_id": lib.get("id"), "library_type": lib.get("type"),
                       "group_id": lib.get("group_id"), "library_name": lib.get("name")},
        }
        metadata = {k: v for k, v in metadata.items() if v not in (None, "", [])}
        modified = max(att["modified"], (parent or att)["modified"])
        out.candidates.append(Candidate(
            path=file,
            origin={"kind": "zotero", "key": key, "path": str(file),
                    "data_dir": str(data_dir), "zotero_path": raw_path,
                    "link_mode": mode, "library": lib.get("key"),
                    "item_key": (parent or att)["key"], "attachment_key": att["key"],
                    "date_modified": modified},
            title_hint=title or file.stem, metadata=metadata, reference=csl))
    out.candidates.sort(key=lambda c: c.key)
    return out


def _item_where(item: Mapping[str, Any], libraries: Mapping[int, Mapping[str, Any]]) -> str:
    lib = libraries.get(item["library"], {})
    return f"{lib.get('key', 'library')}/{item['key']}"


def _year(date: str | None) -> str | None:
    parts = date_parts(date)
    if parts and parts.get("date-parts"):
        return str(parts["date-parts"][0][0])
    return None


def _book_suffix(content_type: str | None, raw_path: str | None) -> str | None:
    if content_type and content_type.lower() in BOOK_CONTENT_TYPES:
        return BOOK_CONTENT_TYPES[content_type.lower()]
    suffix = Path(str(raw_path or "")).suffix.lower()
    return suffix if suffix in (".pdf", ".epub") else None


def _resolve(data_dir: Path, key: str, link_mode: Any, raw: str | None,
             base: Path | None) -> tuple[Path | None, str | None]:
    """The file of an attachment, or None with the reason it cannot be found."""
    if not raw:
        return None, "no file path recorded"
    if raw.startswith("storage:"):
        return Path(os.path.join(data_dir, "storage", key, raw[len("storage:"):])), None
    if raw.startswith("attachments:"):
        if base is None:
            return None, ("linked file relative to the base attachment folder, which is not "
                          "set (give --attachments-base DIR)")
        rel = raw[len("attachments:"):].replace("\\", "/")
        return base.joinpath(*[p for p in rel.split("/") if p]), None
    return Path(raw), None


def _collection_paths(conn: sqlite3.Connection) -> dict[int, tuple[str, int | None]]:
    """Each collection's path (``Parent/Child``) and parent id."""
    rows = {cid: (name, parent) for cid, name, parent in _rows(
        conn, "SELECT collectionID, collectionName, parentCollectionID FROM collections")}
    out: dict[int, tuple[str, int | None]] = {}
    for cid, (name, parent) in rows.items():
        parts, seen, node = [name], {cid}, parent
        while node is not None and node in rows and node not in seen:
            seen.add(node)
            parts.append(rows[node][0])
            node = rows[node][1]
        out[cid] = ("/".join(reversed(parts)), parent)
    return out


def _select_collections(paths: Mapping[int, tuple[str, int | None]], wanted: str) -> set[int]:
    """The collections named ``wanted`` (by name or path) and everything beneath them."""
    fold = wanted.casefold().strip("/")
    roots = {cid for cid, (path, _p) in paths.items()
             if path.casefold() == fold or path.rsplit("/", 1)[-1].casefold() == fold}
    if not roots:
        names = sorted({p for p, _ in paths.values()})[:20]
        raise CoreError(Code.INVALID_ARGUMENT, f"No Zotero collection named {wanted!r}.",
                        details={"collections": names},
                        remediation="Use a collection's name or path (Parent/Child) as Zotero "
                        "shows it.")
    chosen = set(roots)
    changed = True
    while changed:
        changed = False
        for cid, (_path, parent) in paths.items():
            if parent in chosen and cid not in chosen:
                chosen.add(cid)
                changed = True
    return chosen
