"""The contents: the EPUB 3 nav document or the EPUB 2 NCX, mapped onto the chapters.

The nav document (``<nav epub:type="toc">``) wins over the NCX when both exist; the NCX serves
EPUB 2 and a nav without entries. Neither: one entry per chapter from its first heading.
Entries pointing at ``#fragments`` get the fragment's offset in the unit.
"""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING, Any

from ....core.xmlsafe import XmlParseError
from ...model import SourceUnit, TocEntry
from .container import _resolve
from .document import _attr, _children, _descendants, _first, _local
from .package import _Item, _Package
from .text import _text_of

if TYPE_CHECKING:
    from .reader import _Reader

__all__ = [
    "contents",
]

def contents(
    reader: _Reader,
    package: _Package,
    units: list[SourceUnit],
    chapters: dict[str, int],
    manifest_paths: set[str],
    headings: list[str | None],
) -> list[TocEntry]:
    nav = next((i for i in package.manifest.values() if "nav" in i.properties), None)
    ncx = package.manifest.get(package.toc_id or "") or next(
        (i for i in package.manifest.values() if i.media_type == "application/x-dtbncx+xml"),
        None,
    )
    nav_links = _nav_links(reader, nav) if nav is not None else None
    ncx_links = _ncx_links(reader, ncx) if ncx is not None else None
    links = nav_links or ncx_links
    if nav_links and ncx_links and _link_key(nav_links) != _link_key(ncx_links):
        reader.warn("The nav document and the NCX disagree; the nav document was used.")
    elif nav is not None and not nav_links and ncx_links:
        reader.warn("The nav document has no usable contents; the NCX was used.")
    if not links:
        reader.warn("The EPUB has no usable contents; one entry per chapter heading was made.")
        return [
            TocEntry(title=heading, level=1, unit_index=i)
            for i, heading in enumerate(headings)
            if heading
        ]
    by_index = {unit.index: dict(unit.anchors) for unit in units}
    toc: list[TocEntry] = []
    for level, title, target, fragment in links:
        if target is None:
            reader.warn(f"Contents entry {title!r} links outside the book; skipped.")
            continue
        if target == "":
            reader.warn(f"Contents entry {title!r} has an empty link; skipped.")
            continue
        index = chapters.get(target)
        if index is None:
            where = "a file outside the spine" if target in manifest_paths else "a missing file"
            reader.warn(f"Contents entry {title!r} points at {where} ({target}); skipped.")
            continue
        offset = 0
        if fragment:
            found = by_index[index].get(fragment)
            if found is None:
                reader.warn(f"Contents entry {title!r}: no #{fragment} in {target}.")
            else:
                offset = found
        toc.append(TocEntry(title, level, index, offset, fragment or None))
    return toc


def _nav_links(reader: _Reader, item: _Item) -> list[_Link]:
    if not reader.container.has(item.path):
        reader.warn(f"The nav document {item.path} is missing from the archive.")
        return []
    try:
        root = reader.document(item.path, "nav document", content=True).root
    except XmlParseError:
        reader.warn(f"The nav document {item.path} is not readable.")
        return []
    navs = list(_descendants(root, "nav"))
    chosen = next(
        (
            n
            for n in navs
            if "toc" in (_attr(n, "epub:type") or "").split()
            or (n.get("role") or "") == "doc-toc"
        ),
        navs[0] if navs else None,
    )
    if chosen is None:
        return []
    top = _first(chosen, "ol")
    if top is None:
        top = _first(chosen, "ul")
    links: list[_Link] = []
    if top is not None:
        _walk_nav_list(top, 1, item.path, links)
    return links


def _ncx_links(reader: _Reader, item: _Item) -> list[_Link]:
    if not reader.container.has(item.path):
        reader.warn(f"The NCX {item.path} is missing from the archive.")
        return []
    try:
        root = reader.document(item.path, "NCX").root
    except XmlParseError:
        reader.warn(f"The NCX {item.path} is not readable.")
        return []
    nav_map = _first(root, "navmap")
    links: list[_Link] = []
    if nav_map is not None:
        _walk_nav_points(nav_map, 1, item.path, links)
    return links


_Link = tuple[int, str, str | None, str | None]
"""``(level, title, container path or "" (empty href) or None (external), fragment)``."""


def _link_key(links: list[_Link]) -> list[tuple[str | None, str | None]]:
    return [(target, fragment) for _level, _title, target, fragment in links]


def _link(level: int, title: str, href: str, doc_path: str) -> _Link:
    target, fragment = _resolve(posixpath.dirname(doc_path), href)
    if target == "" and fragment:
        target = doc_path  # "#frag" points into the contents document itself
    return level, title or "(untitled)", target, fragment


def _walk_nav_list(ol: Any, level: int, doc_path: str, links: list[_Link]) -> None:
    for li in _children(ol, "li"):
        # A <span> heads a group without a target: only its children are entries.
        label = next((c for c in li if _local(c) in ("a", "span")), None)
        if label is not None and _local(label) == "a":
            title = _text_of(label) or (label.get("title") or "").strip()
            links.append(_link(level, title, label.get("href") or "", doc_path))
        for sub in li:
            if _local(sub) in ("ol", "ul"):
                _walk_nav_list(sub, level + 1, doc_path, links)


def _walk_nav_points(parent: Any, level: int, doc_path: str, links: list[_Link]) -> None:
    for point in _children(parent, "navpoint"):
        label = _first(point, "navlabel")
        title = _text_of(label) if label is not None else ""
        content = next(_children(point, "content"), None)
        href = (content.get("src") if content is not None else None) or ""
        links.append(_link(level, title, href, doc_path))
        _walk_nav_points(point, level + 1, doc_path, links)
