"""The package document (OPF): metadata, manifest, spine, the rootfile, encryption; images."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit

from ....core.errors import Code, CoreError
from ....core.xmlsafe import XmlParseError
from .container import corrupt_book, resolve_href
from .document import child_elements, descendant_elements, first_element
from .source import EpubSource
from .text import text_of

__all__ = [
    "Images",
    "ManifestItem",
    "Package",
    "check_encryption",
    "encrypted",
    "read_package",
    "rootfile",
]

_FONT_OBFUSCATION = frozenset(
    {"http://www.idpf.org/2008/embedding", "http://ns.adobe.com/pdf/enc#RC"}
)


# --- the package -----------------------------------------------------------------------------


@dataclass(frozen=True)
class ManifestItem:
    id: str
    path: str
    media_type: str
    properties: frozenset[str]


@dataclass
class Package:
    path: str
    version: str
    title: str | None
    creators: tuple[str, ...]
    language: str | None
    manifest: dict[str, ManifestItem]
    spine: list[tuple[str, bool]]
    toc_id: str | None
    direction: str | None
    extra: dict[str, str] = field(default_factory=dict)


def check_encryption(reader: EpubSource) -> None:
    name = "META-INF/encryption.xml"
    if not reader.container.has(name):
        return
    try:
        root = reader.document(name, "encryption manifest").root
    except XmlParseError:
        raise encrypted(reader, "an unreadable encryption manifest") from None
    for data in descendant_elements(root, "encrypteddata"):
        method = first_element(data, "encryptionmethod")
        algorithm = (method.get("Algorithm") if method is not None else "") or ""
        reference = first_element(data, "cipherreference")
        target = (reference.get("URI") if reference is not None else "") or ""
        if algorithm not in _FONT_OBFUSCATION or _is_content_path(target):
            raise encrypted(reader, "encrypted content (DRM)")


def encrypted(reader: EpubSource, what: str) -> CoreError:
    return CoreError(
        Code.ENCRYPTED_SOURCE,
        f"The EPUB has {what} and cannot be read.",
        details={"path": str(reader.path)},
        remediation="Register a DRM-free copy of the book (many shops offer one).",
    )


def read_package(reader: EpubSource) -> Package:
    opf = rootfile(reader)
    try:
        root = reader.document(opf, "package document").root
    except XmlParseError:
        raise corrupt_book(
            reader.path, "The EPUB's package document (OPF) is not well-formed.", "opf"
        ) from None
    base = posixpath.dirname(opf)
    metadata = first_element(root, "metadata")
    title = creators = language = None
    extra: dict[str, str] = {}
    if metadata is not None:
        titles = [text_of(el) for el in child_elements(metadata, "title")]
        title = next((t for t in titles if t), None)
        creators = tuple(t for el in child_elements(metadata, "creator") if (t := text_of(el)))
        language = next(
            (t for el in child_elements(metadata, "language") if (t := text_of(el))), None
        )
        for key in ("publisher", "identifier", "date"):
            value = next((t for el in child_elements(metadata, key) if (t := text_of(el))), None)
            if value:
                extra[key] = value[:200]
    manifest: dict[str, ManifestItem] = {}
    escaped = 0
    manifest_el = first_element(root, "manifest")
    for el in child_elements(manifest_el, "item") if manifest_el is not None else ():
        item_id, href = el.get("id"), el.get("href")
        if not item_id or href is None:
            continue
        target, _fragment = resolve_href(base, href)
        if not target:
            escaped += 1
            continue
        manifest[item_id] = ManifestItem(
            item_id,
            target,
            (el.get("media-type") or "").strip().lower(),
            frozenset((el.get("properties") or "").split()),
        )
    if escaped:
        reader.warn(f"{escaped} manifest items point outside the container; ignored.")
    spine_el = first_element(root, "spine")
    spine: list[tuple[str, bool]] = []
    if spine_el is not None:
        for ref in child_elements(spine_el, "itemref"):
            if ref.get("idref"):
                spine.append((ref.get("idref"), (ref.get("linear") or "yes") != "no"))
    if spine_el is None or not spine:
        raise CoreError(
            Code.EMPTY_SOURCE,
            "The EPUB's spine lists no chapters.",
            details={"path": str(reader.path)},
            remediation="Check the book opens in an e-book reader.",
        )
    direction = (spine_el.get("page-progression-direction") or "").strip() or None
    return Package(
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


def rootfile(reader: EpubSource) -> str:
    name = "META-INF/container.xml"
    if reader.container.has(name):
        try:
            root = reader.document(name, "container file").root
        except XmlParseError:
            root = None
        for el in descendant_elements(root, "rootfile") if root is not None else ():
            full_path = (el.get("full-path") or "").strip()
            media = (el.get("media-type") or "").strip()
            target, _ = resolve_href("", full_path)
            if (
                target
                and reader.container.has(target)
                and media
                in (
                    "",
                    "application/oebps-package+xml",
                )
            ):
                return target
    candidates = sorted(n for n in reader.container.entries if n.lower().endswith(".opf"))
    if not candidates:
        raise corrupt_book(reader.path, "The EPUB has no package document (OPF).", "no_opf")
    reader.warn(f"META-INF/container.xml does not name a package; using {candidates[0]}.")
    return candidates[0]

# -- chapters --


def _is_content_path(uri: str) -> bool:
    path = unquote(urlsplit(uri).path).lower()
    return path.endswith((".xhtml", ".html", ".htm", ".xml", ".opf", ".ncx"))


# --- images ----------------------------------------------------------------------------------


class Images:
    """Resolves a chapter's image references through the manifest, once each."""

    def __init__(self, reader: EpubSource, base: str, manifest_paths: set[str]) -> None:
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
        target, _ = resolve_href(self.base, href)
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
