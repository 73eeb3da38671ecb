"""Zotero test libraries built from Zotero's own schema files, never from hand-written tables.

As Zotero's start-up does (``chrome/content/zotero/xpcom/schema.js``: ``_initializeSchema``
then ``_updateGlobalSchema``): ``system.sql``, ``userdata.sql`` and ``triggers.sql`` are run
into a fresh database; item type, field and creator type ids are assigned from
``schema.json`` — existing names keep their id, each new name gets the next free one — and
the mapping tables, the ``*Combined`` tables and the ``globalSchema`` setting (the schema
without ``itemTypes``, zlib-compressed) follow; the user library is library 1. An
``upgraded`` library first holds an older, differently ordered subset of the names, as a
database created by an earlier Zotero would, so its ids differ from a fresh one's: a reader
that joins by numeric id reads the wrong fields there.

Items are then inserted through *names* only (item type, field and creator type names looked
up in the database), with real files as attachments. Dates are stored the way Zotero stores
them: multipart ``YYYY-MM-DD text`` (``2019-00-00 2019``).
"""

from __future__ import annotations

import json
import random
import re
import shutil
import sqlite3
import string
import zlib
from pathlib import Path

from tests.conftest import samples_dir

__all__ = ["ZoteroLibrary", "random_title", "schema_files"]

ZOTERO = "libraries/zotero"


def schema_files() -> Path:
    """The folder of Zotero's real schema files (skips when the samples are absent)."""
    from tests.book.conftest import fixture_books

    fixture_books()  # the same skip/fail rule as every sample
    return samples_dir() / ZOTERO


def _version(sql: str) -> int:
    return int(re.match(r"-- (\d+)", sql).group(1))


class ZoteroLibrary:
    """A Zotero data directory under construction (``zotero.sqlite``, ``storage/``)."""

    def __init__(self, data_dir: Path, *, upgraded: bool = False, seed: int = 7) -> None:
        self.data_dir = Path(data_dir)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.path = self.data_dir / "zotero.sqlite"
        self.rng = random.Random(seed)
        files = schema_files()
        self.schema = json.loads((files / "schema.json").read_text(encoding="utf-8"))
        self.db = sqlite3.connect(self.path)
        self.db.execute("PRAGMA page_size = 4096")
        sqls = {name: (files / f"{name}.sql").read_text(encoding="utf-8")
                for name in ("system", "userdata", "triggers")}
        for name in ("system", "userdata", "triggers"):
            self.db.executescript(sqls[name])
        if upgraded:
            self._older_names()
        self._update_global_schema()
        for name in ("system", "userdata", "triggers"):
            self.db.execute("REPLACE INTO version (schema, version) VALUES (?, ?)",
                            (name, _version(sqls[name])))
        self.db.execute("INSERT INTO libraries (libraryID, type, editable, filesEditable) "
                        "VALUES (1, 'user', 1, 1)")
        self.db.commit()
        self._keys: set[str] = set()

    # ------------------------------------------------------------------ the schema
    def _older_names(self) -> None:
        """Names an earlier Zotero had assigned, in another order (ids start elsewhere)."""
        fields = sorted({f["field"] for t in self.schema["itemTypes"] for f in t["fields"]})
        self.rng.shuffle(fields)
        types = [t["itemType"] for t in self.schema["itemTypes"]]
        self.rng.shuffle(types)
        creators = sorted({c["creatorType"] for t in self.schema["itemTypes"]
                           for c in t["creatorTypes"]})
        self.rng.shuffle(creators)
        for n, name in enumerate(fields[:40], start=1):
            self.db.execute("INSERT INTO fields VALUES (?, ?, NULL)", (n, name))
        for n, name in enumerate(types[:20], start=1):
            self.db.execute("INSERT INTO itemTypes VALUES (?, ?, NULL, 1)", (n, name))
        for n, name in enumerate(creators[:10], start=1):
            self.db.execute("INSERT INTO creatorTypes VALUES (?, ?)", (n, name))

    def _next(self, table: str, column: str) -> int:
        return (self.db.execute(f"SELECT MAX({column}) FROM {table}").fetchone()[0] or 0) + 1

    def _update_global_schema(self) -> None:
        db, data = self.db, self.schema
        pre_fields = dict(db.execute("SELECT fieldName, fieldID FROM fields"))
        pre_types = dict(db.execute("SELECT typeName, itemTypeID FROM itemTypes"))
        pre_creators = dict(db.execute("SELECT creatorType, creatorTypeID FROM creatorTypes"))
        post_fields: list[str] = []
        post_creators: list[str] = []
        for item_type in data["itemTypes"]:
            for f in item_type["fields"]:
                for name in (f["field"], f.get("baseField")):
                    if name and name not in post_fields:
                        post_fields.append(name)
            for c in item_type["creatorTypes"]:
                if c["creatorType"] not in post_creators:
                    post_creators.append(c["creatorType"])
        field_ids = {}
        for name in post_fields:
            if name in pre_fields:
                field_ids[name] = pre_fields[name]
            else:
                field_ids[name] = self._next("fields", "fieldID")
                db.execute("INSERT INTO fields VALUES (?, ?, NULL)", (field_ids[name], name))
        creator_ids = {}
        for name in post_creators:
            if name in pre_creators:
                creator_ids[name] = pre_creators[name]
            else:
                creator_ids[name] = self._next("creatorTypes", "creatorTypeID")
                db.execute("INSERT INTO creatorTypes VALUES (?, ?)", (creator_ids[name], name))
        db.execute("DELETE FROM itemTypeFields")
        db.execute("DELETE FROM baseFieldMappings")
        db.execute("DELETE FROM itemTypeCreatorTypes")
        for item_type in data["itemTypes"]:
            type_id = pre_types.get(item_type["itemType"])
            if type_id is None:
                type_id = self._next("itemTypes", "itemTypeID")
                db.execute("INSERT INTO itemTypes VALUES (?, ?, NULL, 1)",
                           (type_id, item_type["itemType"]))
            for index, f in enumerate(item_type["fields"]):
                db.execute("INSERT INTO itemTypeFields VALUES (?, ?, 0, ?)",
                           (type_id, field_ids[f["field"]], index))
                if f.get("baseField"):
                    db.execute("INSERT INTO baseFieldMappings VALUES (?, ?, ?)",
                               (type_id, field_ids[f["baseField"]], field_ids[f["field"]]))
            for c in item_type["creatorTypes"]:
                db.execute("INSERT INTO itemTypeCreatorTypes VALUES (?, ?, ?)",
                           (type_id, creator_ids[c["creatorType"]], 1 if c.get("primary")
                            else 0))
        stored = {k: v for k, v in data.items() if k != "itemTypes"}
        db.execute("REPLACE INTO settings VALUES ('globalSchema', 'data', ?)",
                   (zlib.compress(json.dumps(stored).encode("utf-8")),))
        db.execute("REPLACE INTO version (schema, version) VALUES ('globalSchema', ?)",
                   (data["version"],))
        # _updateCustomTables: the combined tables (no custom types here).
        for table in ("itemTypesCombined", "fieldsCombined", "itemTypeFieldsCombined",
                      "baseFieldMappingsCombined"):
            db.execute(f"DELETE FROM {table}")
        db.execute("INSERT INTO itemTypesCombined SELECT itemTypeID, typeName, display, 0 "
                   "FROM itemTypes")
        db.execute("INSERT INTO fieldsCombined SELECT fieldID, fieldName, NULL, fieldFormatID, "
                   "0 FROM fields")
        db.execute("INSERT INTO itemTypeFieldsCombined SELECT itemTypeID, fieldID, hide, "
                   "orderIndex FROM itemTypeFields")
        db.execute("INSERT INTO baseFieldMappingsCombined SELECT itemTypeID, baseFieldID, "
                   "fieldID FROM baseFieldMappings")

    # ------------------------------------------------------------------ by name
    def id_of(self, table: str, name: str) -> int:
        column, key = {"itemTypes": ("itemTypeID", "typeName"),
                       "fields": ("fieldID", "fieldName"),
                       "creatorTypes": ("creatorTypeID", "creatorType")}[table]
        row = self.db.execute(f"SELECT {column} FROM {table} WHERE {key} = ?",
                              (name,)).fetchone()
        if row is None:
            raise KeyError(f"{name!r} is not a {table} name of Zotero's schema")
        return row[0]

    def key(self) -> str:
        """A new item key as Zotero makes them (8 of 23456789ABCDEFGHIJKLMNPQRSTUVWXYZ)."""
        alphabet = "23456789ABCDEFGHIJKLMNPQRSTUVWXYZ"
        while True:
            k = "".join(self.rng.choice(alphabet) for _ in range(8))
            if k not in self._keys:
                self._keys.add(k)
                return k

    def group(self, group_id: int, name: str) -> int:
        """Add a group library; returns its libraryID."""
        lib = self._next("libraries", "libraryID")
        self.db.execute("INSERT INTO libraries (libraryID, type, editable, filesEditable) "
                        "VALUES (?, 'group', 1, 1)", (lib,))
        self.db.execute("INSERT INTO groups (groupID, libraryID, name, description, version) "
                        "VALUES (?, ?, ?, '', 0)", (group_id, lib, name))
        return lib

    def _value(self, value: str) -> int:
        row = self.db.execute("SELECT valueID FROM itemDataValues WHERE value = ?",
                              (value,)).fetchone()
        if row:
            return row[0]
        vid = self._next("itemDataValues", "valueID")
        self.db.execute("INSERT INTO itemDataValues (valueID, value) VALUES (?, ?)",
                        (vid, value))
        return vid

    def item(self, item_type: str, fields: dict[str, str] | None = None, *,
             creators: list[tuple[str, str, str]] = (), library: int = 1,
             modified: str = "2024-01-02 03:04:05", tags: list[str] = (),
             key: str | None = None) -> int:
        """Insert an item (fields and creators by name); returns its itemID.

        ``creators``: ``(first, last, creatorType)``; an empty ``first`` is a single-field
        name (``fieldMode`` 1, an institution).
        """
        item_id = self._next("items", "itemID")
        self.db.execute("INSERT INTO items (itemID, itemTypeID, dateAdded, dateModified, "
                        "clientDateModified, libraryID, key) VALUES (?, ?, ?, ?, ?, ?, ?)",
                        (item_id, self.id_of("itemTypes", item_type), modified, modified,
                         modified, library, key or self.key()))
        for name, value in (fields or {}).items():
            self.db.execute("INSERT INTO itemData VALUES (?, ?, ?)",
                            (item_id, self.id_of("fields", name), self._value(value)))
        for order, (first, last, role) in enumerate(creators):
            mode = 0 if first else 1
            row = self.db.execute("SELECT creatorID FROM creators WHERE firstName = ? AND "
                                  "lastName = ? AND fieldMode = ?", (first, last, mode)
                                  ).fetchone()
            cid = row[0] if row else self._next("creators", "creatorID")
            if not row:
                self.db.execute("INSERT INTO creators (creatorID, firstName, lastName, "
                                "fieldMode) VALUES (?, ?, ?, ?)", (cid, first, last, mode))
            self.db.execute("INSERT INTO itemCreators VALUES (?, ?, ?, ?)",
                            (item_id, cid, self.id_of("creatorTypes", role), order))
        for name in tags:
            row = self.db.execute("SELECT tagID FROM tags WHERE name = ?", (name,)).fetchone()
            tid = row[0] if row else self._next("tags", "tagID")
            if not row:
                self.db.execute("INSERT INTO tags (tagID, name) VALUES (?, ?)", (tid, name))
            self.db.execute("INSERT INTO itemTags VALUES (?, ?, 0)", (item_id, tid))
        return item_id

    def item_key(self, item_id: int) -> str:
        return self.db.execute("SELECT key FROM items WHERE itemID = ?", (item_id,)
                               ).fetchone()[0]

    def attach(self, parent: int | None, *, file: Path | None = None, link_mode: int = 0,
               content_type: str = "application/pdf", path: str | None = None,
               name: str | None = None, library: int = 1, title: str | None = None,
               modified: str = "2024-01-02 03:04:05") -> int:
        """An attachment item. Stored (mode 0/1): ``file`` copied into ``storage/<key>/``;
        linked (mode 2): ``path`` as given (absolute or ``attachments:…``); web link (3)."""
        att = self.item("attachment", {"title": title or name or "Attachment"},
                        library=library, modified=modified)
        key = self.item_key(att)
        if link_mode in (0, 1):
            name = name or (file.name if file else "missing.pdf")
            if file is not None:
                folder = self.data_dir / "storage" / key
                folder.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(file, folder / name)
            path = f"storage:{name}"
        self.db.execute("INSERT INTO itemAttachments (itemID, parentItemID, linkMode, "
                        "contentType, path) VALUES (?, ?, ?, ?, ?)",
                        (att, parent, link_mode, content_type, path))
        return att

    def note(self, parent: int | None, text: str, *, library: int = 1) -> int:
        note = self.item("note", library=library)
        self.db.execute("INSERT INTO itemNotes (itemID, parentItemID, note, title) "
                        "VALUES (?, ?, ?, ?)", (note, parent, f"<p>{text}</p>", text[:80]))
        return note

    def collection(self, name: str, *, parent: int | None = None, library: int = 1) -> int:
        cid = self._next("collections", "collectionID")
        self.db.execute("INSERT INTO collections (collectionID, collectionName, "
                        "parentCollectionID, libraryID, key) VALUES (?, ?, ?, ?, ?)",
                        (cid, name, parent, library, self.key()))
        return cid

    def file_into(self, collection: int, item_id: int) -> None:
        self.db.execute("INSERT INTO collectionItems (collectionID, itemID) VALUES (?, ?)",
                        (collection, item_id))

    def trash(self, item_id: int) -> None:
        self.db.execute("INSERT INTO deletedItems (itemID) VALUES (?)", (item_id,))

    def set_field(self, item_id: int, name: str, value: str,
                  modified: str = "2025-05-06 07:08:09") -> None:
        self.db.execute("REPLACE INTO itemData VALUES (?, ?, ?)",
                        (item_id, self.id_of("fields", name), self._value(value)))
        self.db.execute("UPDATE items SET dateModified = ? WHERE itemID = ?",
                        (modified, item_id))

    def commit(self) -> None:
        self.db.commit()

    def close(self) -> None:
        self.db.commit()
        self.db.close()


def random_title(rng: random.Random, words: int = 5) -> str:
    """A title of made-up words (for generated libraries)."""
    return " ".join("".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(3, 9)))
                    for _ in range(words)).capitalize()

