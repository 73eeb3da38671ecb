"""``book-agent add`` and ``sync``: a whole library in one command, incrementally.

1. **Read the sources**: folders (:func:`.sources.scan_paths`), a Zotero data directory
   (:mod:`.zotero`), a calibre library (:mod:`.calibre`) — each gives candidates and the items
   it skipped (notes, web links, missing files, other formats), reported, never fatal.
2. **Plan** against the registry (every registered book's manifest and ``origin.json``):
   a candidate whose origin is registered with the same SHA-256 is ``unchanged`` (metadata
   changed in the library: a metadata-only new version); with another SHA-256 it is
   ``updated`` (a new version, as ``init --replace``: old locators answer STALE_LOCATOR);
   an unknown origin whose SHA-256 is registered is ``moved`` when the registered book's file
   is gone (only ``origin.json`` changes), else a ``duplicate``; anything else is ``added``
   under an id derived from its title or file name (:func:`.sources.derive_id`). Hashes are
   read only where they can decide something (a known origin, or a size some registered
   book has) and remembered by size and mtime, so an unchanged library is not read again.
3. **Build** the new and changed books, ``jobs`` at once: each in a worker process of its
   own (spawned, recycled after a few books so memory stays bounded; ``jobs`` 1 builds in
   this process), each build published atomically by :meth:`.package.Registry.publish`. A
   file that is refused (encrypted, image-only, unreadable, too large) is reported with its
   reason; the batch goes on.

Interrupted — Ctrl-C, or the process killed outright — every book is either published whole
or not at all (a build folder of a dead process is swept by the next build of that book), and
the next ``add`` plans again from the registry: it continues where this one stopped. Workers
die with their parent (``PR_SET_PDEATHSIG`` on Linux, and a watchdog on every system).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import queue
import signal
import sys
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...core.envelope import Envelope, Level, QueryInfo, ResultInfo
from ...core.errors import Code, CoreError
from .sources import (
    Candidate,
    LibraryStore,
    Skipped,
    SourceSpec,
    derive_id,
    folder_key,
    scan_paths,
)

if TYPE_CHECKING:
    from ..service import BookService

__all__ = ["DEFAULT_MAX_BYTES", "MAX_LISTED", "BatchProgress", "Known", "default_jobs",
           "known_books", "refusal", "run_add", "run_task"]

DEFAULT_MAX_BYTES = 2 << 30
"""Files larger than this (2 GiB) are refused as too large (``--max-size`` changes it)."""
MAX_LISTED = 500
"""Skipped items listed one by one (all are counted)."""
_TASKS_PER_WORKER = 8
"""A worker process is replaced after this many books: memory a build keeps is given back."""

BatchProgress = Callable[[int, int, str, str, float | None], None]
"""``(done, total, current file, what happened, ETA seconds or None)``."""


def default_jobs() -> int:
    """Cores − 1, at least 1 (the cores this process may use)."""
    try:
        cores = len(os.sched_getaffinity(0))  # type: ignore[attr-defined,unused-ignore]
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, cores - 1)


# --------------------------------------------------------------------------- the registry


@dataclass
class Known:
    """A registered book as ``add`` sees it."""

    book_id: str
    version: int | None
    sha256: str | None
    size: int | None
    origin: dict[str, Any] | None
    metadata: Any = None
    reference: Any = None
    damaged: bool = False


def known_books(service: BookService) -> list[Known]:
    """Every registered book: its source hash and size, origin (as last seen) and metadata."""
    out = []
    registry = service.registry
    for book_id in registry.list_ids():
        sidecar = registry.origin(book_id)
        try:
            pkg = registry.get(book_id)
            m = pkg.manifest
        except CoreError:
            out.append(Known(book_id, None, None, None, sidecar, damaged=True))
            continue
        raw = m.get("library")
        library: dict[str, Any] = raw if isinstance(raw, dict) else {}
        out.append(Known(book_id, pkg.version, m["source"]["sha256"], m["source"]["size"],
                         sidecar or library.get("origin"), library.get("metadata"),
                         m.get("reference")))
    return out


def _norm(value: Any) -> Any:
    """A value as it reads back from JSON (tuples are lists), for comparison."""
    return json.loads(json.dumps(value, ensure_ascii=False, sort_keys=True))


def _without_id(reference: Any) -> Any:
    """A reference for comparison: the package adds the book id as ``id``."""
    if not isinstance(reference, Mapping):
        return _norm(reference)
    return _norm({k: v for k, v in reference.items() if k != "id"})


# --------------------------------------------------------------------------- refusals


def refusal(err: CoreError) -> str:
    """The reason a file was refused, in a word or two."""
    from ..ingest.pdf import IMAGE_ONLY_REMEDIATION

    if err.code == Code.ENCRYPTED_SOURCE:
        return "encrypted"
    if err.code == Code.EMPTY_SOURCE:
        if err.remediation == IMAGE_ONLY_REMEDIATION or "image-only" in err.message:
            return "image-only (no text layer; --allow-image-only registers it)"
        return "empty (no text)"
    if err.code in (Code.CORRUPT_SOURCE, Code.UNSAFE_SOURCE):
        return "unreadable (damaged)" if err.code == Code.CORRUPT_SOURCE else \
            "unreadable (unsafe content)"
    if err.code == Code.UNSUPPORTED_FORMAT:
        return "not a PDF, EPUB or Markdown file"
    if err.code in (Code.NOT_FOUND, Code.PATH_UNUSABLE):
        return "unreadable (cannot be read)"
    if err.code == Code.BOOK_BUSY:
        return "busy (another process is building it)"
    return f"failed ({err.code})"


def run_task(service: BookService, task: Mapping[str, Any]) -> dict[str, Any]:
    """Build one book (``add``, ``update`` or ``refresh``); never raises for a bad file."""
    began = time.monotonic()
    try:
        if task["action"] == "refresh":
            env = service.refresh_library(task["book_id"], task["library"])
        else:
            env = service.init(Path(task["path"]), book_id=task["book_id"],
                               replace=task["action"] == "update",
                               allow_image_only=bool(task.get("allow_image_only")),
                               library=task["library"], ocr=_ocr_options(task.get("ocr")))
    except CoreError as err:
        return {"ok": False, "code": str(err.code), "message": err.message,
                "reason": refusal(err), "seconds": round(time.monotonic() - began, 2)}
    except Exception as exc:  # one bad file never stops the batch
        return {"ok": False, "code": str(Code.INTERNAL_ERROR),
                "message": f"{type(exc).__name__}: {exc}"[:300],
                "reason": f"failed ({type(exc).__name__})",
                "seconds": round(time.monotonic() - began, 2)}
    data = env.data or {}
    return {"ok": True, "version": data.get("version"), "title": data.get("title"),
            "warnings": len(env.diagnostics), "seconds": round(time.monotonic() - began, 2)}


def _ocr_options(asked: Mapping[str, Any] | None) -> Any:
    """The ``OcrOptions`` of a task (``{"mode", "language"}``, plain data across processes)."""
    if not asked:
        return None
    from ..ocr import OcrOptions

    return OcrOptions(mode=asked["mode"], language=asked["language"])


# --------------------------------------------------------------------------- workers


def _die_with_parent(parent: int) -> None:
    """End this worker when the process that started it is gone (SIGKILL included)."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(Exception):
            import ctypes

            ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PDEATHSIG
    from ..package import pid_alive

    def watch() -> None:
        while True:
            time.sleep(0.5)
            gone = os.getppid() != parent if sys.platform != "win32" else \
                not pid_alive(parent)
            if gone:
                os._exit(1)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def _terminate(_signum: int, _frame: Any) -> None:
    raise SystemExit(143)


def _worker(data_dir: str, parent: int, tasks: Any, results: Any) -> None:
    """A build process: books from its queue until told to stop (None)."""
    os.environ.setdefault("PYMUPDF_MESSAGE", "fd:2")
    _die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    if hasattr(signal, "SIGTERM"):
        signal.signal(signal.SIGTERM, _terminate)  # the parent's stop: unwind, clean up
    from ..service import BookService

    service = BookService(data_dir)
    while True:
        item = tasks.get()
        if item is None:
            return
        number, task = item
        results.put(("done", os.getpid(), number, run_task(service, task)))


@dataclass
class _Slot:
    process: Any
    tasks: Any
    current: int | None = None
    count: int = 0


class _Pool:
    """``jobs`` spawned build processes, each fed one task at a time through its own queue
    (so the parent always knows which book each one is building)."""

    def __init__(self, data_dir: Path, jobs: int) -> None:
        import multiprocessing

        self.ctx = multiprocessing.get_context("spawn")
        self.data_dir, self.jobs = str(data_dir), jobs
        self.results = self.ctx.Queue()
        self.slots: dict[int, _Slot] = {}

    def spawn(self) -> _Slot:
        tasks = self.ctx.Queue()
        proc = self.ctx.Process(target=_worker, args=(self.data_dir, os.getpid(), tasks,
                                                      self.results), daemon=True,
                                name="book-agent-build")
        proc.start()
        slot = _Slot(proc, tasks)
        self.slots[int(proc.pid or 0)] = slot
        return slot

    def run(self, tasks: Sequence[dict[str, Any]],
            on_start: Callable[[int], None], on_done: Callable[[int, dict[str, Any]], None]
            ) -> None:
        pending = deque(range(len(tasks)))
        for _ in range(min(self.jobs, len(pending))):
            self.spawn()

        def feed(slot: _Slot) -> None:
            if pending and slot.current is None:
                number = pending.popleft()
                slot.current, slot.count = number, slot.count + 1
                slot.tasks.put((number, tasks[number]))
                on_start(number)

        for slot in list(self.slots.values()):
            feed(slot)
        while any(s.current is not None for s in self.slots.values()):
            try:
                _kind, pid, number, result = self.results.get(timeout=0.5)
            except queue.Empty:
                for pid, slot in list(self.slots.items()):
                    if not slot.process.is_alive() and slot.current is not None:
                        lost, slot.current = slot.current, None
                        del self.slots[pid]
                        on_done(lost, {"ok": False, "code": str(Code.INTERNAL_ERROR),
                                       "message": "the build process ended without an "
                                       f"answer (exit code {slot.process.exitcode}); out of "
                                       "memory?", "reason": "failed (build process died)"})
                        if pending:
                            feed(self.spawn())
                continue
            found = self.slots.get(pid)
            if found is None:
                continue
            slot = found
            slot.current = None
            on_done(number, result)
            if slot.count >= _TASKS_PER_WORKER and pending:
                slot.tasks.put(None)
                del self.slots[pid]
                slot = self.spawn()
            feed(slot)

    def close(self, *, kill: bool = False) -> None:
        """Stop every worker (``kill``: at once, their builds unwound and removed)."""
        for slot in self.slots.values():
            if kill:
                with contextlib.suppress(Exception):
                    slot.process.terminate()
            else:
                with contextlib.suppress(Exception):
                    slot.tasks.put(None)
        deadline = time.monotonic() + 10
        for slot in self.slots.values():
            slot.process.join(max(0.1, deadline - time.monotonic()))
            if slot.process.is_alive():
                slot.process.kill()
                slot.process.join(1)
        self.slots.clear()


# --------------------------------------------------------------------------- the batch


@dataclass
class _Read:
    """All candidates and skipped items of the sources, and what each source still holds."""

    candidates: list[Candidate] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    sources: list[dict[str, Any]] = field(default_factory=list)
    scopes: list[tuple[SourceSpec, set[str] | None, set[str]]] = field(default_factory=list)
    """Per source: the spec, the origin keys it still holds (None: a folder, look at the
    disk), and the Zotero library keys it holds (a moved data directory is still itself)."""
    resolved: list[SourceSpec] = field(default_factory=list)
    """The specs as read (a default Zotero folder named), to remember for ``sync``."""


def _read_sources(specs: Sequence[SourceSpec], data_dir: Path) -> _Read:
    out = _Read()
    folders = [s for s in specs if s.kind == "folder"]
    by_recursion: dict[bool, list[SourceSpec]] = defaultdict(list)
    for spec in folders:
        by_recursion[spec.recursive].append(spec)
    for recursive, group in by_recursion.items():
        found, skipped = scan_paths([Path(s.path) for s in group], recursive=recursive,
                                    exclude=data_dir)
        out.candidates += found
        out.skipped += skipped
        for spec in group:
            mine = [c for c in found if c.origin.get("root") == os.path.abspath(spec.path)
                    or c.key == folder_key(Path(spec.path))]
            out.sources.append({"kind": "folder", "path": spec.path, "recursive": recursive,
                                "files": len(mine)})
            out.scopes.append((spec, None, set()))
            out.resolved.append(spec)
    for spec in specs:
        if spec.kind == "zotero":
            from .zotero import read_zotero

            z = read_zotero(Path(spec.path) if spec.path else None, collection=spec.collection,
                            tag=spec.tag, attachments_base=Path(spec.attachments_base)
                            if spec.attachments_base else None)
            out.candidates += z.candidates
            out.skipped += z.skipped
            out.sources.append({"kind": "zotero", "path": str(z.data_dir),
                                "collection": spec.collection, "tag": spec.tag,
                                "items": z.items, "book_attachments": len(z.candidates),
                                "csl_mapping": z.csl_mapping,
                                "libraries": [{k: v for k, v in lib.items() if v is not None}
                                              for lib in z.libraries]})
            out.scopes.append((SourceSpec("zotero", str(z.data_dir)), z.present,
                               {str(lib["key"]) for lib in z.libraries}))
            out.resolved.append(dataclasses.replace(spec, path=str(z.data_dir)))
        elif spec.kind == "calibre":
            from .calibre import DEFAULT_FORMATS, read_calibre

            c = read_calibre(Path(spec.path), formats=spec.formats or DEFAULT_FORMATS)
            out.candidates += c.candidates
            out.skipped += c.skipped
            out.sources.append({"kind": "calibre", "path": spec.path, "books": c.items,
                                "formats": list(spec.formats or DEFAULT_FORMATS),
                                "library_uuid": c.library_uuid})
            out.scopes.append((spec, c.present, set()))
            out.resolved.append(spec)
    seen: set[str] = set()
    unique = []
    for cand in out.candidates:
        if cand.key not in seen:
            seen.add(cand.key)
            unique.append(cand)
    out.candidates = unique
    return out


def _in_scope(known: Known, spec: SourceSpec, libraries: set[str]) -> bool:
    """Whether a registered book came from this source (so its absence there means it left)."""
    origin = known.origin or {}
    if origin.get("kind") != spec.kind:
        return False
    if spec.kind == "folder":
        path = str(origin.get("path") or "")
        root = folder_key(Path(spec.path))
        return folder_key(Path(path)).startswith(root.rstrip(os.sep) + os.sep) or \
            folder_key(Path(path)) == root
    if spec.kind == "zotero":
        return folder_key(Path(str(origin.get("data_dir") or ""))) == \
            folder_key(Path(spec.path)) or str(origin.get("library")) in libraries
    return folder_key(Path(str(origin.get("library_dir") or ""))) == \
        folder_key(Path(spec.path))


def run_add(service: BookService, specs: Sequence[SourceSpec], *, jobs: int | None = None,
            dry_run: bool = False, allow_image_only: bool = False, prune: bool = False,
            max_bytes: int = DEFAULT_MAX_BYTES, progress: BatchProgress | None = None,
            operation: str = "book_add", remember: bool = True,
            ocr: Mapping[str, str] | None = None) -> Envelope:
    """Register every book of the sources that is new or changed; report the rest.

    Returns the ``book_add`` (or ``book_sync``) envelope: ``data.counts`` (added, updated,
    unchanged, moved, duplicate, refused, skipped, removed, pruned), ``items`` one per
    candidate (status, book id, version, path, reason), ``data.refused``, ``data.skipped``
    and ``data.removed`` (books whose item left the source; deleted only with ``prune``).
    ``data.interrupted`` is true when Ctrl-C stopped it (what was published stays).
    ``ocr`` (``{"mode": "missing"|"all", "language": "eng"}``) reads scanned PDF pages with
    Tesseract, as ``init --ocr`` does; a missing Tesseract is refused before any book is built.
    """
    began = time.monotonic()
    jobs = default_jobs() if jobs is None else jobs
    if not 1 <= jobs <= 64:
        raise CoreError(Code.INVALID_ARGUMENT, "--jobs must be between 1 and 64.",
                        remediation=f"Omit it for {default_jobs()} (cores - 1).")
    if ocr:
        from ..ocr import find_engine

        find_engine(ocr["language"])  # CAPABILITY_UNAVAILABLE naming what to install, at once
    data_dir = service.registry.data_dir
    store = LibraryStore(data_dir)
    lock = contextlib.nullcontext() if dry_run else store.lock()
    with lock:
        read = _read_sources(specs, data_dir)
        known = known_books(service)
        hashes = store.hashes()
        memo = store.refusals()
        items, tasks, refused = _plan(service, read.candidates, known, hashes, max_bytes,
                                      allow_image_only, dry_run, memo, ocr=ocr)
        matched = {i["book_id"] for i in items if i.get("book_id")}
        removed = []
        for spec, present, libraries in read.scopes:
            for k in known:
                if k.book_id in matched or not _in_scope(k, spec, libraries):
                    continue
                origin = k.origin or {}
                gone = (not Path(str(origin.get("path") or "")).exists()) if present is None \
                    else origin.get("key") not in present
                if gone:
                    removed.append({"book_id": k.book_id, "source": spec.kind,
                                    "origin": origin.get("key") or origin.get("path")})
        interrupted = False
        if not dry_run:
            interrupted = _build(service, tasks, items, refused, jobs, progress,
                                 len(items))
            hashes.save()
            store.save_refusals(_refusals(memo, read.candidates, tasks, items,
                                          allow_image_only))
            if remember:
                store.remember(read.resolved)
        pruned = []
        if prune and not dry_run and not interrupted:
            for r in removed:
                try:
                    service.remove(str(r["book_id"]))
                    pruned.append(str(r["book_id"]))
                except CoreError as err:
                    r["prune_failed"] = err.message
    counts: dict[str, int] = defaultdict(int)
    for item in items:
        counts[item["status"]] += 1
    counts["skipped"] = len(read.skipped)
    counts["removed"] = len(removed)
    counts["pruned"] = len(pruned)
    skipped_by: dict[str, int] = defaultdict(int)
    for s in read.skipped:
        skipped_by[s.reason.split(" (")[0]] += 1
    data = {
        "dry_run": dry_run, "jobs": jobs, "interrupted": interrupted,
        "sources": read.sources,
        "counts": {k: counts.get(k, 0) for k in (
            ("would_add", "would_update", "unchanged", "moved", "duplicate", "refused")
            if dry_run else ("added", "updated", "unchanged", "moved", "duplicate",
                             "refused", "not_built"))} | {
            "skipped": counts["skipped"], "removed": counts["removed"],
            "pruned": counts["pruned"]},
        "refused": [i for i in items if i["status"] == "refused"],
        "skipped": [s.to_data() for s in read.skipped[:MAX_LISTED]],
        "skipped_by_reason": dict(skipped_by),
        "removed": removed, "pruned": pruned,
        "seconds": round(time.monotonic() - began, 2),
    }
    env = Envelope(server="book-agent", operation=operation, items=items, data=data,
                   query=QueryInfo(input={"sources": [s.to_data() for s in specs],
                                          "dry_run": dry_run, "jobs": jobs, "prune": prune,
                                          "allow_image_only": allow_image_only,
                                          "ocr": dict(ocr) if ocr else None}),
                   result=ResultInfo(total=len(items), returned=len(items)))
    if len(read.skipped) > MAX_LISTED:
        env.diagnose(Level.info, Code.COUNT_CAPPED, f"{len(read.skipped)} items were skipped; "
                     f"the first {MAX_LISTED} are listed.", hint="skipped_by_reason counts "
                     "them all.")
    if counts.get("refused"):
        env.diagnose(Level.warning, Code.UPSTREAM_DIAGNOSTIC,
                     f"{counts['refused']} file(s) were refused; see data.refused for each "
                     "reason.", hint="OCR image-only PDFs, or pass --allow-image-only.")
    if removed and not prune:
        env.diagnose(Level.info, Code.UPSTREAM_DIAGNOSTIC,
                     f"{len(removed)} registered book(s) are no longer in their source; "
                     "they were kept.", hint="--prune removes them.")
    if interrupted:
        env.diagnose(Level.warning, Code.UPSTREAM_DIAGNOSTIC, "Interrupted: the books "
                     "finished so far are registered; the rest were not built.",
                     hint="Run the same add again (or book-agent sync) to continue.")
    return env


def _refusals(memo: Mapping[str, Any], candidates: Sequence[Candidate],
              tasks: Sequence[dict[str, Any]], items: Sequence[dict[str, Any]],
              allow_image_only: bool) -> dict[str, Any]:
    """The refusals memo after this run: files refused now, and earlier ones still there."""
    present = {c.key for c in candidates}
    out = {k: v for k, v in memo.items() if k in present}
    for t in tasks:
        item = items[t["item"]]
        key = item["origin"]
        if item["status"] == "refused" and item.get("code") != str(Code.INTERNAL_ERROR):
            try:
                st = Path(t["path"]).stat()
            except OSError:
                continue
            out[key] = {"size": st.st_size, "mtime_ns": st.st_mtime_ns,
                        "allow_image_only": allow_image_only, "reason": item.get("reason"),
                        "code": item.get("code"), "message": item.get("message")}
        elif item["status"] != "refused":
            out.pop(key, None)
    return out


def _plan(service: BookService, candidates: Sequence[Candidate], known: Sequence[Known],
          hashes: Any, max_bytes: int, allow_image_only: bool, dry_run: bool,
          memo: Mapping[str, Any] | None = None, *, ocr: Mapping[str, str] | None = None
          ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """Decide each candidate (see the module docstring); origin-only changes are written
    here (unless ``dry_run``). Returns (items, build tasks, refused)."""
    registry = service.registry
    by_origin = {str(k.origin["key"]): k for k in known if k.origin and k.origin.get("key")}
    by_sha: dict[str, list[Known]] = defaultdict(list)
    for k in known:
        if k.sha256:
            by_sha[k.sha256].append(k)
    known_sizes = {k.size for k in known if k.size is not None}
    sizes: dict[int, int] = defaultdict(int)
    stats: dict[str, os.stat_result | None] = {}
    for cand in candidates:
        try:
            stat = cand.path.stat()
            stats[cand.key] = stat
            sizes[stat.st_size] += 1
        except OSError:
            stats[cand.key] = None
    taken = set(registry.list_ids())
    batch_shas: dict[str, str] = {}
    items: list[dict[str, Any]] = []
    tasks: list[dict[str, Any]] = []
    refused: list[dict[str, Any]] = []
    claimed: set[str] = set()
    verb = "would_" if dry_run else ""

    def item(cand: Candidate, status: str, **more: Any) -> dict[str, Any]:
        out = {"status": status, "path": str(cand.path), "source": cand.origin["kind"],
               "origin": cand.key, "title": (cand.metadata or {}).get("title")}
        out.update({k: v for k, v in more.items() if v is not None})
        if out["title"] is None:
            del out["title"]
        items.append(out)
        return out

    def record_origin(k: Known, cand: Candidate) -> None:
        if not dry_run and _norm(k.origin) != _norm(cand.origin):
            with contextlib.suppress(CoreError):
                registry.set_origin(k.book_id, cand.origin)

    def task(cand: Candidate, action: str, book_id: str, why: str, size: int) -> None:
        status = {"add": "added", "update": "updated", "refresh": "updated"}[action]
        entry = item(cand, (verb + ("add" if action == "add" else "update")) if dry_run
                     else "not_built", book_id=book_id, why=why)
        entry["planned"] = status
        tasks.append({"action": action, "path": str(cand.path), "book_id": book_id,
                      "library": cand.library(), "allow_image_only": allow_image_only,
                      "ocr": dict(ocr) if ocr else None, "size": size,
                      "item": len(items) - 1, "name": cand.path.name})

    for cand in candidates:
        found = stats.get(cand.key)
        if found is None:
            refused.append(item(cand, "refused", reason="unreadable (cannot be read)",
                                code=str(Code.NOT_FOUND)))
            continue
        st = found
        if st.st_size > max_bytes:
            refused.append(item(cand, "refused", reason=f"too large ({st.st_size:,} bytes; "
                                f"the limit is {max_bytes:,}, --max-size changes it)",
                                code=str(Code.INVALID_ARGUMENT)))
            continue
        match = by_origin.get(cand.key)
        if match is not None and match.book_id in claimed:
            match = None
        need_hash = match is not None or st.st_size in known_sizes or sizes[st.st_size] > 1
        sha = None
        if need_hash:
            try:
                sha, _size = hashes.sha256(cand.path)
            except OSError:
                refused.append(item(cand, "refused", reason="unreadable (cannot be read)",
                                    code=str(Code.PATH_UNUSABLE)))
                continue
        if match is not None:
            claimed.add(match.book_id)
            if match.damaged:
                task(cand, "update", match.book_id, "repair (the package is damaged)",
                     st.st_size)
            elif sha != match.sha256:
                task(cand, "update", match.book_id, "the file changed", st.st_size)
            elif cand.metadata is not None and (
                    _norm(cand.metadata) != _norm(match.metadata)
                    or _without_id(cand.reference) != _without_id(match.reference)):
                task(cand, "refresh", match.book_id, "the library's metadata changed",
                     st.st_size)
            else:
                moved = str((match.origin or {}).get("path")) != str(cand.path)
                record_origin(match, cand)
                item(cand, "moved" if moved else "unchanged", book_id=match.book_id,
                     version=match.version, was=(match.origin or {}).get("path")
                     if moved else None)
            continue
        twins = [k for k in by_sha.get(sha or "", []) if k.book_id not in claimed]
        if twins:
            twin = twins[0]
            origin = twin.origin or {}
            if not origin or (origin.get("kind") == cand.origin["kind"] == "folder"
                              and not Path(str(origin.get("path") or "")).exists()):
                claimed.add(twin.book_id)
                record_origin(twin, cand)
                item(cand, "moved" if origin else "unchanged", book_id=twin.book_id,
                     version=twin.version, was=origin.get("path"),
                     why=None if origin else "already registered (by init); now tracked")
            else:
                item(cand, "duplicate", book_id=twin.book_id,
                     why=f"the same file as book {twin.book_id} ({origin.get('path')})")
            continue
        if sha is not None and sha in batch_shas:
            item(cand, "duplicate", why=f"the same file as {batch_shas[sha]}")
            continue
        if sha is not None:
            batch_shas[sha] = str(cand.path)
        before = (memo or {}).get(cand.key)
        if isinstance(before, dict) and before.get("size") == st.st_size and \
                before.get("mtime_ns") == st.st_mtime_ns and \
                ((bool(before.get("allow_image_only")) == allow_image_only and not ocr)
                 or not str(before.get("reason")).startswith("image-only")):
            refused.append(item(cand, "refused", reason=before.get("reason"),
                                code=before.get("code"), message=before.get("message"),
                                why="unchanged since it was refused"))
            continue
        book_id = derive_id(cand.title_hint, taken, from_title=cand.metadata is not None)
        taken.add(book_id)
        task(cand, "add", book_id, "new", st.st_size)
    return items, tasks, refused


def _build(service: BookService, tasks: Sequence[dict[str, Any]],
           items: list[dict[str, Any]], refused: list[dict[str, Any]], jobs: int,
           progress: BatchProgress | None, total: int) -> bool:
    """Run the build tasks; fill their items in. True when interrupted (Ctrl-C)."""
    done_items = total - len(tasks)
    work = sum(t["size"] for t in tasks) or 1
    state = {"done": done_items, "bytes": 0, "began": time.monotonic()}

    def eta() -> float | None:
        if not state["bytes"]:
            return None
        elapsed = time.monotonic() - state["began"]
        return elapsed / state["bytes"] * max(0, work - state["bytes"])

    def started(number: int) -> None:
        if progress is not None:
            progress(int(state["done"]), total, tasks[number]["name"], "building", eta())

    def finished(number: int, result: dict[str, Any]) -> None:
        t = tasks[number]
        entry = items[t["item"]]
        planned = entry.pop("planned", None)
        if result.get("ok"):
            entry["status"] = planned
            entry["version"] = result.get("version")
            if result.get("title"):
                entry["title"] = result["title"]
            if t["action"] != "add":
                with contextlib.suppress(CoreError):
                    service.registry.set_origin(t["book_id"], t["library"]["origin"])
        else:
            entry["status"] = "refused"
            entry.update({k: result.get(k) for k in ("reason", "code", "message")})
            if t["action"] == "add":
                entry.pop("book_id", None)
            refused.append(entry)
        entry["seconds"] = result.get("seconds")
        state["done"] += 1
        state["bytes"] += t["size"]
        if progress is not None:
            progress(int(state["done"]), total, t["name"], str(entry["status"]), eta())

    if progress is not None and not tasks:
        progress(total, total, "", "unchanged", None)
    if not tasks:
        return False
    if jobs == 1 or len(tasks) == 1:
        try:
            for number, t in enumerate(tasks):
                started(number)
                finished(number, run_task(service, t))
        except KeyboardInterrupt:
            return True
        return False
    pool = _Pool(service.registry.data_dir, min(jobs, len(tasks)))
    try:
        pool.run(tasks, started, finished)
    except KeyboardInterrupt:
        pool.close(kill=True)
        return True
    pool.close()
    return False
