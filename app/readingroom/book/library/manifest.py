"""What a package records of its library, and the references shown from it.

``manifest.library`` (books imported by ``add``): ``origin`` — the source's kind, key and
identifiers when the version was built — and ``metadata``, the library's own description of
the item (item type, title, creators with roles, date and year, publisher, place, DOI, ISBN,
URL, language, abstract, tags, collections, the Zotero item and library or the calibre book).
``manifest.reference`` is the full CSL-JSON item; every locator, search hit, ``status`` and the
Book Skill show its compact form (:func:`.citation.reference_for`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .citation import citation_line, passage_locator, reference_for, with_locator

__all__ = ["apply_library", "hit_reference", "library_summary", "locator_reference",
           "origin_summary"]


def apply_library(manifest: dict[str, Any], library: Mapping[str, Any] | None, *,
                  title_given: bool) -> None:
    """Put a library's origin, metadata and reference into a manifest being built.

    The library's title and authors become the book's (unless a title was given), and its
    language when the file named none.
    """
    if not library:
        manifest.pop("library", None)
        manifest.pop("reference", None)
        return
    record = {k: library[k] for k in ("origin", "metadata") if k in library}
    manifest["library"] = record
    metadata = library.get("metadata") or {}
    if metadata.get("title") and not title_given:
        manifest["title"] = str(metadata["title"])
    if metadata.get("authors"):
        manifest["authors"] = [str(a) for a in metadata["authors"]]
    language = metadata.get("language") or (metadata.get("languages") or [None])[0]
    if language and not manifest.get("language"):
        manifest["language"] = str(language)
    reference = library.get("reference")
    if isinstance(reference, Mapping) and reference:
        full = dict(reference)
        if title_given:
            full["title"] = manifest["title"]
        full["id"] = manifest["id"]
        manifest["reference"] = full
    else:
        manifest.pop("reference", None)


def locator_reference(manifest: Mapping[str, Any], locator: Mapping[str, Any]
                      ) -> dict[str, Any]:
    """The compact reference with the passage of a locator (CSL ``label`` and ``locator``)."""
    where = passage_locator(locator)
    ref = reference_for(manifest)
    return with_locator(ref, *(where or (None, None)))


def hit_reference(manifest: Mapping[str, Any], hit: Mapping[str, Any]) -> dict[str, Any]:
    """``reference`` and ``citation`` for a search hit: the record's printed pages (PDF, EPUB
    page list) or its chapter."""
    ref = reference_for(manifest)
    labels = [str(x) for x in hit.get("page_labels") or [] if x not in (None, "")]
    fmt = (manifest.get("source") or {}).get("format")
    where: tuple[str, str] | None = None
    if labels:
        where = ("page", labels[0] if labels[0] == labels[-1] else f"{labels[0]}–{labels[-1]}")
    elif fmt == "pdf" and isinstance(hit.get("unit_start"), int):
        a, b = hit["unit_start"] + 1, int(hit.get("unit_end") or hit["unit_start"]) + 1
        where = ("page", str(a) if a == b else f"{a}–{b}")
    elif fmt == "epub" and isinstance(hit.get("unit_start"), int):
        where = ("chapter", str(hit["unit_start"] + 1))
    located = with_locator(ref, *(where or (None, None)))
    return {"reference": located, "citation": citation_line(located)}


def origin_summary(manifest: Mapping[str, Any], sidecar: Mapping[str, Any] | None
                   ) -> dict[str, Any]:
    """Where a book came from, for ``list``: kind and path (and the library's key)."""
    raw = manifest.get("library")
    library: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    origin = dict(sidecar or library.get("origin") or {})
    if not origin:
        return {"kind": "init", "file": (manifest.get("source") or {}).get("file_name")}
    out = {k: origin[k] for k in ("kind", "path", "key", "item_key", "attachment_key",
                                 "book_id", "library", "data_dir", "library_dir")
           if origin.get(k) not in (None, "")}
    return out


def library_summary(manifest: Mapping[str, Any], sidecar: Mapping[str, Any] | None
                    ) -> dict[str, Any] | None:
    """What ``status`` shows of a book's library: origin (as last seen) and metadata."""
    library = manifest.get("library")
    if not isinstance(library, Mapping):
        return None
    out: dict[str, Any] = {"origin": dict(sidecar or library.get("origin") or {})}
    metadata = library.get("metadata")
    if isinstance(metadata, Mapping):
        out["metadata"] = {k: v for k, v in metadata.items() if k != "fields"}
    return out
