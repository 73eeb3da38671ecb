"""What a library search says about a book, and what its ``collection``/``tag`` filters read.

One accessor, :func:`book_reference`, turns a package manifest into the fields a library hit
names its book by (title, authors, year) and the fields the filters match (collections, tags).
Everything else in the library search goes through it, so library metadata that arrives later
(from a reference manager, say) is connected here and nowhere else.

Fields read from the manifest (all optional but ``title``):

- ``title`` (str), ``authors`` (list of str);
- ``year``: an int or a string starting with four digits; else ``issued`` (CSL-style
  ``{"date-parts": [[2019, ...]]}`` or a date string), first the library's (``reference.issued``,
  the CSL item ``add`` stored from Zotero or calibre), then the manifest's own; else
  ``metadata.date`` (an EPUB's ``dc:date``, e.g. ``2011-09-01``) — the library's date wins over
  the file's;
- ``collections`` and ``tags``: lists of strings; each also read under ``library`` and
  ``library.metadata`` (where ``add`` records what the reference manager said).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["book_reference", "label_key", "matches_label"]

_YEAR = re.compile(r"\s*(-?\d{4})(?!\d)")


def book_reference(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """The book as a library hit names it, and the labels the library filters match.

    Returns ``{"title", "authors", "year", "collections", "tags"}``: ``year`` is an int or
    None; the lists are empty when the manifest has none.
    """
    library = manifest.get("library")
    library = library if isinstance(library, Mapping) else {}
    metadata = library.get("metadata")
    metadata = metadata if isinstance(metadata, Mapping) else {}
    return {
        "title": str(manifest.get("title") or ""),
        "authors": _strings(manifest.get("authors")),
        "year": _year(manifest),
        "collections": _strings(manifest.get("collections"), library.get("collections"),
                                metadata.get("collections")),
        "tags": _strings(manifest.get("tags"), library.get("tags"), metadata.get("tags")),
    }


def label_key(label: str) -> str:
    """A collection or tag name compared loosely: NFKC, case-folded, spaces collapsed."""
    return " ".join(unicodedata.normalize("NFKC", label).casefold().split())


def matches_label(reference: Mapping[str, Any], field: str, wanted: str) -> bool:
    """Whether the book's ``field`` (``collections`` or ``tags``) has the label ``wanted``.

    A collection also matches by one of its path parts ("History/Rome" is in "Rome").
    """
    key = label_key(wanted)
    for label in reference.get(field) or ():
        have = label_key(str(label))
        if have == key or (field == "collections" and key in
                           (label_key(p) for p in re.split(r"[/\\>]", str(label)))):
            return True
    return False


def _strings(*values: Any) -> list[str]:
    out: list[str] = []
    for value in values:
        items: Iterable[Any] = value if isinstance(value, list | tuple) else ()
        for item in items:
            text = (item.get("name") if isinstance(item, Mapping) else item)
            if isinstance(text, str) and text.strip() and text.strip() not in out:
                out.append(text.strip())
    return out


def _year(manifest: Mapping[str, Any]) -> int | None:
    year = manifest.get("year")
    if isinstance(year, int) and not isinstance(year, bool):
        return year
    if isinstance(year, str) and (found := _YEAR.match(year)):
        return int(found.group(1))
    texts: list[Any] = []
    reference = manifest.get("reference")
    for issued in ((reference.get("issued") if isinstance(reference, Mapping) else None),
                   manifest.get("issued")):
        if isinstance(issued, Mapping):
            parts = issued.get("date-parts")
            if isinstance(parts, list) and parts and isinstance(parts[0], list) and parts[0]:
                first = parts[0][0]
                if isinstance(first, int) and not isinstance(first, bool):
                    return first
                issued = str(first)
            else:
                issued = issued.get("raw") or issued.get("literal")
        texts.append(issued)
    metadata = manifest.get("metadata")
    texts.append(metadata.get("date") if isinstance(metadata, Mapping) else None)
    for text in texts:
        if isinstance(text, str) and (found := _YEAR.match(text)):
            return int(found.group(1))
    return None
