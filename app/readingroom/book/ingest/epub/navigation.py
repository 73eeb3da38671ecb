"""The contents: the EPUB 3 nav document or the EPUB 2 NCX, mapped onto the chapters.

The nav document (``<nav epub:type="toc">``) wins over the NCX when both exist; the NCX serves
EPUB 2 and a nav without entries. Neither: one entry per chapter from its first heading.
Entries pointing at ``#fragments`` get the fragment's offset in the unit.
"""

from __future__ import annotations

import posixpath
import re
from typing import Any
from urllib.parse import unquote

from ....core.xmlsafe import XmlParseError
from ...model import SourceUnit, TocEntry
from .container import resolve_href
from .document import attribute, child_elements, descendant_elements, first_element, local_name
from .package import ManifestItem, Package
from .source import EpubSource
from .text import text_of

__all__ = [
    "CfiPoint",
    "cfi_points",
    "contents",
    "page_list",
    "page_targets",
    "with_subheadings",
]

_HEADING = "\x00heading"
"""The target of a nav entry without a link (a ``<span>`` heading a group)."""

def contents(
    reader: EpubSource,
    package: Package,
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
    placed: list[tuple[int, str, int, int, str | None] | None] = []
    for level, title, target, fragment in links:
        placed.append(None)
        if target == _HEADING:
            continue
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
        placed[-1] = (level, title, index, offset, fragment or None)
    toc: list[TocEntry] = []
    for i, (level, title, target, _fragment) in enumerate(links):
        entry = placed[i]
        if entry is not None:
            toc.append(TocEntry(entry[1], entry[0], entry[2], entry[3], entry[4]))
            continue
        if target != _HEADING:
            continue
        # A heading without a link starts where its first linked descendant does, so the
        # descendants keep it as their parent (records keep equal positions in this order).
        child = None
        for j in range(i + 1, len(links)):
            if links[j][0] <= level:
                break
            if placed[j] is not None:
                child = placed[j]
                break
        if child is None:
            reader.warn(f"Contents heading {title!r} has no linked entry under it; skipped.")
            continue
        toc.append(TocEntry(title, level, child[2], child[3]))
    return toc


def _nav_root(reader: EpubSource, item: ManifestItem) -> Any | None:
    if not reader.container.has(item.path):
        reader.warn(f"The nav document {item.path} is missing from the archive.")
        return None
    try:
        return reader.document(item.path, "nav document", content=True).root
    except XmlParseError:
        reader.warn(f"The nav document {item.path} is not readable.")
        return None


def _nav_links(reader: EpubSource, item: ManifestItem) -> list[_Link]:
    root = _nav_root(reader, item)
    if root is None:
        return []
    navs = list(descendant_elements(root, "nav"))
    chosen = next(
        (
            n
            for n in navs
            if "toc" in (attribute(n, "epub:type") or "").split()
            or (n.get("role") or "") == "doc-toc"
        ),
        navs[0] if navs else None,
    )
    if chosen is None:
        return []
    top = first_element(chosen, "ol")
    if top is None:
        top = first_element(chosen, "ul")
    links: list[_Link] = []
    if top is not None:
        _walk_nav_list(top, 1, item.path, links)
    return links


def _ncx_links(reader: EpubSource, item: ManifestItem) -> list[_Link]:
    if not reader.container.has(item.path):
        reader.warn(f"The NCX {item.path} is missing from the archive.")
        return []
    try:
        root = reader.document(item.path, "NCX").root
    except XmlParseError:
        reader.warn(f"The NCX {item.path} is not readable.")
        return []
    nav_map = first_element(root, "navmap")
    links: list[_Link] = []
    if nav_map is not None:
        _walk_nav_points(nav_map, 1, item.path, links)
    return links


_Link = tuple[int, str, str | None, str | None]
"""``(level, title, container path or "" (empty href) or None (external), fragment)``."""


def _link_key(links: list[_Link]) -> list[tuple[str | None, str | None]]:
    return [(target, fragment) for _level, _title, target, fragment in links]


def _link(level: int, title: str, href: str, doc_path: str) -> _Link:
    target, fragment = resolve_href(posixpath.dirname(doc_path), href)
    if target == "" and fragment:
        target = doc_path  # "#frag" points into the contents document itself
    return level, title or "(untitled)", target, fragment


def _walk_nav_list(ol: Any, level: int, doc_path: str, links: list[_Link]) -> None:
    for li in child_elements(ol, "li"):
        # A <span> heads a group without a target: only its children are entries.
        label = next((c for c in li if local_name(c) in ("a", "span")), None)
        if label is not None and local_name(label) == "a":
            title = text_of(label) or (label.get("title") or "").strip()
            links.append(_link(level, title, label.get("href") or "", doc_path))
        elif label is not None:
            title = text_of(label) or (label.get("title") or "").strip()
            if title:
                links.append((level, title, _HEADING, None))
        for sub in li:
            if local_name(sub) in ("ol", "ul"):
                _walk_nav_list(sub, level + 1, doc_path, links)


def _walk_nav_points(parent: Any, level: int, doc_path: str, links: list[_Link]) -> None:
    for point in child_elements(parent, "navpoint"):
        label = first_element(point, "navlabel")
        title = text_of(label) if label is not None else ""
        content = next(child_elements(point, "content"), None)
        href = (content.get("src") if content is not None else None) or ""
        links.append(_link(level, title, href, doc_path))
        _walk_nav_points(point, level + 1, doc_path, links)


_CFI = re.compile(r"epubcfi\((.*)\)$")
_CFI_STEP = re.compile(r"/(\d+)(?:\[([^\]]*)\])?")
_CFI_OFFSET = re.compile(r":(\d+)")

CfiPoint = tuple[tuple[tuple[int, str | None], ...], int]
"""A CFI inside one document: its steps (``(index, id assertion)``) and character offset."""


def page_targets(reader: EpubSource, package: Package) -> list[tuple[str, str, str]]:
    """The nav page list (or the NCX ``pageList``) as ``(label, href, document path)``."""
    nav = next((i for i in package.manifest.values() if "nav" in i.properties), None)
    targets: list[tuple[str, str, str]] = []
    if nav is not None:
        root = _nav_root(reader, nav)
        if root is not None:
            for element in descendant_elements(root, "nav"):
                if "page-list" in (attribute(element, "epub:type") or "").split() or (
                    element.get("role") or ""
                ) == "doc-pagelist":
                    for a in descendant_elements(element, "a"):
                        targets.append((text_of(a), a.get("href") or "", nav.path))
                    break
    if targets:
        return targets
    ncx = package.manifest.get(package.toc_id or "") or next(
        (i for i in package.manifest.values() if i.media_type == "application/x-dtbncx+xml"),
        None,
    )
    if ncx is None or not reader.container.has(ncx.path):
        return targets
    try:
        root = reader.document(ncx.path, "NCX").root
    except XmlParseError:
        return targets
    for target in descendant_elements(root, "pagetarget"):
        label = first_element(target, "navlabel")
        content = first_element(target, "content")
        if content is not None:
            title = text_of(label) if label is not None else ""
            targets.append((title, content.get("src") or "", ncx.path))
    return targets


def cfi_points(
    targets: list[tuple[str, str, str]], package: Package
) -> dict[str, list[tuple[CfiPoint, str]]]:
    """Page-list entries given as EPUB CFIs, by the container path of the chapter they name."""
    points: dict[str, list[tuple[CfiPoint, str]]] = {}
    for label, href, _doc in targets:
        found = _CFI.match(unquote(href.split("#", 1)[1])) if "#" in href else None
        if found is None or not label or "!" not in found.group(1):
            continue
        spine_part, doc_part = found.group(1).split("!", 1)
        spine_steps = _CFI_STEP.findall(spine_part)
        if len(spine_steps) != 2:
            continue
        position = int(spine_steps[1][0]) // 2 - 1
        if not 0 <= position < len(package.spine):
            continue
        item = package.manifest.get(package.spine[position][0])
        steps = []
        rest = doc_part
        while (step := _CFI_STEP.match(rest)) is not None:
            steps.append((int(step.group(1)), step.group(2).split(",")[0] or None
                          if step.group(2) else None))
            rest = rest[step.end():]
        offset = _CFI_OFFSET.match(rest)
        if item is None or not steps:
            continue
        point = (tuple(steps), int(offset.group(1)) if offset else 0)
        points.setdefault(item.path, []).append((point, label))
    return points


def page_list(
    reader: EpubSource,
    targets: list[tuple[str, str, str]],
    units: list[SourceUnit],
    chapters: dict[str, int],
    cfi_placed: int,
) -> dict[int, list[tuple[int, str]]]:
    """The page list's ``#fragment`` entries as unit → ``(offset, label)``.

    CFI entries were placed while their chapters were read (``cfi_placed`` of them); every
    entry placed neither way is counted in a warning.
    """
    marks: dict[int, list[tuple[int, str]]] = {}
    unplaced = 0
    cfis = 0
    for label, href, doc_path in targets:
        if "#epubcfi(" in href:
            cfis += 1
            continue
        target, fragment = resolve_href(posixpath.dirname(doc_path), href)
        index = chapters.get(target or "")
        offset = None
        if index is not None:
            offset = dict(units[index].anchors).get(fragment) if fragment else 0
        if index is None or offset is None or not label:
            unplaced += 1
            continue
        marks.setdefault(index, []).append((offset, label))
    unplaced += max(0, cfis - cfi_placed)
    if unplaced:
        reader.warn(f"{unplaced} page-list entries point at no place in a chapter; skipped.")
    return marks


_MD_HEADING = re.compile(r"^(#{1,6}) (.+)$")
_MIN_SECTION = 200
"""Letters and digits a subheading's own text needs to become a contents entry."""
_MD_MARKS = re.compile(r"\\(?=[\\`*_\[\]#>+\-.!|])|(?<!\\)[*_`]+")


def _title_key(text: str) -> str:
    return "".join(ch for ch in text.casefold() if ch.isalnum())


def with_subheadings(toc: list[TocEntry], units: list[SourceUnit]) -> list[TocEntry]:
    """The contents with the chapters' own subheadings that it does not list.

    A nav or NCX often lists only the chapters; their ``<h2>``/``<h3>`` sections are then
    invisible to heading paths and the heading boost. Each heading block of a chapter that is
    deeper than the heading a contents entry lands on (and not listed itself) becomes an entry
    under that one, its level the entry's plus the difference of heading levels; headings
    before the chapter's first entry, in contents pages, not deeper, or heading less than
    :data:`_MIN_SECTION` letters of text are left as they are.
    """
    by_unit: dict[int, list[TocEntry]] = {}
    for entry in toc:
        by_unit.setdefault(entry.unit_index, []).append(entry)
    added: dict[int, list[TocEntry]] = {}  # id(parent entry) → entries after it
    for u, entries in by_unit.items():
        unit = units[u] if 0 <= u < len(units) else None
        if unit is None or unit.role != "body" or not unit.blocks:
            continue
        heads = []
        for start, _end, md in unit.blocks:
            m = _MD_HEADING.match(md) if md.startswith("#") and "\n" not in md else None
            if m:
                title = " ".join(_MD_MARKS.sub("", m.group(2)).split())
                if title:
                    heads.append((start, len(m.group(1)), title))
        if not heads:
            continue
        ordered = sorted(entries, key=lambda e: e.char_offset)
        listed = {_title_key(e.title) for e in ordered}
        anchors_at: dict[int, str] = {}
        for fid, off in unit.anchors:
            anchors_at.setdefault(off, fid)
        # The heading each entry lands on: the first heading at or after its offset.
        landing: dict[int, tuple[int, int]] = {}  # heading start → (its level, entry level)
        owner: dict[int, TocEntry] = {}
        for e in ordered:
            at = next(((s, lv) for s, lv, _t in heads if s >= e.char_offset), None)
            if at is not None and at[0] not in landing:
                landing[at[0]] = (at[1], e.level)
                owner[at[0]] = e
        current: tuple[int, int, TocEntry] | None = None  # (heading level, entry level, entry)
        for n, (start, level, title) in enumerate(heads):
            if start in landing:
                current = (*landing[start], owner[start])
                continue
            if current is None or level <= current[0] or _title_key(title) in listed:
                continue
            end = heads[n + 1][0] if n + 1 < len(heads) else len(unit.text)
            if len(_title_key(unit.text[start:end])) - len(_title_key(title)) < _MIN_SECTION:
                continue  # a title page's byline, a caption set as a heading: no section
            entry = TocEntry(title, min(current[1] + level - current[0], 6), u, start,
                             anchors_at.get(start))
            added.setdefault(id(current[2]), []).append(entry)
    if not added:
        return toc
    out: list[TocEntry] = []
    for entry in toc:
        out.append(entry)
        out.extend(added.get(id(entry), ()))
    return out
