"""Optional semantic search: record vectors in the package, a model warmed once per process.

Off unless chosen. At ``init`` a chosen model embeds every record (heading path, then text; the
first :data:`~.embeddings.EMBED_CHARS` characters) into the package::

    embeddings/vectors.npy   float32, one L2-normalised row per record in reading order
                             (row i is the index's rowid i + 1)
    embeddings/model.json    the model's identity, the record count and a digest of the
                             record ids in order

At launch a server (or a CLI search) names the query-time model (:class:`SemanticConfig`);
:class:`SemanticRuntime` loads it once, in a background thread, and says ``warming`` until it
is ready. A search (:func:`hybrid_search`) embeds the query, ranks the records by cosine
similarity and lets the index fuse that ranking with the lexical one (:mod:`.fusion`), then
optionally reranks (:mod:`.rerank`). It never fails for want of semantics: every answer says
``semantic`` (off, unavailable with the reason, warming, ok) and ``rerank`` (off, unavailable,
skipped, ok), with the reasons in ``mode_details``.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ...core.errors import Code, CoreError
from ..model import Record
from .embeddings import (
    EMBED_CHARS,
    Embedder,
    ModelIdentity,
    ModelUnavailable,
    OpenAIEmbeddings,
    load_static_model,
)
from .fusion import RRF_K
from .index import MAX_TOP_K, BookIndex
from .rerank import Reranker, RerankMode, rerank
from .results import ModeDetails, SearchModes, SearchResult

if TYPE_CHECKING:  # numpy is imported where it is used: a lexical-only process never loads it
    import numpy as np

__all__ = [
    "EMBEDDINGS_DIR",
    "RERANK_POOL",
    "SemanticConfig",
    "SemanticMode",
    "SemanticRuntime",
    "SemanticState",
    "VectorStore",
    "embed_package",
    "hybrid_search",
    "modes_status",
    "record_text",
    "write_embeddings",
]

EMBEDDINGS_DIR = "embeddings"
"""The package folder holding the record vectors."""
RERANK_POOL = 30
"""Fused candidates sent to the reranker (at least top_k)."""
SemanticMode = Literal["off", "auto", "on"]
"""Per call: ``off`` lexical only; ``auto`` (default) hybrid when a model was chosen at launch
and the package has its vectors; ``on`` the same, with a warning when it cannot be."""
SemanticState = Literal["off", "unavailable", "warming", "ok"]
_FORMAT = 1
_LOCAL_BATCH = 256


def record_text(record: Record) -> str:
    """What is embedded for a record: its heading path, a line break, its text (capped)."""
    head = " > ".join(record.heading_path)
    return (f"{head}\n{record.text}" if head else record.text)[:EMBED_CHARS]


def _ids_digest(record_ids: Sequence[str]) -> str:
    return "sha256:" + hashlib.sha256("\n".join(record_ids).encode("utf-8")).hexdigest()


def write_embeddings(records: Sequence[Record], package_dir: Path, embedder: Embedder,
                     *, progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Embed ``records`` with ``embedder`` into ``package_dir/embeddings``; returns the meta.

    Raises:
        CoreError: whatever the embedder raises (a network adapter's typed errors).
    """
    import numpy as np

    ordered = sorted(records, key=lambda r: r.order)
    parts = []
    for start in range(0, len(ordered), _LOCAL_BATCH):
        batch = ordered[start:start + _LOCAL_BATCH]
        parts.append(embedder.embed([record_text(r) for r in batch]))
        if progress:
            progress(min(start + _LOCAL_BATCH, len(ordered)), len(ordered))
    dim = embedder.identity.dim
    vectors = np.concatenate(parts) if parts else np.zeros((0, dim), dtype=np.float32)
    folder = Path(package_dir) / EMBEDDINGS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    np.save(folder / "vectors.npy", vectors.astype(np.float32), allow_pickle=False)
    meta = {"format": _FORMAT, "identity": embedder.identity.model_dump(),
            "records": len(ordered), "record_ids": _ids_digest([r.record_id for r in ordered]),
            "chars_per_record": EMBED_CHARS, "text": "heading path, line break, record text"}
    (folder / "model.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    return meta


class VectorStore:
    """A package's record vectors, read once (and shared by threads: read-only)."""

    def __init__(self, identity: ModelIdentity, vectors: np.ndarray) -> None:
        self.identity = identity
        self.vectors = vectors

    @classmethod
    def open(cls, package_dir: Path, record_ids: Sequence[str]) -> VectorStore | None:
        """The package's vectors, or None when it has none.

        Raises:
            ModelUnavailable: the files are unreadable or belong to other records.
        """
        import numpy as np

        folder = Path(package_dir) / EMBEDDINGS_DIR
        if not (folder / "model.json").is_file():
            return None
        try:
            meta = json.loads((folder / "model.json").read_text(encoding="utf-8"))
            identity = ModelIdentity.model_validate(meta["identity"])
            vectors = np.load(folder / "vectors.npy", allow_pickle=False)
        except (OSError, ValueError, KeyError, TypeError):
            raise ModelUnavailable("the package's embeddings are unreadable") from None
        if vectors.shape != (len(record_ids), identity.dim) or meta.get(
                "record_ids") != _ids_digest(record_ids):
            raise ModelUnavailable("the package's embeddings do not match its records")
        return cls(identity, vectors.astype(np.float32, copy=False))

    def rank(self, query_vector: np.ndarray) -> list[tuple[float, int]]:
        """``(cosine, rowid)`` of every record with a positive similarity, best first."""
        import numpy as np

        if not self.vectors.size:
            return []
        sims = self.vectors @ query_vector.astype(np.float32)
        # Stable: equal similarities keep reading order.
        order = np.argsort(-sims, kind="stable")
        return [(float(sims[i]), int(i) + 1) for i in order if sims[i] > 0]


@dataclass(frozen=True)
class SemanticConfig:
    """The semantic model a process uses, as the user named it (nothing is downloaded).

    Exactly one of ``model_dir`` (a local model2vec folder) or ``url`` + ``model`` (an
    OpenAI-compatible embeddings endpoint; ``key_name`` names its API key in the environment
    or the OS keyring, never the key itself).
    """

    model_dir: Path | None = None
    url: str | None = None
    model: str | None = None
    key_name: str | None = None
    transport: Any = field(default=None, repr=False, compare=False)
    """An httpx transport for the endpoint (tests pass ``httpx.MockTransport``)."""

    def __post_init__(self) -> None:
        if (self.model_dir is None) == (self.url is None) or (self.url and not self.model):
            raise CoreError(Code.INVALID_ARGUMENT, "Choose a semantic model either as a local "
                            "model2vec folder or as an embeddings URL with a model name.",
                            remediation="--semantic-model DIR, or --embeddings-url URL "
                            "--embeddings-model NAME [--embeddings-key-env NAME]")

    def describe(self) -> str:
        """Where the model comes from, for messages (no secret)."""
        if self.model_dir is not None:
            return f"model2vec folder {self.model_dir}"
        return f"embeddings endpoint {self.url} model {self.model}"

    def load(self, transport: Any = None) -> Embedder:
        """Build the embedder (loads a local model; a network one needs no loading).

        Raises:
            ModelUnavailable: the local model cannot be loaded (the reason in the message).
        """
        if self.model_dir is not None:
            return load_static_model(self.model_dir)
        assert self.url is not None and self.model is not None
        return OpenAIEmbeddings(self.url, self.model, key_name=self.key_name,
                                transport=transport or self.transport)


class SemanticRuntime:
    """One process's semantic model: loaded once in the background, never per request.

    Args:
        config: the model chosen at launch.
        loader: builds the embedder (defaults to ``config.load``); tests pass their own.
    """

    def __init__(self, config: SemanticConfig | None = None, *,
                 loader: Callable[[], Embedder] | None = None) -> None:
        if loader is None:
            if config is None:
                raise ValueError("give a config or a loader")
            loader = config.load
        self.config = config
        self._loader = loader
        self._thread: threading.Thread | None = None
        self._done = threading.Event()
        self._embedder: Embedder | None = None
        self._error: str | None = None
        self._lock = threading.Lock()
        self.load_seconds: float | None = None

    def start(self) -> None:
        """Begin loading in a daemon thread (once; later calls do nothing)."""
        with self._lock:
            if self._thread is not None:
                return
            self._thread = threading.Thread(target=self._load, name="book-semantic-warm",
                                            daemon=True)
            self._thread.start()

    def _load(self) -> None:
        began = time.monotonic()
        try:
            self._embedder = self._loader()
        except ModelUnavailable as exc:
            self._error = str(exc)
        except Exception as exc:  # a broken model must not take the server down
            self._error = f"the model could not be loaded ({type(exc).__name__})"
        finally:
            self.load_seconds = round(time.monotonic() - began, 3)
            self._done.set()

    def wait(self, timeout: float | None = None) -> bool:
        """Start if needed and wait up to ``timeout`` seconds; whether loading has ended."""
        self.start()
        return self._done.wait(timeout)

    def state(self) -> tuple[SemanticState, str | None, Embedder | None]:
        """``warming``, ``unavailable`` (with the reason) or ``ok`` (with the embedder)."""
        if not self._done.is_set():
            return ("warming", "the semantic model is loading in the background; lexical "
                    "results only until it is ready", None)
        if self._embedder is None:
            return "unavailable", self._error or "the model could not be loaded", None
        return "ok", None, self._embedder

    def status(self) -> dict[str, Any]:
        """What ``status`` reports: state, reason, model, load time."""
        state, reason, embedder = self.state()
        return {"state": state, "reason": reason,
                "model": embedder.identity.label() if embedder else None,
                "source": self.config.describe() if self.config else None,
                "load_seconds": self.load_seconds}


def _remaining(deadline: float | None) -> float | None:
    return None if deadline is None else deadline - time.monotonic()


def hybrid_search(
    index: BookIndex,
    query: str,
    *,
    top_k: int = 10,
    strict: bool = False,
    hints: Mapping[str, str] | None = None,
    store: Callable[[], VectorStore | None] | None = None,
    runtime: SemanticRuntime | None = None,
    reranker: Reranker | None = None,
    semantic: SemanticMode = "auto",
    rerank_mode: RerankMode = "auto",
    deadline: float | None = None,
    texts: Callable[[str], str] | None = None,
    include_contents: bool = False,
    include_index: bool = False,
) -> SearchResult:
    """Search lexically, and semantically and with a rerank where chosen and possible.

    Args:
        index: the book's lexical index.
        store: returns the package's vectors (None: it has none; raises ModelUnavailable when
            they are unreadable); called only when semantic search is to run.
        runtime: the process's semantic model (None: none was chosen at launch).
        reranker: the process's rerank endpoint (None: none was chosen).
        semantic: ``off``, ``auto`` or ``on`` (see :data:`SemanticMode`).
        rerank_mode: ``off``, ``auto`` or ``on`` (see :mod:`.rerank`).
        deadline: ``time.monotonic()`` by which the answer is due; None: no deadline (network
            adapters still stop at 120 s).
        texts: record id → the text sent to the reranker.
        include_contents: also rank contents pages and navigation (see
            :meth:`BookIndex.search`).
        include_index: also rank a back-of-book index (see :meth:`BookIndex.search`).

    Returns:
        The index's result with ``modes`` and ``mode_details`` saying what ran and why not.
    """
    details = ModeDetails()
    sem_state: SemanticState = "off"
    ranking: list[tuple[float, int]] | None = None
    if semantic == "off":
        details.semantic_reason = "not asked for in this call (semantic=off)"
    elif runtime is None:
        sem_state = "unavailable" if semantic == "on" else "off"
        details.semantic_reason = ("no semantic model was chosen at launch (--semantic-model "
                                   "DIR or --embeddings-url URL --embeddings-model NAME)")
    else:
        sem_state, reason, embedder = runtime.state()
        details.semantic_reason = reason
        if embedder is not None:
            sem_state, ranking = _semantic_ranking(query, embedder, store, deadline, details)
    if ranking is not None:
        details.fusion = f"reciprocal-rank fusion, k={RRF_K}"
    fetch = top_k if rerank_mode == "off" or reranker is None else min(
        MAX_TOP_K, max(top_k, RERANK_POOL))
    result = index.search(query, top_k=fetch, strict=strict, hints=hints, semantic=ranking,
                          include_contents=include_contents, include_index=include_index)
    outcome = rerank(reranker, rerank_mode, query,
                     [texts(h.record_id) if texts else h.snippet for h in result.hits],
                     remaining=_remaining(deadline))
    hits = result.hits
    if outcome.state == "ok" and outcome.order is not None:
        reordered = []
        for place, (i, relevance) in enumerate(outcome.order, start=1):
            hit = hits[i]
            reordered.append(hit.model_copy(update={
                "score": relevance, "rank": place, "ranks": {**hit.ranks, "rerank": place},
                "scores": {**hit.scores, "rerank": relevance}}))
        hits = reordered
    details.rerank_reason = outcome.reason
    details.rerank_model = getattr(reranker, "name", None) if reranker else None
    details.rerank_seconds = outcome.seconds
    return result.model_copy(update={
        "top_k": top_k, "hits": hits[:top_k], "mode_details": details,
        "modes": SearchModes(lexical_engine=result.modes.lexical_engine, semantic=sem_state,
                             rerank=outcome.state),
    })


def _semantic_ranking(query: str, embedder: Embedder,
                      store: Callable[[], VectorStore | None] | None, deadline: float | None,
                      details: ModeDetails) -> tuple[SemanticState, list[tuple[float, int]] | None]:
    import numpy as np

    try:
        vectors = store() if store else None
    except ModelUnavailable as exc:
        details.semantic_reason = str(exc)
        return "unavailable", None
    if vectors is None:
        details.semantic_reason = ("this package has no embeddings (init it again with "
                                   "--semantic-model or --embeddings-url)")
        return "unavailable", None
    details.semantic_model = vectors.identity.label()
    ours = embedder.identity
    if not ours.same_model(vectors.identity):
        details.semantic_reason = (f"the package's embeddings were made with "
                                   f"{vectors.identity.label()}, this process runs "
                                   f"{ours.label()}; launch with the same model or init again")
        return "unavailable", None
    remaining = _remaining(deadline)
    if remaining is not None and remaining <= 0:
        details.semantic_reason = "the deadline had passed before the query could be embedded"
        return "unavailable", None
    try:
        qvec = embedder.embed([query], timeout=remaining)[0]
    except CoreError as err:
        details.semantic_reason = f"the query could not be embedded: {err.code}: {err.message}"
        return "unavailable", None
    if qvec.shape != (vectors.identity.dim,):
        details.semantic_reason = (f"the model answered a {qvec.shape[0]}-d vector; the "
                                   f"package's are {vectors.identity.dim}-d")
        return "unavailable", None
    if not np.any(qvec):
        details.semantic_reason = ("ok, but the model knows no token of this query: nothing "
                                   "matched semantically")
    return "ok", vectors.rank(qvec)


def embed_package(records: Sequence[Record], build_dir: Path, config: SemanticConfig,
                  *, transport: Any = None) -> dict[str, Any]:
    """``init``'s step: load the chosen model, embed every record into the build folder.

    Returns:
        What the manifest's ``capabilities.semantic`` says (the model identity and counts).

    Raises:
        CoreError: CAPABILITY_UNAVAILABLE when the model cannot be loaded; a network
            adapter's typed errors. Either way init fails and registers nothing.
    """
    try:
        embedder = config.load(transport)
    except ModelUnavailable as exc:
        raise CoreError(Code.CAPABILITY_UNAVAILABLE, f"The semantic model cannot be used: "
                        f"{exc}.", remediation="Name a model2vec folder (config.json, "
                        "tokenizer.json, model.safetensors) or an embeddings endpoint; "
                        "nothing is downloaded.") from None
    began = time.monotonic()
    meta = write_embeddings(records, build_dir, embedder)
    return {"model": meta["identity"], "records": meta["records"],
            "folder": EMBEDDINGS_DIR, "seconds": round(time.monotonic() - began, 3)}


def modes_status(package_semantic: Mapping[str, Any] | None, runtime: SemanticRuntime | None,
                 reranker: Reranker | None) -> dict[str, Any]:
    """The search capabilities ``status`` reports, in the states a search would report."""
    semantic: dict[str, Any]
    stored = None
    if package_semantic:
        try:
            stored = ModelIdentity.model_validate(package_semantic.get("model"))
        except ValueError:
            stored = None
    if runtime is None:
        semantic = {"state": "off", "reason": "no semantic model was chosen at launch"}
    else:
        state, reason, embedder = runtime.state()
        semantic = {"state": state, "reason": reason}
        if embedder is not None and stored is None:
            semantic = {"state": "unavailable", "reason": "this package has no embeddings"}
        elif embedder is not None and stored is not None and not embedder.identity.same_model(
                stored):
            semantic = {"state": "unavailable", "reason": f"the package's embeddings were made "
                        f"with {stored.label()}, this process runs {embedder.identity.label()}"}
        semantic["runtime"] = runtime.status()
    semantic["package_embeddings"] = stored.label() if stored else None
    rerank_info: dict[str, Any] = (
        {"state": "ok", "reason": None, "model": getattr(reranker, "name", None),
         "note": "per call: off | auto | on; skipped when the deadline would be missed"}
        if reranker is not None else
        {"state": "off", "reason": "no rerank endpoint was chosen at launch"})
    return {"lexical": "ok", "semantic": semantic["state"], "rerank": rerank_info["state"],
            "semantic_detail": semantic, "rerank_detail": rerank_info,
            "fusion": f"reciprocal-rank fusion, k={RRF_K}"}
