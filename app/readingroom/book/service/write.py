"""The write side of book-agent's Core: a file read into a new package version (``init``),
a package removed, its library fields refreshed. Everything else only reads packages
(:mod:`.read`)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ... import __version__
from ...core.envelope import Envelope, Level, utc_now_iso
from ...core.errors import Code, CoreError
from ...core.files import write_atomically
from ..model import SourceDocument, SourceUnit
from ..package import (
    book_id_from_name,
    check_book_id,
    record_files,
)
from ..paths import check_text, storable_name, unusable
from ..records import build_book_text
from .base import ServiceBase, shown_title

if TYPE_CHECKING:  # the semantic modules load numpy; a lexical-only process never imports them
    from ..ocr import OcrOptions
    from ..search.semantic import SemanticConfig

__all__ = ["WriteSide"]

def _sha256_copy(src: Path, dst: Path) -> tuple[str, int]:
    digest, size = hashlib.sha256(), 0
    with src.open("rb") as fi, dst.open("wb") as fo:
        while chunk := fi.read(1 << 20):
            digest.update(chunk)
            fo.write(chunk)
            size += len(chunk)
    return digest.hexdigest(), size


def _unit_to_json(unit: SourceUnit) -> dict[str, Any]:
    return dataclasses.asdict(unit)


def _ocr_summary(doc: SourceDocument) -> dict[str, Any]:
    """The OCR engine label and mean word confidence of a document's OCR'd pages."""
    read = [u.ocr for u in doc.units if u.text_source == "ocr" and u.ocr]
    first = read[0] if read else {}
    known = [(o["mean_word_confidence"], o.get("words") or 0) for o in read
             if o.get("mean_word_confidence") is not None]
    words = sum(w for _c, w in known)
    return {**{k: first[k] for k in ("engine", "engine_version", "engine_build", "language",
                                      "dpi") if k in first},
            "mean_word_confidence": round(sum(c * w for c, w in known) / words, 1)
            if words else None}


class WriteSide(ServiceBase):
    """Operations that write packages."""

    # ------------------------------------------------------------------ init
    def init(
        self,
        source: Path | str,
        *,
        book_id: str | None = None,
        title: str | None = None,
        replace: bool = False,
        allow_image_only: bool = False,
        progress: Callable[[str, int, int], None] | None = None,
        semantic: SemanticConfig | None = None,
        ocr: OcrOptions | None = None,
        library: Mapping[str, Any] | None = None,
    ) -> Envelope:
        """Ingest a source file into a new package version and publish it atomically.

        With ``semantic``, every record is embedded with that model into the package
        (``embeddings/``, with the model's identity in ``capabilities.semantic``). With
        ``ocr``, a PDF's pages without a text layer (or all) are read by Tesseract; when it
        or its language data is missing, CAPABILITY_UNAVAILABLE says what to install and
        nothing is built.
        ``library`` (from ``add``): the origin, metadata and CSL reference a library gave the
        file (:func:`.library.manifest.apply_library`).
        """
        from ..ingest import detect_format, ingest

        began = time.monotonic()
        src = Path(source)
        try:
            is_file = src.is_file()
        except (OSError, ValueError) as exc:  # a name too long, a NUL byte
            raise unusable(src, "SOURCE", getattr(exc, "strerror", None) or str(exc)) from None
        if not is_file:
            raise CoreError(Code.NOT_FOUND, f"No source file at {storable_name(str(src))}.",
                            remediation="Give the path of a PDF, EPUB or Markdown file.")
        check_text(title, "--title")
        plan = None
        if ocr is not None:
            from ..ocr import OcrPlan, find_engine

            plan = OcrPlan(find_engine(ocr.language), ocr)
        # The package keeps the file's name in UTF-8 files: a non-UTF-8 name is stored mended.
        name = storable_name(src.name)
        book_id = check_book_id(book_id or book_id_from_name(name))
        if not replace and self.registry.current_version(book_id) is not None:
            raise CoreError(
                Code.BOOK_EXISTS, f"A book with id {book_id!r} is already registered.",
                details={"book_id": book_id},
                remediation="Pass --replace to build a new version, or choose another --id.",
            )
        build = self.registry.new_build_dir(book_id)
        try:
            (build / "source").mkdir()
            copy = build / "source" / name
            try:
                sha, size = _sha256_copy(src, copy)
            except OSError as exc:
                raise unusable(src, "SOURCE", "it could not be copied into the package ("
                               f"{exc.strerror or type(exc).__name__})") from None
            word = {"pdf": "pages", "epub": "chapters"}.get(detect_format(copy), "sections")
            step = (lambda done, total: progress(word, done, total)) if progress else None
            doc = ingest(copy, progress=step, allow_image_only=allow_image_only,
                         ocr=plan if plan is not None and detect_format(copy) == "pdf" else None)
            if title:
                doc = dataclasses.replace(doc, title=title)
            book_text = build_book_text(doc)
            self._write_text_layers(build, doc, book_text)
            from ..search.index import build_index, record_page_labels

            stats = build_index(book_text.records, build / "index.sqlite",
                                record_labels=record_page_labels(doc.units, book_text.records))
            manifest = self._manifest(book_id, name, sha, size, doc, book_text, stats)
            if library is not None:
                from ..library.manifest import apply_library

                apply_library(manifest, library, title_given=bool(title))
            if semantic is not None:
                from ..search.semantic import embed_package

                manifest["capabilities"]["semantic"] = embed_package(book_text.records, build,
                                                                     semantic)

            def finalize(folder: Path, version: int) -> None:
                manifest["version"] = version
                self._write_skill(folder, manifest, doc, book_text.records)
                # Sizes and hashes of every file: what status and loading check against.
                manifest["files"] = record_files(folder)
                write_atomically(folder / "manifest.json",
                                 json.dumps(manifest, ensure_ascii=False, indent=2) + "\n")

            pkg = self.registry.publish(book_id, build, replace=replace, finalize=finalize)
        except BaseException:
            self.registry.discard(build)
            raise
        env = self._env("book_init", data={
            "book_id": pkg.book_id, "version": pkg.version, "package": str(pkg.path),
            **shown_title(manifest), "format": doc.format, "units": len(doc.units),
            "records": len(book_text.records), "capabilities": manifest["capabilities"],
            "seconds": round(time.monotonic() - began, 2),
        })
        for warning in doc.warnings[:20]:
            env.diagnose(Level.warning, Code.UPSTREAM_DIAGNOSTIC, warning)
        return env

    @staticmethod
    def _write_text_layers(build: Path, doc: SourceDocument, book_text) -> None:
        with (build / "units.jsonl").open("w", encoding="utf-8", newline="\n") as fh:
            for unit in doc.units:
                fh.write(json.dumps(_unit_to_json(unit), ensure_ascii=False) + "\n")
        with (build / "records.jsonl").open("w", encoding="utf-8", newline="\n") as fh:
            for rec in book_text.records:
                fh.write(json.dumps(dataclasses.asdict(rec), ensure_ascii=False) + "\n")
        (build / "toc.json").write_text(
            json.dumps([dataclasses.asdict(t) for t in doc.toc], ensure_ascii=False, indent=1),
            encoding="utf-8")
        (build / "book.md").write_text(book_text.markdown, encoding="utf-8", newline="\n")

    @staticmethod
    def _manifest(book_id, name, sha, size, doc: SourceDocument, book_text, stats) -> dict:
        no_text = [u.index for u in doc.units if not u.has_text_layer]
        ocr_units = [u.index for u in doc.units if u.text_source == "ocr"]
        vertical = [u.index for u in doc.units if u.writing_mode == "vertical"]
        images = sorted({i for u in doc.units for i in u.images})
        return {
            "id": book_id,
            "version": None,
            "title": doc.title or Path(name).stem,
            "authors": list(doc.authors),
            "language": doc.language,
            "source": {"file_name": name, "size": size, "sha256": sha, "format": doc.format},
            "counts": {
                "units": len(doc.units),
                "unit_kind": doc.units[0].kind if doc.units else None,
                "toc_entries": len(doc.toc),
                "records": len(book_text.records),
                "markdown_lines": book_text.markdown.count("\n"),
            },
            "capabilities": {
                "text_layer_units": len(doc.units) - len(no_text),
                "no_text_layer_units": no_text,
                "renderable": doc.format == "pdf",
                "epub_images": len(images),
                "vertical_units": vertical,
                "markdown_fallback_units": book_text.markdown_fallback_units,
                "lexical_engine": getattr(stats, "engine", None),
                **({"ocr_units": ocr_units, "ocr": _ocr_summary(doc)} if ocr_units else {}),
            },
            "metadata": dict(doc.metadata),
            "warnings": list(doc.warnings),
            "tool": {"name": "readingroom book-agent", "version": __version__},
            "created": utc_now_iso(),
        }

    @staticmethod
    def _write_skill(folder: Path, manifest: dict, doc: SourceDocument, records) -> None:
        from ..skill import SkillBook, SkillEntry, build_skill

        labels = [u.label for u in doc.units]
        entries = [
            SkillEntry(record_id=r.record_id, heading_path=r.heading_path,
                       unit_start=r.unit_start, unit_end=r.unit_end,
                       page_label_start=labels[r.unit_start] if doc.format == "pdf" else None,
                       page_label_end=labels[r.unit_end] if doc.format == "pdf" else None,
                       chars=len(r.text), role=r.role)
            for r in records
        ]
        from ..library.citation import citation_line, reference_for

        reference = reference_for(manifest)
        book = SkillBook(
            book_id=manifest["id"], title=manifest["title"], authors=tuple(manifest["authors"]),
            language=manifest["language"], format=doc.format,
            package_version=manifest["version"], source_name=manifest["source"]["file_name"],
            source_sha256=manifest["source"]["sha256"], unit_count=len(doc.units),
            unit_kind=manifest["counts"]["unit_kind"] or "", records=entries,
            capabilities=manifest["capabilities"], tool_version=__version__,
            citation=citation_line(reference), bibtex_key=reference.get("citation-key"),
            reference_from="the library it was imported from" if manifest.get("reference")
            else "the file's own metadata",
        )
        build_skill(book, folder / "skill")

    def remove(self, book_id: str) -> Envelope:
        """Unregister a book and delete its package."""
        removed = self.registry.remove(book_id)
        with self._cache_lock:
            for key in [k for k in self._cache if k[0] == book_id]:
                del self._cache[key]
        return self._env("book_remove", data={"book_id": book_id, "versions_removed": removed})

    # ------------------------------------------------------------------ library
    def refresh_library(self, book_id: str, library: Mapping[str, Any]) -> Envelope:
        """A new version of a book whose file is unchanged but whose library metadata changed.

        The text layers, index and source copy of the current version are reused (hard links
        where the file system allows, else copies); the manifest and the Book Skill are
        written anew with the library's metadata. Old locators answer STALE_LOCATOR, as after
        any new version.
        """
        import os
        import shutil

        from ..library.manifest import apply_library

        began = time.monotonic()
        loaded = self._load(book_id)
        old = loaded.pkg
        build = self.registry.new_build_dir(book_id)
        try:
            for path in sorted(old.path.rglob("*")):
                rel = path.relative_to(old.path)
                if rel.parts[0] in ("skill", "manifest.json") or not path.is_file():
                    continue
                target = build / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                try:
                    os.link(path, target)
                except OSError:
                    shutil.copy2(path, target)
            manifest = json.loads(json.dumps(loaded.manifest))
            manifest.pop("files", None)
            manifest["created"] = utc_now_iso()
            manifest["tool"] = {"name": "readingroom book-agent", "version": __version__}
            apply_library(manifest, library, title_given=False)
            doc = SourceDocument(format=manifest["source"]["format"],
                                 units=tuple(loaded.units))
            records = loaded.records

            def finalize(folder: Path, version: int) -> None:
                manifest["version"] = version
                self._write_skill(folder, manifest, doc, records)
                manifest["files"] = record_files(folder)
                write_atomically(folder / "manifest.json",
                                 json.dumps(manifest, ensure_ascii=False, indent=2) + "\n")

            pkg = self.registry.publish(book_id, build, replace=True, finalize=finalize)
        except BaseException:
            self.registry.discard(build)
            raise
        return self._env("book_init", data={
            "book_id": pkg.book_id, "version": pkg.version, "package": str(pkg.path),
            **shown_title(manifest), "format": manifest["source"]["format"],
            "units": manifest["counts"]["units"], "records": manifest["counts"]["records"],
            "capabilities": manifest["capabilities"], "metadata_only": True,
            "seconds": round(time.monotonic() - began, 2)})
