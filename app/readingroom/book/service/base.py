"""What both sides of book-agent's Core share: the registry, the cache of loaded books, the
library index, and the helpers that read a package's rows and manifest."""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...core.envelope import Envelope
from ...core.errors import Code, CoreError
from ..confinement import Confinement
from ..locate import SourceText
from ..model import Record, SourceUnit
from ..package import (
    BookPackage,
    Registry,
    check_book_id,
)

if TYPE_CHECKING:  # the semantic modules load numpy; a lexical-only process never imports them
    from ..render import RenderedPage
    from ..search.library import LibrarySearcher
    from ..search.library_index import CatchUp, LibraryIndex
    from ..search.rerank import Reranker
    from ..search.semantic import SemanticConfig, SemanticRuntime, VectorStore

__all__ = ["LIBRARY_LISTENER_WAIT_S", "MAX_TITLE_CHARS", "SERVER_NAME", "LoadedBook",
           "ServiceBase", "cut_text", "envelope_data", "index_busy", "package_rows",
           "record_from_json", "shown_title", "unit_from_json"]

log = logging.getLogger("readingroom.book.service")
SERVER_NAME = "book-agent"
_CACHE_SIZE = 4
LIBRARY_LISTENER_WAIT_S = 2.0
"""How long an init or remove waits for another writer of the library index before leaving
the book to the next library search (which indexes what is stale)."""


class LoadedBook:
    """One package version read into memory (units, records, folded source, index).

    Loading checks the files against the manifest first (presence and sizes, and the SHA-256
    of the units and records it reads): a damaged package is BOOK_DAMAGED naming the file,
    never a defect.
    """

    def __init__(self, pkg: BookPackage) -> None:
        self.pkg = pkg
        self.manifest = pkg.manifest
        damage = pkg.check(manifest=self.manifest)
        if damage:
            raise pkg.damaged(damage[0].file, damage[0].problem)
        self.units = package_rows(pkg, self.manifest, "units.jsonl", unit_from_json)
        self.records = package_rows(pkg, self.manifest, "records.jsonl", record_from_json)
        self.by_id = {r.record_id: r for r in self.records}
        self._source: SourceText | None = None
        self._index = None
        self._lock = threading.Lock()

    @property
    def source(self) -> SourceText:
        with self._lock:
            if self._source is None:
                from ..library.manifest import locator_reference

                manifest = self.manifest
                self._source = SourceText(
                    self.units, book_id=self.pkg.book_id, version=self.pkg.version,
                    source_sha256=manifest["source"]["sha256"],
                    reference=lambda loc: locator_reference(manifest, loc))
            return self._source

    @property
    def index(self):
        with self._lock:
            if self._index is None:
                from ..search.index import BookIndex

                try:
                    self._index = BookIndex.open(self.pkg.file("index.sqlite"))
                except CoreError as err:
                    if err.code == Code.BOOK_BUSY:
                        raise index_busy(self.pkg.book_id) from None
                    if err.code in (Code.NOT_FOUND, Code.INTERNAL_ERROR) and \
                            "index_format" not in err.details:
                        raise self.pkg.damaged("index.sqlite", "is missing" if
                                               err.code == Code.NOT_FOUND else
                                               "is not a readable search index") from None
                    raise
            return self._index

    def vectors(self) -> VectorStore | None:
        """The package's record vectors, read once; None when it has none."""
        with self._lock:
            if not hasattr(self, "_vectors"):
                from ..search.semantic import VectorStore

                self._vectors = VectorStore.open(self.pkg.path,
                                                 [r.record_id for r in self.records])
            return self._vectors


def package_rows(pkg: BookPackage, manifest: Mapping[str, Any], name: str,
          convert: Callable[[dict[str, Any]], Any]) -> list[Any]:
    """The entries of a JSONL file of the package, each converted; BOOK_DAMAGED naming the
    entry that is not what the file should hold, or when its bytes are not those recorded."""
    key = name.split(".")[0]
    recorded = (manifest.get("files") or {}).get(name) or {}
    out = []
    for n, row in enumerate(pkg.read_jsonl(name, expected=manifest["counts"][key],
                                           sha256=recorded.get("sha256")), start=1):
        try:
            out.append(convert(row))
        except (TypeError, KeyError, ValueError, AttributeError):
            raise pkg.damaged(name, f"entry {n} is not what book-agent wrote there") from None
    return out


def unit_from_json(data: dict[str, Any]) -> SourceUnit:
    data["anchors"] = tuple(tuple(a) for a in data.get("anchors", ()))
    data["images"] = tuple(data.get("images", ()))
    for key in ("furniture", "page_marks", "blocks", "links", "readings"):
        data[key] = tuple(tuple(item) for item in data.get(key, ()))
    return SourceUnit(**data)


def record_from_json(data: dict[str, Any]) -> Record:
    data["heading_path"] = tuple(data["heading_path"])
    data["furniture"] = tuple(tuple(item) for item in data.get("furniture", ()))
    data["readings"] = tuple(tuple(item) for item in data.get("readings", ()))
    return Record(**data)


def envelope_data(env: Envelope) -> dict[str, Any]:
    """``env.data`` of an operation that always returns a result object; its absence is a bug."""
    if env.data is None:
        raise CoreError(Code.INTERNAL_ERROR, f"{env.operation} returned no data object.",
                        remediation="Report this as a book-agent bug.")
    return env.data


MAX_TITLE_CHARS = 200
"""Titles longer than this are shown cut (the manifest keeps the whole title)."""


def index_busy(book_id: str) -> CoreError:
    """BOOK_BUSY for a book whose search index another program holds locked."""
    return CoreError(Code.BOOK_BUSY, f"The search index of {book_id!r} is locked by another "
                     "program.", details={"book_id": book_id},
                     remediation="Try again; book-agent never writes to a published index, so "
                     "close whatever opened it for writing.")


def cut_text(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def shown_title(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """``title`` as shown (at most :data:`MAX_TITLE_CHARS`), saying when it was cut."""
    title = str(manifest.get("title") or "")
    if len(title) <= MAX_TITLE_CHARS:
        return {"title": title}
    return {"title": cut_text(title, MAX_TITLE_CHARS), "title_truncated": True,
            "title_chars": len(title)}


def _semantic_runtime(choice: SemanticConfig | SemanticRuntime | None) -> SemanticRuntime | None:
    if choice is None:
        return None
    from ..search.semantic import SemanticConfig, SemanticRuntime

    return SemanticRuntime(choice) if isinstance(choice, SemanticConfig) else choice


class ServiceBase:
    """The Core over one data folder; optionally serving one book only (single-book MCP)."""

    def __init__(self, data_dir: Path | str, *, served: str | None = None,
                 semantic: SemanticConfig | SemanticRuntime | None = None,
                 reranker: Reranker | None = None,
                 page_renderer: Callable[..., RenderedPage] | None = None) -> None:
        self.registry = Registry(data_dir)
        # How PDF pages are rendered (the MCP server renders in child processes).
        self.page_renderer = page_renderer
        # The one-book rule (.confinement): None serves every registered book.
        self.confinement = Confinement(served)
        # Optional search modes chosen at launch; the model loads once, in warm_up().
        self.semantic, self.reranker = _semantic_runtime(semantic), reranker
        self._cache: OrderedDict[tuple[str, int], LoadedBook] = OrderedDict()
        self._cache_lock = threading.Lock()
        self._library: tuple[LibraryIndex, LibrarySearcher, CatchUp] | None = None
        self.registry.listeners.append(self._library_changed)

    # ------------------------------------------------------------------ helpers
    def _env(self, operation: str, **fields: Any) -> Envelope:
        return Envelope(server=SERVER_NAME, operation=operation, **fields)

    def _package(self, book_id: str) -> BookPackage:
        check_book_id(book_id)
        return self.registry.get(self.confinement.check(book_id))

    def _load(self, book_id: str) -> LoadedBook:
        pkg = self._package(book_id)
        key = (pkg.book_id, pkg.version)
        with self._cache_lock:
            loaded = self._cache.get(key)
            if loaded is not None:
                self._cache.move_to_end(key)
                return loaded
        loaded = LoadedBook(pkg)
        with self._cache_lock:
            self._cache[key] = loaded
            while len(self._cache) > _CACHE_SIZE:
                self._cache.popitem(last=False)
        return loaded

    def _record(self, loaded: LoadedBook, record_id: str) -> Record:
        try:
            return loaded.by_id[record_id]
        except KeyError:
            raise CoreError(
                Code.NOT_FOUND, f"No record {record_id!r} in {loaded.pkg.book_id!r}.",
                details={"records": len(loaded.records)},
                remediation="Use a record_id from search hits or the Skill's contents.",
            ) from None

    # ------------------------------------------------------------------ library search
    def library(self) -> tuple[LibraryIndex, LibrarySearcher, CatchUp]:
        """The library index of this data folder, its searcher and its background updater."""
        with self._cache_lock:
            if self._library is None:
                from ..search.library import LibrarySearcher
                from ..search.library_index import CatchUp, LibraryIndex

                index = LibraryIndex(self.registry)
                self._library = (index, LibrarySearcher(index), CatchUp(index))
            return self._library

    def _library_changed(self, book_id: str, version: int | None) -> None:
        """Registry listener: keep an existing library index current after init/remove."""
        from ..search.library_index import library_paths

        if not library_paths(self.registry.data_dir)[0].is_file():
            return  # never used here: the first library search builds it
        index, _searcher, _catch_up = self.library()
        report = index.update(only=[book_id], lock_timeout=LIBRARY_LISTENER_WAIT_S)
        if report.busy:
            log.info("library index busy; %s is indexed by the next library search", book_id)
