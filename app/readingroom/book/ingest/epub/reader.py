"""Reading an EPUB: the chapters in spine order, each a raw-text unit, with the contents."""

from __future__ import annotations

import codecs
import posixpath
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ....core.errors import Code, CoreError
from ....core.xmlsafe import MAX_DEPTH, XmlParseError
from ...model import SourceDocument, SourceUnit, TocEntry
from .container import MAX_CSS_BYTES, Container, corrupt_book, resolve_href, unsafe_book
from .document import (
    ParsedDocument,
    TooDeep,
    UnsafeDoctype,
    decode_document,
    descendant_elements,
    first_element,
    local_name,
    parse_document,
)
from .markdown import footnote_ref
from .navigation import (
    CfiPoint,
    cfi_points,
    contents,
    page_list,
    page_targets,
    with_subheadings,
)
from .package import Images, Package, check_encryption, read_package
from .text import HEADINGS, VERTICAL_CSS, BuiltText, TextBuilder, css_vertical, text_of

__all__ = [
    "read_epub",
]

def read_epub(path: Path, *, progress: Callable[[int, int], None] | None = None) -> SourceDocument:
    """Read an EPUB 2 or 3 into one unit per readable spine item, with its contents.

    Args:
        path: the EPUB file.
        progress: called with ``(spine items done, total)`` after each item.

    Raises:
        CoreError: UNSAFE_SOURCE (ZIP bomb, unsafe entry names, entity declarations),
            ENCRYPTED_SOURCE (DRM), CORRUPT_SOURCE (broken ZIP, no package document),
            EMPTY_SOURCE (no spine item with text).
    """
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        message = "The EPUB is not a readable ZIP archive."
        raise corrupt_book(path, message, type(exc).__name__) from None
    with archive:
        container = Container(archive, path)
        return _Reader(container, path, progress).read()


@dataclass
class _Chapter:
    built: BuiltText
    images: list[str]
    first_heading: str | None
    vertical: bool


class _Reader:
    def __init__(
        self, container: Container, path: Path, progress: Callable[[int, int], None] | None
    ) -> None:
        self.container = container
        self.path = path
        self.progress = progress
        self.warnings: list[str] = []
        self._css: dict[str, str] = {}
        self._spine_paths: set[str] = set()
        self._cfi: dict[str, list[tuple[CfiPoint, str]]] = {}
        self._cfi_placed = 0
        self._later_notes: dict[str, dict[str, str]] = {}
        self._read_paths: set[str] = set()
        self._notes: dict[int, tuple[frozenset[str], frozenset[str]]] = {}
        self._colophons: set[int] = set()

    def warn(self, message: str) -> None:
        if message not in self.warnings and len(self.warnings) < 200:
            self.warnings.append(message)

    # -- documents --

    def document(self, name: str, what: str, *, content: bool = False) -> ParsedDocument:
        try:
            parsed = parse_document(self.container.read(name), content=content)
        except UnsafeDoctype:
            raise unsafe_book(
                self.path,
                f"The EPUB's {what} declares entities in a DOCTYPE (refused: XXE risk).",
                reason="doctype",
                entry=name[:200],
            ) from None
        except TooDeep:
            raise CoreError(
                Code.UNSAFE_SOURCE,
                f"The EPUB's {what} {name[:120]!r} nests elements more than {MAX_DEPTH} levels "
                "deep; its text past that depth would be lost, so the book is refused.",
                details={
                    "path": str(self.path),
                    "reason": "depth",
                    "entry": name[:200],
                    "max_depth": MAX_DEPTH,
                },
                remediation=f"Repair the markup (e.g. in Sigil) so elements nest at most "
                f"{MAX_DEPTH} levels deep, or obtain the book from a trusted source.",
            ) from None
        if parsed.replaced:
            encoding = codecs.lookup(parsed.encoding).name.upper()
            sequences = (
                "1 byte sequence that is"
                if parsed.replaced == 1
                else f"{parsed.replaced:,} byte sequences that are"
            )
            self.warn(
                f"The EPUB's {what} {name} has {sequences} not valid {encoding}; each was read "
                "as U+FFFD."
            )
        return parsed

    def read(self) -> SourceDocument:
        check_encryption(self)
        package = read_package(self)
        manifest_paths = {item.path for item in package.manifest.values()}
        pages = page_targets(self, package)
        self._cfi = cfi_points(pages, package)
        self._spine_paths = {
            package.manifest[idref].path for idref, _ in package.spine if idref in package.manifest
        }
        units: list[SourceUnit] = []
        chapters: dict[str, int] = {}
        headings: list[str | None] = []
        total = len(package.spine)
        non_linear = 0
        listed: set[str] = set()
        repeats = 0
        for done, (idref, linear) in enumerate(package.spine, start=1):
            item = package.manifest.get(idref)
            # EPUB allows one itemref per manifest item; a repeat would add the same text again
            # (memory, duplicate search hits, every quote ambiguous), so each file is read once.
            if item is not None and item.path in listed:
                repeats += 1
                found = None
            else:
                if item is not None:
                    listed.add(item.path)
                found = self.spine_unit(idref, len(units), manifest_paths, package)
            if found is not None:
                unit, heading = found
                non_linear += not linear
                if unit.href is not None and unit.href not in chapters:
                    chapters[unit.href] = unit.index
                units.append(unit)
                headings.append(heading)
            if self.progress is not None:
                self.progress(done, total)
        if not any(unit.text.strip() for unit in units):
            raise CoreError(
                Code.EMPTY_SOURCE,
                "The EPUB has no chapter with text.",
                details={"path": str(self.path), "spine_items": total},
                remediation="Check the book opens in an e-book reader; an image-only EPUB "
                "cannot be registered.",
            )
        if repeats:
            many = f"{repeats:,} spine entries repeat"
            self.warn(
                f"{many if repeats > 1 else '1 spine entry repeats'} a chapter listed before; "
                "each chapter is read once."
            )
        if non_linear:
            self.warn(
                f"{non_linear} spine items are marked non-linear (notes, answers); they are "
                "kept in spine order."
            )
        units = _without_dangling_notes(units, self._notes)
        units = _with_resolved_links(units, chapters)
        toc = with_subheadings(
            contents(self, package, units, chapters, manifest_paths, headings), units)
        toc = _with_colophons(toc, units, self._colophons, headings)
        units = _with_page_list(
            units, page_list(self, pages, units, chapters, self._cfi_placed)
        )
        metadata = {"epub_version": package.version, "package_path": package.path}
        if package.direction:
            metadata["page_progression_direction"] = package.direction
        metadata.update(package.extra)
        return SourceDocument(
            format="epub",
            units=tuple(units),
            toc=tuple(toc),
            title=package.title,
            authors=package.creators,
            language=package.language,
            warnings=tuple(self.warnings),
            metadata=metadata,
        )

    def spine_unit(
        self, idref: str, index: int, manifest_paths: set[str], package: Package
    ) -> tuple[SourceUnit, str | None] | None:
        item = package.manifest.get(idref)
        if item is None:
            self.warn(f"Spine item {idref!r} is not in the manifest; skipped.")
            return None
        if not self.container.has(item.path):
            self.warn(f"Spine item {item.path} is missing from the archive; skipped.")
            return None
        if item.media_type.startswith("image/"):
            unit = SourceUnit(
                kind="epub_chapter",
                index=index,
                text="",
                label=idref,
                href=item.path,
                images=(item.path,),
                markdown=f"![]({item.path})",
                blocks=((0, 0, f"![]({item.path})"),),
            )
            return unit, None
        try:
            parsed = self.document(item.path, "chapter", content=True)
        except XmlParseError:
            self.warn(f"Chapter {item.path} is not readable XHTML; skipped.")
            return None
        if parsed.html_fallback:
            self.warn(f"Chapter {item.path} is not well-formed XHTML; read as HTML.")
        chapter = self.chapter(parsed.root, item.path, manifest_paths, index)
        if _is_colophon(parsed.root, item.path):
            self._colophons.add(index)
        built = chapter.built
        if built.notes_referenced or built.notes_defined:
            self._notes[index] = (built.notes_referenced, built.notes_defined)
        contents_page = (
            "nav" in item.properties
            or item.media_type == "application/x-dtbncx+xml"
            or built.contents
        )
        index_page = not contents_page and (built.index or _index_title(chapter.first_heading))
        links: tuple[tuple[int, int, int, int, str], ...] = ()
        if index_page:
            base = posixpath.dirname(item.path)
            links = tuple((s, e, -1, -1, _link_target(base, href)) for s, e, href in built.links)
        unit = SourceUnit(
            kind="epub_chapter",
            index=index,
            text=built.text,
            label=idref,
            href=item.path,
            writing_mode="vertical" if chapter.vertical else "horizontal",
            anchors=tuple(built.anchors.items()),
            images=tuple(chapter.images),
            markdown="\n\n".join(md for _s, _e, md in built.blocks),
            role="contents" if contents_page else "index" if index_page else "body",
            furniture=built.furniture,
            page_marks=built.page_marks,
            blocks=built.blocks,
            links=links,
            readings=built.readings,
        )
        return unit, chapter.first_heading

    def chapter(self, root: Any, path: str, manifest_paths: set[str], index: int) -> _Chapter:
        base = posixpath.dirname(path)
        body = first_element(root, "body")
        if body is None:
            body = root
        images = Images(self, base, manifest_paths)
        spine_paths = self._spine_paths
        links: dict[str, bool] = {}

        def is_chapter_link(href: str) -> bool:
            found = links.get(href)
            if found is None:
                target, _ = resolve_href(base, href)
                found = links[href] = bool(target) and target != path and target in spine_paths
            return found

        def note_target(href: str) -> tuple[str, str] | None:
            target, fragment = resolve_href(base, href)
            if not (target and fragment) or target == path or target not in spine_paths:
                return None
            return None if target in self._read_paths else (target, fragment)

        self._read_paths.add(path)
        builder = TextBuilder(images, note_prefix=f"{index + 1}.",
                               is_chapter_link=is_chapter_link, note_target=note_target,
                               later_notes=self._later_notes)
        builder.note_labels.update(self._later_notes.pop(path, {}))
        if path in self._cfi:
            builder.watch = _cfi_watch(root, self._cfi.pop(path))
            self._cfi_placed += sum(len(v) for v in builder.watch.values())
        builder.walk(body)
        built = builder.finish()
        heading = next(
            (t for el in body.iter() if local_name(el) in HEADINGS and (t := text_of(el))), None
        )
        return _Chapter(built, images.found, heading, self.vertical(root, body, base))

    def vertical(self, root: Any, body: Any, base: str) -> bool:
        """True when the chapter's CSS sets vertical writing on its root or body."""
        classes: set[str] = set()
        for el in (root, body):
            classes.update((el.get("class") or "").split())
            if VERTICAL_CSS.search(el.get("style") or ""):
                return True
        sheets = [(el.text or "") for el in descendant_elements(root, "style")]
        for link in descendant_elements(root, "link"):
            if "stylesheet" in (link.get("rel") or "").lower() and link.get("href"):
                target, _ = resolve_href(base, link.get("href"))
                if target and self.container.has(target):
                    sheets.append(self.stylesheet(target))
        return any(css_vertical(css, classes) for css in sheets if css)

    def stylesheet(self, name: str) -> str:
        if name not in self._css:
            try:
                self._css[name] = decode_document(self.container.read(name, MAX_CSS_BYTES))
            except CoreError:
                self._css[name] = ""
        return self._css[name]

    # -- contents --


_INDEX_TITLES = frozenset({
    "index", "general index", "subject index", "name index", "index of names",
    "index of subjects", "indexes", "register", "sachregister", "stichwortverzeichnis",
    "namensregister", "personenregister", "index des noms", "indice analitico",
    "índice analítico", "índice alfabético", "索引", "さくいん", "事項索引", "人名索引"})
"""Headings of a back-of-book index that has no EPUB index markup."""


def _index_title(heading: str | None) -> bool:
    return bool(heading) and " ".join(str(heading).casefold().split()) in _INDEX_TITLES


def _link_target(base: str, href: str) -> str:
    """An href as ``container/path#fragment`` (empty when it leaves the book)."""
    target, fragment = resolve_href(base, href)
    if target is None:
        return ""
    return f"{target}#{fragment}" if fragment else target


def _with_resolved_links(units: list[SourceUnit], chapters: dict[str, int]) -> list[SourceUnit]:
    """Index locators resolved to the unit and raw offset they point at (the fragment's
    anchor, or the chapter's start)."""
    out = units
    anchors: dict[int, dict[str, int]] = {}
    for unit in units:
        if not unit.links:
            continue
        resolved = []
        for start, end, _u, _o, target in unit.links:
            path, _, fragment = target.partition("#")
            u = chapters.get(path, -1) if path else -1
            offset = -1
            if u >= 0:
                if u not in anchors:
                    anchors[u] = dict(units[u].anchors)
                offset = anchors[u].get(fragment, -1) if fragment else 0
                if offset < 0:
                    u = -1
            resolved.append((start, end, u, offset, target))
        if out is units:
            out = list(units)
        out[unit.index] = replace(unit, links=tuple(resolved))
    return out


_COLOPHON_NAMES = ("colophon", "okuduke", "okuzuke")


def _is_colophon(root: Any, path: str) -> bool:
    """A colophon document: typed so on its body or a top-level section (``epub:type``
    colophon, DPUB-ARIA ``doc-colophon``), or named so (``colophon.xhtml``, 奥付 files)."""
    name = posixpath.basename(path).casefold()
    if any(word in name for word in _COLOPHON_NAMES):
        return True
    body = first_element(root, "body")
    candidates = [root] if body is None else [body, *[c for c in body if isinstance(c.tag, str)]]
    for element in candidates[:6]:
        types = (element.get("{http://www.idpf.org/2007/ops}type") or "").split()
        classes = (element.get("class") or "").casefold().split()
        if ("colophon" in types or element.get("role") == "doc-colophon"
                or "colophon" in classes or (element.get("id") or "").casefold() == "colophon"):
            return True
    return False


def _with_colophons(toc: list[TocEntry], units: list[SourceUnit], colophons: set[int],
                    headings: list[str | None]) -> list[TocEntry]:
    """A colophon in its own spine item that no contents entry points into gets an entry
    (its own heading, else "Colophon"), so it is a section and record of its own instead of
    the tail of the chapter before it."""
    listed = {entry.unit_index for entry in toc}
    out = list(toc)
    for u in sorted(colophons - listed):
        if not 0 <= u < len(units) or not units[u].text.strip():
            continue
        title = (headings[u] if u < len(headings) else None) or "Colophon"
        at = next((i for i, e in enumerate(out) if e.unit_index > u), len(out))
        out.insert(at, TocEntry(title=title, level=1, unit_index=u))
    return out


def _with_page_list(
    units: list[SourceUnit], marks: dict[int, list[tuple[int, str]]]
) -> list[SourceUnit]:
    """The units with the page list's marks merged into their page-break marks."""
    if not marks:
        return units
    out = list(units)
    for index, found in marks.items():
        unit = out[index]
        merged = sorted(set(unit.page_marks) | set(found))
        out[index] = replace(unit, page_marks=tuple(merged))
    return out


def _cfi_watch(
    root: Any, points: list[tuple[CfiPoint, str]]
) -> dict[Any, list[tuple[int, int, str]]]:
    """CFI points as ``element → [(text chunk, character offset, label)]`` for the walk.

    Chunk ``k`` is the text before the element's ``k``-th child element (0: its own text);
    ``-1`` is the element's start. An id assertion wins over a step index that disagrees.
    """
    watch: dict[Any, list[tuple[int, int, str]]] = {}
    ids: dict[str, Any] | None = None
    for (steps, offset), label in points:
        element = root
        chunk = -1
        for i, (step, ident) in enumerate(steps):
            if step % 2:
                if i == len(steps) - 1:
                    chunk = (step - 1) // 2
                else:
                    element = None
                break
            kids = [c for c in element if isinstance(c.tag, str)]
            k = step // 2 - 1
            found = kids[k] if 0 <= k < len(kids) else None
            if ident and (found is None or found.get("id") != ident):
                if ids is None:
                    ids = {
                        el.get("id"): el
                        for el in root.iter()
                        if isinstance(el.tag, str) and el.get("id")
                    }
                found = ids.get(ident, found)
            element = found
            if element is None:
                break
        if element is not None:
            watch.setdefault(element, []).append((chunk, offset if chunk >= 0 else 0, label))
    return watch


def _without_dangling_notes(
    units: list[SourceUnit], notes: dict[int, tuple[frozenset[str], frozenset[str]]]
) -> list[SourceUnit]:
    """References to notes no chapter defines are shown raised, not as broken footnotes."""
    defined = frozenset().union(*(d for _r, d in notes.values())) if notes else frozenset()
    out = units
    for index, (referenced, _defined) in notes.items():
        dangling = referenced - defined
        if not dangling:
            continue
        unit = out[index]
        blocks = []
        for start, end, markdown in unit.blocks:
            for label in dangling:
                markdown = markdown.replace(f"[^{label}]", footnote_ref(label, False))
            blocks.append((start, end, markdown))
        if out is units:
            out = list(units)
        out[index] = replace(unit, blocks=tuple(blocks),
                             markdown="\n\n".join(md for _s, _e, md in blocks))
    return out
