"""An EPUB 2/3 → one raw-text unit per spine item, with the contents mapped onto them.

A tolerant, hardened reader on :mod:`zipfile` and :func:`~readingroom.core.xmlsafe.parse_xml`
(ebooklib enforces no limits and fails on a missing manifest item).

Hardening, before anything is read
    * At most 10,000 entries, 512 MiB uncompressed in total, and no entry over 1 MiB that
      inflates more than 200:1; otherwise UNSAFE_SOURCE. Reads are capped as well.
    * An entry name that is absolute, has a drive letter or a backslash, or a ``..`` segment
      refuses the whole book (UNSAFE_SOURCE): the OCF spec forbids them and only a crafted
      archive has them. Nothing is ever extracted to disk.
    * Hrefs inside the book (manifest, spine, links, images) are resolved against their
      document's folder; one that climbs out of the container is ignored with a warning.
    * Every XML document goes through ``parse_xml`` (no entities, no DTD, no network). EPUB 2
      and XHTML 1.1 files normally start with ``<!DOCTYPE html PUBLIC ...>`` or the NCX
      DOCTYPE, which ``parse_xml`` refuses, so this module strips a prolog DOCTYPE that has
      *no* internal subset before parsing (it declares nothing this reader uses) and refuses
      one *with* an internal subset ``[ ... ]`` (entity declarations: XXE, billion laughs) as
      UNSAFE_SOURCE. HTML named entities (``&nbsp;``) that the stripped DTD would have
      defined are rewritten as character references. A content document that is still not
      well-formed XML is read with lxml's HTML parser (no network, no DTD), with a warning.
    * ``META-INF/encryption.xml`` that encrypts anything beyond font obfuscation means DRM:
      ENCRYPTED_SOURCE.

Text
    Block elements end lines, ``<br>`` is a newline, HTML whitespace collapses to one space (a
    source line break between two CJK characters to nothing), ``<script>``/``<style>`` are
    skipped. Ruby keeps its base text and drops ``<rt>``/``<rp>``: the base is what a reader
    quotes and searches for, and interleaved readings would break every CJK phrase in two.
    Every ``id`` (and ``<a name>``) becomes an anchor at the offset of the next character.

Contents
    The EPUB 3 nav document (``<nav epub:type="toc">``) wins over the NCX when both exist; the
    NCX serves EPUB 2 and a nav without entries. Neither: one entry per chapter from its first
    heading. Entries pointing at ``#fragments`` get the fragment's offset in the unit.
"""

from __future__ import annotations

import codecs
import html.entities
import posixpath
import re
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from lxml import etree

from ...core.errors import Code, CoreError
from ...core.xmlsafe import UnsafeXmlError, XmlParseError, parse_xml
from ..model import SourceDocument, SourceUnit, TocEntry
from ..text import is_cjk

__all__ = [
    "MAX_ENTRIES",
    "MAX_ENTRY_RATIO",
    "MAX_TOTAL_BYTES",
    "read_epub",
]

MAX_ENTRIES = 10_000
MAX_TOTAL_BYTES = 512 * 1024 * 1024
MAX_ENTRY_RATIO = 200
RATIO_FLOOR_BYTES = 1024 * 1024
"""Entries smaller than this may compress as well as they like (a run of blanks)."""
MAX_DOCUMENT_BYTES = 64 * 1024 * 1024
MAX_CSS_BYTES = 2 * 1024 * 1024

_FONT_OBFUSCATION = frozenset(
    {"http://www.idpf.org/2008/embedding", "http://ns.adobe.com/pdf/enc#RC"}
)
_OPS = "http://www.idpf.org/2007/ops"
_XLINK = "http://www.w3.org/1999/xlink"
_XHTML_TYPES = frozenset({"application/xhtml+xml", "text/html", "application/xml", "text/xml"})

_XML_DECL = re.compile(r"\A\s*<\?xml[^>]*\?>")
_ENCODING_DECL = re.compile(rb"""^\s*<\?xml[^>]*encoding\s*=\s*["']([A-Za-z0-9._-]+)["']""")
_PROLOG_ITEM = re.compile(r"\s+|<\?.*?\?>|<!--.*?-->", re.DOTALL)
_DOCTYPE = re.compile(
    r"""<!DOCTYPE\s+[^\s\[>]+(?:\s+(?:PUBLIC\s+(?:"[^"]*"|'[^']*')\s*(?:"[^"]*"|'[^']*')?"""
    r"""|SYSTEM\s+(?:"[^"]*"|'[^']*')))?\s*(\[)?""",
    re.IGNORECASE,
)
_ENTITY_REF = re.compile(r"&([A-Za-z][A-Za-z0-9]{0,31});")
_XML_ENTITIES = frozenset({"amp", "lt", "gt", "quot", "apos"})
_DRIVE = re.compile(r"^[A-Za-z]:")
_HTML_SPACE = re.compile(r"[ \t\n\r\f]+")
_TOKENS = re.compile(r"[ \t\n\r\f]+|[^ \t\n\r\f]+")

_SKIP = frozenset({"script", "style", "head", "title", "template", "noscript", "rt", "rp"})
_BLOCKS = frozenset(
    {
        "address", "article", "aside", "blockquote", "body", "caption", "dd", "details", "dialog",
        "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2",
        "h3", "h4", "h5", "h6", "header", "hgroup", "hr", "html", "legend", "li", "main", "nav",
        "ol", "p", "pre", "section", "summary", "table", "tbody", "tfoot", "thead", "tr", "ul",
    }
)  # fmt: skip
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_CELLS = frozenset({"td", "th"})


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
        raise _corrupt(path, message, type(exc).__name__) from None
    with archive:
        container = _Container(archive, path)
        return _Reader(container, path, progress).read()


def _corrupt(path: Path, message: str, reason: str) -> CoreError:
    return CoreError(
        Code.CORRUPT_SOURCE,
        message,
        details={"path": str(path), "reason": reason},
        remediation="Re-download or re-export the EPUB (e.g. with Calibre) and register it again.",
    )


def _unsafe(path: Path, message: str, **details: Any) -> CoreError:
    return CoreError(
        Code.UNSAFE_SOURCE,
        message,
        details={"path": str(path), **details},
        remediation="Do not open this file; obtain the book from a trusted source.",
    )


# --- the container ---------------------------------------------------------------------------


class _Container:
    """The ZIP archive, checked against the limits, read only through capped reads."""

    def __init__(self, archive: zipfile.ZipFile, path: Path) -> None:
        self.archive = archive
        self.path = path
        infos = archive.infolist()
        if len(infos) > MAX_ENTRIES:
            raise _unsafe(
                path,
                f"The EPUB has more than {MAX_ENTRIES:,} entries (a ZIP bomb?).",
                reason="entries",
                entries=len(infos),
            )
        total = 0
        self.entries: dict[str, zipfile.ZipInfo] = {}
        for info in infos:
            name = info.filename
            if not _safe_entry_name(name):
                raise _unsafe(
                    path,
                    "The EPUB has an entry whose path leaves the container.",
                    reason="path",
                    entry=name[:200],
                )
            total += info.file_size
            if info.file_size > RATIO_FLOOR_BYTES and info.file_size > MAX_ENTRY_RATIO * max(
                info.compress_size, 1
            ):
                raise _unsafe(
                    path,
                    f"An EPUB entry inflates more than {MAX_ENTRY_RATIO}:1 (a ZIP bomb).",
                    reason="ratio",
                    entry=name[:200],
                )
            if not info.is_dir():
                self.entries[name] = info
        if total > MAX_TOTAL_BYTES:
            raise _unsafe(
                path,
                f"The EPUB inflates to more than {MAX_TOTAL_BYTES // 2**20} MiB (a ZIP bomb?).",
                reason="size",
                size=total,
            )

    def has(self, name: str) -> bool:
        return name in self.entries

    def read(self, name: str, limit: int = MAX_DOCUMENT_BYTES) -> bytes:
        """An entry's bytes, never more than ``limit``."""
        info = self.entries[name]
        if info.flag_bits & 0x1:
            raise CoreError(
                Code.ENCRYPTED_SOURCE,
                "The EPUB's ZIP entries are password-protected.",
                details={"path": str(self.path), "entry": name[:200]},
                remediation="Register a copy without encryption.",
            )
        if info.file_size > limit:
            raise _unsafe(
                self.path,
                "An EPUB entry is larger than this reader accepts.",
                reason="entry_size",
                entry=name[:200],
                size=info.file_size,
            )
        try:
            with self.archive.open(info) as handle:
                data = handle.read(limit + 1)
        except (zipfile.BadZipFile, zlib.error, OSError, EOFError, NotImplementedError) as exc:
            raise _corrupt(
                self.path, "An entry of the EPUB's ZIP archive is damaged.", type(exc).__name__
            ) from None
        if len(data) > limit:
            raise _unsafe(self.path, "An EPUB entry inflates past its limit.", reason="inflate")
        return data


def _safe_entry_name(name: str) -> bool:
    if not name or name.startswith("/") or "\\" in name or "\0" in name or _DRIVE.match(name):
        return False
    return ".." not in name.split("/")


def _resolve(base_dir: str, href: str) -> tuple[str | None, str | None]:
    """``(container path, fragment)`` for an href relative to ``base_dir``.

    The path is None for external links, ``data:`` URIs and paths that leave the container.
    """
    parts = urlsplit(href.strip())
    fragment = unquote(parts.fragment) if parts.fragment else None
    if parts.scheme or parts.netloc:
        return None, fragment
    raw = unquote(parts.path)
    if not raw:
        return "", fragment
    if raw.startswith("/") or "\\" in raw or _DRIVE.match(raw):
        return None, fragment
    joined = posixpath.normpath(posixpath.join(base_dir, raw))
    if joined == ".." or joined.startswith("../") or joined.startswith("/"):
        return None, fragment
    return joined, fragment


# --- XML -------------------------------------------------------------------------------------


def _decode(data: bytes) -> str:
    for bom, codec in (
        (codecs.BOM_UTF8, "utf-8"),
        (codecs.BOM_UTF32_LE, "utf-32-le"),
        (codecs.BOM_UTF32_BE, "utf-32-be"),
        (codecs.BOM_UTF16_LE, "utf-16-le"),
        (codecs.BOM_UTF16_BE, "utf-16-be"),
    ):
        if data.startswith(bom):
            return data[len(bom) :].decode(codec, errors="replace")
    if data[:4] == b"<\x00?\x00":
        return data.decode("utf-16-le", errors="replace")
    if data[:4] == b"\x00<\x00?":
        return data.decode("utf-16-be", errors="replace")
    declared = _ENCODING_DECL.match(data[:256])
    codec = declared.group(1).decode("ascii") if declared else "utf-8"
    try:
        return data.decode(codec, errors="replace")
    except LookupError:
        return data.decode("utf-8", errors="replace")


class _UnsafeDoctype(Exception):
    """A DOCTYPE with an internal subset: entity declarations."""


def _without_doctype(text: str) -> str:
    """``text`` without its XML declaration and without a prolog DOCTYPE that declares nothing.

    Raises:
        _UnsafeDoctype: the DOCTYPE has an internal subset, or cannot be read.
    """
    text = _XML_DECL.sub("", text, count=1)
    pos = 0
    while True:
        match = _PROLOG_ITEM.match(text, pos)
        if match is None or match.end() == pos:
            break
        pos = match.end()
    if text[pos : pos + 9].upper() != "<!DOCTYPE":
        return text
    match = _DOCTYPE.match(text, pos)
    if match is None or match.group(1):
        raise _UnsafeDoctype
    rest = text[match.end() :]
    close = rest.lstrip()
    if not close.startswith(">"):
        raise _UnsafeDoctype
    return text[:pos] + close[1:]


def _entity_to_reference(match: re.Match[str]) -> str:
    name = match.group(1)
    if name in _XML_ENTITIES:
        return match.group(0)
    chars = html.entities.html5.get(name + ";")
    if chars is None:
        return match.group(0)
    return "".join(f"&#{ord(c)};" for c in chars)


@dataclass
class _Parsed:
    root: Any
    html_fallback: bool = False


def _parse(data: bytes, *, content: bool) -> _Parsed:
    """Parse an EPUB document (see the module docstring for the DOCTYPE rule).

    Raises:
        _UnsafeDoctype: entity declarations or another refused construct.
        XmlParseError: not well-formed (and, for content, not even HTML).
    """
    text = _without_doctype(_decode(data))
    if "&" in text:
        text = _ENTITY_REF.sub(_entity_to_reference, text)
    try:
        # UTF-8 may be longer than the bytes read (UTF-16 CJK), hence the headroom.
        return _Parsed(parse_xml(text, max_bytes=2 * MAX_DOCUMENT_BYTES))
    except UnsafeXmlError:
        raise _UnsafeDoctype from None
    except XmlParseError:
        if not content:
            raise
    parser = etree.HTMLParser(
        encoding="utf-8", no_network=True, remove_pis=True, default_doctype=False
    )
    root = etree.fromstring(text.encode("utf-8"), parser)
    if root is None:
        raise XmlParseError("The document is empty.", details={"reason": "empty"})
    return _Parsed(root, html_fallback=True)


def _local(element: Any) -> str:
    tag = element.tag
    if not isinstance(tag, str):
        return ""
    return tag.rsplit("}", 1)[-1].lower()


def _children(element: Any, name: str) -> Iterator[Any]:
    return (child for child in element if _local(child) == name)


def _descendants(element: Any, name: str) -> Iterator[Any]:
    return (el for el in element.iter() if _local(el) == name)


def _first(element: Any, name: str) -> Any | None:
    return next(_descendants(element, name), None)


def _text_of(element: Any) -> str:
    """The element's text without ruby readings, whitespace collapsed (for titles)."""
    return _collapse("".join(_text_nodes(element)))


def _collapse(text: str) -> str:
    """HTML whitespace (not U+3000, not no-break space) collapsed to single spaces."""
    return _HTML_SPACE.sub(" ", text).strip(" ")


def _text_nodes(element: Any) -> Iterator[str]:
    """Text under ``element`` without ruby readings, scripts or styles."""
    if element.text:
        yield element.text
    for child in element:
        if _local(child) not in _SKIP:
            yield from _text_nodes(child)
        if child.tail:
            yield child.tail


def _attr(element: Any, name: str) -> str | None:
    """An attribute by local name, namespaced or not (``epub:type``, ``xlink:href``)."""
    value = element.get(name)
    if value is not None:
        return value
    for key, val in element.attrib.items():
        if isinstance(key, str) and key.rsplit("}", 1)[-1] == name.rsplit(":", 1)[-1]:
            return val
    return None


# --- the package -----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Item:
    id: str
    path: str
    media_type: str
    properties: frozenset[str]


@dataclass
class _Package:
    path: str
    version: str
    title: str | None
    creators: tuple[str, ...]
    language: str | None
    manifest: dict[str, _Item]
    spine: list[tuple[str, bool]]
    toc_id: str | None
    direction: str | None
    extra: dict[str, str] = field(default_factory=dict)


@dataclass
class _Chapter:
    text: str
    anchors: dict[str, int]
    images: list[str]
    markdown: str
    first_heading: str | None
    vertical: bool


class _Reader:
    def __init__(
        self, container: _Container, path: Path, progress: Callable[[int, int], None] | None
    ) -> None:
        self.container = container
        self.path = path
        self.progress = progress
        self.warnings: list[str] = []
        self._css: dict[str, str] = {}

    def warn(self, message: str) -> None:
        if message not in self.warnings and len(self.warnings) < 200:
            self.warnings.append(message)

    # -- documents --

    def document(self, name: str, what: str, *, content: bool = False) -> _Parsed:
        try:
            return _parse(self.container.read(name), content=content)
        except _UnsafeDoctype:
            raise _unsafe(
                self.path,
                f"The EPUB's {what} declares entities in a DOCTYPE (refused: XXE risk).",
                reason="doctype",
                entry=name[:200],
            ) from None

    def read(self) -> SourceDocument:
        self.check_encryption()
        package = self.package()
        manifest_paths = {item.path for item in package.manifest.values()}
        units: list[SourceUnit] = []
        chapters: dict[str, int] = {}
        headings: list[str | None] = []
        total = len(package.spine)
        non_linear = 0
        for done, (idref, linear) in enumerate(package.spine, start=1):
            unit = self.spine_unit(idref, len(units), manifest_paths, package)
            if unit is not None:
                unit, heading = unit
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
        if non_linear:
            self.warn(
                f"{non_linear} spine items are marked non-linear (notes, answers); they are "
                "kept in spine order."
            )
        toc = self.contents(package, units, chapters, manifest_paths, headings)
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

    def check_encryption(self) -> None:
        name = "META-INF/encryption.xml"
        if not self.container.has(name):
            return
        try:
            root = self.document(name, "encryption manifest").root
        except XmlParseError:
            raise self.encrypted("an unreadable encryption manifest") from None
        for data in _descendants(root, "encrypteddata"):
            method = _first(data, "encryptionmethod")
            algorithm = (method.get("Algorithm") if method is not None else "") or ""
            reference = _first(data, "cipherreference")
            target = (reference.get("URI") if reference is not None else "") or ""
            if algorithm not in _FONT_OBFUSCATION or _is_content_path(target):
                raise self.encrypted("encrypted content (DRM)")

    def encrypted(self, what: str) -> CoreError:
        return CoreError(
            Code.ENCRYPTED_SOURCE,
            f"The EPUB has {what} and cannot be read.",
            details={"path": str(self.path)},
            remediation="Register a DRM-free copy of the book (many shops offer one).",
        )

    def package(self) -> _Package:
        opf = self.rootfile()
        try:
            root = self.document(opf, "package document").root
        except XmlParseError:
            raise _corrupt(
                self.path, "The EPUB's package document (OPF) is not well-formed.", "opf"
            ) from None
        base = posixpath.dirname(opf)
        metadata = _first(root, "metadata")
        title = creators = language = None
        extra: dict[str, str] = {}
        if metadata is not None:
            titles = [_text_of(el) for el in _children(metadata, "title")]
            title = next((t for t in titles if t), None)
            creators = tuple(t for el in _children(metadata, "creator") if (t := _text_of(el)))
            language = next(
                (t for el in _children(metadata, "language") if (t := _text_of(el))), None
            )
            for key in ("publisher", "identifier", "date"):
                value = next((t for el in _children(metadata, key) if (t := _text_of(el))), None)
                if value:
                    extra[key] = value[:200]
        manifest: dict[str, _Item] = {}
        escaped = 0
        manifest_el = _first(root, "manifest")
        for el in _children(manifest_el, "item") if manifest_el is not None else ():
            item_id, href = el.get("id"), el.get("href")
            if not item_id or href is None:
                continue
            target, _fragment = _resolve(base, href)
            if not target:
                escaped += 1
                continue
            manifest[item_id] = _Item(
                item_id,
                target,
                (el.get("media-type") or "").strip().lower(),
                frozenset((el.get("properties") or "").split()),
            )
        if escaped:
            self.warn(f"{escaped} manifest items point outside the container; ignored.")
        spine_el = _first(root, "spine")
        spine: list[tuple[str, bool]] = []
        if spine_el is not None:
            for ref in _children(spine_el, "itemref"):
                if ref.get("idref"):
                    spine.append((ref.get("idref"), (ref.get("linear") or "yes") != "no"))
        if not spine:
            raise CoreError(
                Code.EMPTY_SOURCE,
                "The EPUB's spine lists no chapters.",
                details={"path": str(self.path)},
                remediation="Check the book opens in an e-book reader.",
            )
        direction = (spine_el.get("page-progression-direction") or "").strip() or None
        return _Package(
            path=opf,
            version=(root.get("version") or "").strip() or "unknown",
            title=title,
            creators=creators or (),
            language=language,
            manifest=manifest,
            spine=spine,
            toc_id=spine_el.get("toc"),
            direction=direction,
            extra=extra,
        )

    def rootfile(self) -> str:
        name = "META-INF/container.xml"
        if self.container.has(name):
            try:
                root = self.document(name, "container file").root
            except XmlParseError:
                root = None
            for el in _descendants(root, "rootfile") if root is not None else ():
                full_path = (el.get("full-path") or "").strip()
                media = (el.get("media-type") or "").strip()
                target, _ = _resolve("", full_path)
                if (
                    target
                    and self.container.has(target)
                    and media
                    in (
                        "",
                        "application/oebps-package+xml",
                    )
                ):
                    return target
        candidates = sorted(n for n in self.container.entries if n.lower().endswith(".opf"))
        if not candidates:
            raise _corrupt(self.path, "The EPUB has no package document (OPF).", "no_opf")
        self.warn(f"META-INF/container.xml does not name a package; using {candidates[0]}.")
        return candidates[0]

    # -- chapters --

    def spine_unit(
        self, idref: str, index: int, manifest_paths: set[str], package: _Package
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
            )
            return unit, None
        try:
            parsed = self.document(item.path, "chapter", content=True)
        except XmlParseError:
            self.warn(f"Chapter {item.path} is not readable XHTML; skipped.")
            return None
        if parsed.html_fallback:
            self.warn(f"Chapter {item.path} is not well-formed XHTML; read as HTML.")
        chapter = self.chapter(parsed.root, item.path, manifest_paths)
        unit = SourceUnit(
            kind="epub_chapter",
            index=index,
            text=chapter.text,
            label=idref,
            href=item.path,
            writing_mode="vertical" if chapter.vertical else "horizontal",
            anchors=tuple(chapter.anchors.items()),
            images=tuple(chapter.images),
            markdown=chapter.markdown,
        )
        return unit, chapter.first_heading

    def chapter(self, root: Any, path: str, manifest_paths: set[str]) -> _Chapter:
        base = posixpath.dirname(path)
        body = _first(root, "body")
        if body is None:
            body = root
        images = _Images(self, base, manifest_paths)
        builder = _TextBuilder(images)
        builder.walk(body)
        text, anchors = builder.finish()
        markdown = _MarkdownRenderer(images).render(body)
        heading = next(
            (t for el in body.iter() if _local(el) in _HEADINGS and (t := _text_of(el))), None
        )
        return _Chapter(
            text, anchors, images.found, markdown, heading, self.vertical(root, body, base)
        )

    def vertical(self, root: Any, body: Any, base: str) -> bool:
        """True when the chapter's CSS sets vertical writing on its root or body."""
        classes: set[str] = set()
        for el in (root, body):
            classes.update((el.get("class") or "").split())
            if _VERTICAL.search(el.get("style") or ""):
                return True
        sheets = [(el.text or "") for el in _descendants(root, "style")]
        for link in _descendants(root, "link"):
            if "stylesheet" in (link.get("rel") or "").lower() and link.get("href"):
                target, _ = _resolve(base, link.get("href"))
                if target and self.container.has(target):
                    sheets.append(self.stylesheet(target))
        return any(_css_vertical(css, classes) for css in sheets if css)

    def stylesheet(self, name: str) -> str:
        if name not in self._css:
            try:
                self._css[name] = _decode(self.container.read(name, MAX_CSS_BYTES))
            except CoreError:
                self._css[name] = ""
        return self._css[name]

    # -- contents --

    def contents(
        self,
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
        nav_links = self.nav_links(nav) if nav is not None else None
        ncx_links = self.ncx_links(ncx) if ncx is not None else None
        links = nav_links or ncx_links
        if nav_links and ncx_links and _link_key(nav_links) != _link_key(ncx_links):
            self.warn("The nav document and the NCX disagree; the nav document was used.")
        elif nav is not None and not nav_links and ncx_links:
            self.warn("The nav document has no usable contents; the NCX was used.")
        if not links:
            self.warn("The EPUB has no usable contents; one entry per chapter heading was made.")
            return [
                TocEntry(title=heading, level=1, unit_index=i)
                for i, heading in enumerate(headings)
                if heading
            ]
        by_index = {unit.index: dict(unit.anchors) for unit in units}
        toc: list[TocEntry] = []
        for level, title, target, fragment in links:
            if target is None:
                self.warn(f"Contents entry {title!r} links outside the book; skipped.")
                continue
            if target == "":
                self.warn(f"Contents entry {title!r} has an empty link; skipped.")
                continue
            index = chapters.get(target)
            if index is None:
                where = "a file outside the spine" if target in manifest_paths else "a missing file"
                self.warn(f"Contents entry {title!r} points at {where} ({target}); skipped.")
                continue
            offset = 0
            if fragment:
                found = by_index[index].get(fragment)
                if found is None:
                    self.warn(f"Contents entry {title!r}: no #{fragment} in {target}.")
                else:
                    offset = found
            toc.append(TocEntry(title, level, index, offset, fragment or None))
        return toc

    def nav_links(self, item: _Item) -> list[_Link]:
        if not self.container.has(item.path):
            self.warn(f"The nav document {item.path} is missing from the archive.")
            return []
        try:
            root = self.document(item.path, "nav document", content=True).root
        except XmlParseError:
            self.warn(f"The nav document {item.path} is not readable.")
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

    def ncx_links(self, item: _Item) -> list[_Link]:
        if not self.container.has(item.path):
            self.warn(f"The NCX {item.path} is missing from the archive.")
            return []
        try:
            root = self.document(item.path, "NCX").root
        except XmlParseError:
            self.warn(f"The NCX {item.path} is not readable.")
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


def _is_content_path(uri: str) -> bool:
    path = unquote(urlsplit(uri).path).lower()
    return path.endswith((".xhtml", ".html", ".htm", ".xml", ".opf", ".ncx"))


# --- CSS: vertical writing -------------------------------------------------------------------

_VERTICAL = re.compile(r"(?:-epub-|-webkit-)?writing-mode\s*:\s*(?:vertical|tb)", re.IGNORECASE)
_CSS_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)
_CSS_RULE = re.compile(r"([^{}]+)\{([^{}]*)\}")
_COMPOUND_SPLIT = re.compile(r"[\s>+~]+")


def _css_vertical(css: str, classes: set[str]) -> bool:
    """True if a rule sets vertical writing on html, body, :root or one of their classes."""
    if not _VERTICAL.search(css):
        return False
    for selectors, declarations in _CSS_RULE.findall(_CSS_COMMENT.sub("", css)):
        if not _VERTICAL.search(declarations):
            continue
        for selector in selectors.split(","):
            parts = [p for p in _COMPOUND_SPLIT.split(selector.strip()) if p]
            if not parts:
                continue
            last = parts[-1].lower()
            element = re.match(r"[a-z*:]*[a-z]*", last)
            name = element.group(0) if element else ""
            if name in ("html", "body", ":root", "*"):
                return True
            if any(f".{cls.lower()}" in last for cls in classes):
                return True
    return False


# --- images ----------------------------------------------------------------------------------


class _Images:
    """Resolves a chapter's image references through the manifest, once each."""

    def __init__(self, reader: _Reader, base: str, manifest_paths: set[str]) -> None:
        self.reader = reader
        self.base = base
        self.manifest_paths = manifest_paths
        self.found: list[str] = []
        self._seen: dict[str, str | None] = {}

    def resolve(self, href: str | None) -> str | None:
        """The image's container path, or None (external, missing, not in the manifest)."""
        if not href or href.strip().lower().startswith("data:"):
            return None
        if href in self._seen:
            return self._seen[href]
        target, _ = _resolve(self.base, href)
        result: str | None = None
        if target is None:
            if not urlsplit(href.strip()).scheme:
                self.reader.warn(f"Image {href[:120]!r} points outside the container; ignored.")
        elif target not in self.manifest_paths:
            self.reader.warn(f"Image {target} is not in the manifest; ignored.")
        elif not self.reader.container.has(target):
            self.reader.warn(f"Image {target} is missing from the archive; ignored.")
        else:
            result = target
            if target not in self.found:
                self.found.append(target)
        self._seen[href] = result
        return result


def _image_href(element: Any) -> str | None:
    name = _local(element)
    if name == "img":
        return element.get("src")
    if name == "image":
        return element.get(f"{{{_XLINK}}}href") or element.get("href")
    return None


# --- text ------------------------------------------------------------------------------------


def _cjk_like(ch: str) -> bool:
    return is_cjk(ch) or 0x3000 < ord(ch) <= 0x303F or 0xFF01 <= ord(ch) <= 0xFF65


class _TextBuilder:
    """Raw text in document order, HTML whitespace rules applied, with anchor offsets."""

    def __init__(self, images: _Images) -> None:
        self.images = images
        self.parts: list[str] = []
        self.length = 0
        self.last = ""
        self.space = False
        self.space_breaks_line = False
        self.anchors: dict[str, int] = {}
        self.pending: list[str] = []

    def walk(self, element: Any, pre: bool = False) -> None:
        name = _local(element)
        if name in _SKIP:
            return
        for key in ("id", "name") if name == "a" else ("id",):
            value = element.get(key)
            if value and value not in self.anchors and value not in self.pending:
                self.pending.append(value)
        href = _image_href(element)
        if href is not None:
            self.images.resolve(href)
        block = name in _BLOCKS
        if block:
            self.newline()
        if name == "br":
            self.hard_break()
        elif name in _CELLS and self.last not in ("", "\n"):
            self.space = True
        pre = pre or name == "pre"
        if element.text:
            self.add(element.text, pre)
        for child in element:
            self.walk(child, pre)
            if child.tail:
                self.add(child.tail, pre)
        if block:
            self.newline()

    def add(self, text: str, pre: bool) -> None:
        if pre:
            for line_no, line in enumerate(text.split("\n")):
                if line_no:
                    self.hard_break()
                if line:
                    self.emit(line, spaced=False)
            return
        for token in _TOKENS.findall(text):
            if token[0] in " \t\n\r\f":
                self.space = True
                self.space_breaks_line = self.space_breaks_line or "\n" in token or "\r" in token
            else:
                self.emit(token, spaced=True)

    def emit(self, token: str, *, spaced: bool) -> None:
        # CSS Text: a source line break between two CJK characters renders as nothing.
        if (
            spaced
            and self.space
            and self.last not in ("", "\n")
            and not (self.space_breaks_line and _cjk_like(self.last) and _cjk_like(token[0]))
        ):
            self.parts.append(" ")
            self.length += 1
        self.space = False
        self.space_breaks_line = False
        for anchor in self.pending:
            self.anchors[anchor] = self.length
        self.pending.clear()
        self.parts.append(token)
        self.length += len(token)
        self.last = token[-1]

    def newline(self) -> None:
        self.space = False
        self.space_breaks_line = False
        if self.last not in ("", "\n"):
            self.parts.append("\n")
            self.length += 1
            self.last = "\n"

    def hard_break(self) -> None:
        self.space = False
        self.space_breaks_line = False
        if self.last != "":
            self.parts.append("\n")
            self.length += 1
            self.last = "\n"

    def finish(self) -> tuple[str, dict[str, int]]:
        text = "".join(self.parts).rstrip()
        for anchor in self.pending:
            self.anchors[anchor] = len(text)
        anchors = {key: min(offset, len(text)) for key, offset in self.anchors.items()}
        return text, anchors


# --- Markdown --------------------------------------------------------------------------------

_MD_ESCAPE = re.compile(r"([\\`*_\[\]])")
_MD_LINE_START = re.compile(r"^(#|>|[-+=](?=\s|$)|\d+[.)](?=\s|$))", re.MULTILINE)
_LIST_BLOCK = re.compile(r"(?:- |\d+\. )")
_BREAK = "\x00"  # marks <br> inside a paragraph until whitespace is collapsed


class _MarkdownRenderer:
    """A Markdown view of a chapter: headings, paragraphs, lists, quotes, emphasis, images."""

    def __init__(self, images: _Images) -> None:
        self.images = images

    def render(self, body: Any) -> str:
        return "\n\n".join(b for b in self.blocks(body) if b.strip())

    def blocks(self, element: Any) -> list[str]:
        out: list[str] = []
        inline: list[str] = []
        if element.text:
            inline.append(_md_text(element.text))
        for child in element:
            name = _local(child)
            if name in _BLOCKS or name in _CELLS:
                self.flush(inline, out)
                out.extend(self.block(child, name))
            else:
                inline.append(self.inline(child))
            if child.tail:
                inline.append(_md_text(child.tail))
        self.flush(inline, out)
        return out

    def flush(self, inline: list[str], out: list[str]) -> None:
        paragraph = _paragraph("".join(inline))
        inline.clear()
        if paragraph:
            out.append(paragraph)

    def block(self, element: Any, name: str) -> list[str]:
        if name in _SKIP:
            return []
        if name in _HEADINGS:
            title = _collapse(_paragraph(self.inline_children(element)).replace("\\\n", " "))
            return [f"{'#' * _HEADINGS[name]} {title}"] if title else []
        if name == "hr":
            return ["* * *"]
        if name == "pre":
            code = "".join(_text_nodes(element)).strip("\n")
            fence = "````" if "```" in code else "```"
            return [f"{fence}\n{code}\n{fence}"] if code else []
        if name in ("ul", "ol"):
            return self.list_block(element, ordered=name == "ol")
        if name == "blockquote":
            inner = "\n\n".join(self.blocks(element))
            return ["\n".join(f"> {line}".rstrip() for line in inner.split("\n"))] if inner else []
        if name == "table":
            return self.table(element)
        return self.blocks(element)

    def list_block(self, element: Any, *, ordered: bool) -> list[str]:
        items: list[str] = []
        number = 1
        for child in element:
            if _local(child) != "li":
                continue
            marker = f"{number}. " if ordered else "- "
            number += 1
            parts = self.blocks(child)
            # A nested list follows its item's text directly: the list stays tight.
            body = "".join(
                (("\n" if _LIST_BLOCK.match(part) else "\n\n") if i else "") + part
                for i, part in enumerate(parts)
            )
            lines = body.split("\n")
            pad = " " * len(marker)
            rest = "".join(f"\n{pad}{line}" if line else "\n" for line in lines[1:])
            items.append(f"{marker}{lines[0]}{rest}")
        return ["\n".join(items)] if items else []

    def table(self, element: Any) -> list[str]:
        rows: list[list[str]] = []
        for tr in _descendants(element, "tr"):
            cells = [
                _collapse(_paragraph(self.inline_children(c)).replace("\\\n", " ")).replace(
                    "|", "\\|"
                )
                for c in tr
                if _local(c) in _CELLS
            ]
            if cells:
                rows.append(cells)
        if not rows:
            return []
        width = max(len(r) for r in rows)
        lines = ["| " + " | ".join(r + [""] * (width - len(r))) + " |" for r in rows]
        lines.insert(1, "|" + " --- |" * width)
        return ["\n".join(lines)]

    def inline_children(self, element: Any) -> str:
        parts = [_md_text(element.text)] if element.text else []
        for child in element:
            parts.append(self.inline(child))
            if child.tail:
                parts.append(_md_text(child.tail))
        return "".join(parts)

    def inline(self, element: Any) -> str:
        name = _local(element)
        if name in _SKIP:
            return ""
        if name == "br":
            return _BREAK
        href = _image_href(element)
        if href is not None:
            path = self.images.resolve(href)
            alt = " ".join((element.get("alt") or "").split())
            alt = alt.replace("[", "(").replace("]", ")")
            return f"![{alt}]({path})" if path else _md_text(alt)
        inner = self.inline_children(element)
        if name in _BLOCKS or name in _CELLS:
            return f" {inner} "
        if not inner.strip():
            return inner
        if name in ("em", "i", "cite", "var", "dfn"):
            return _wrap(inner, "*")
        if name in ("strong", "b"):
            return _wrap(inner, "**")
        if name in ("code", "kbd", "samp", "tt"):
            plain = "".join(_text_nodes(element))
            return f"`{plain}`" if "`" not in plain else f"`` {plain} ``"
        return inner


def _wrap(inner: str, mark: str) -> str:
    stripped = inner.strip()
    lead = inner[: len(inner) - len(inner.lstrip())]
    trail = inner[len(inner.rstrip()) :]
    return f"{lead}{mark}{stripped}{mark}{trail}"


def _md_text(text: str) -> str:
    return _MD_ESCAPE.sub(r"\\\1", text)


def _paragraph(raw: str) -> str:
    lines = [_collapse(part) for part in raw.split(_BREAK)]
    while lines and not lines[-1]:
        lines.pop()
    while lines and not lines[0]:
        lines.pop(0)
    text = "\\\n".join(lines)
    return _MD_LINE_START.sub(r"\\\1", text)
