"""Embedding adapters: a local model2vec folder (numpy only) and an OpenAI-compatible endpoint.

Both turn texts into L2-normalised float32 rows and carry a :class:`ModelIdentity`, which is
stored in the package next to the record vectors and compared with the model a server is
launched with: vectors of one model are never queried with another.

The model2vec folder layout read here (what the model2vec loaders read):

- ``config.json``: optional ``normalize`` (default true) and ``model_name``;
- ``tokenizer.json``: a Hugging Face ``tokenizers`` document, read by the ``tokenizers``
  library model2vec itself uses (every normalizer, pre-tokenizer and model it has:
  WordPiece, Unigram with a ``Precompiled`` normalizer, BPE …);
- ``model.safetensors``: read with the ``safetensors`` library: tensor ``embeddings`` (or
  ``0``), 2-D (F32, F16, I8 …), one row per token id, or per cluster with ``mapping`` (token id
  → row, vocabulary quantization); optional ``weights`` (a scale per token id).

A text is encoded as model2vec's ``StaticModel.encode`` does: cut to ``max_length`` (config,
default :data:`MAX_TOKENS`) × the vocabulary's median token length in characters, tokenised
without special tokens and truncated to ``max_length`` tokens, unknown tokens dropped, the
(weighted) mean of their rows, L2-normalised (always, for search: cosine similarity is a dot
product of normalised rows). Tests compare the vectors with model2vec's own on a real model.

Nothing here downloads anything: a missing file is a :class:`ModelUnavailable` naming it.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:  # numpy is imported where it is used: a lexical-only process never loads it
    import numpy as np

__all__ = [
    "EMBED_CHARS",
    "MAX_NETWORK_SECONDS",
    "MAX_TOKENS",
    "Embedder",
    "ModelIdentity",
    "ModelUnavailable",
    "OpenAIEmbeddings",
    "StaticModel",
    "endpoint_url",
    "load_static_model",
    "post_json_sync",
    "read_safetensors",
]

MAX_TOKENS = 512
"""Tokens of a text a static model pools (model2vec's default)."""
EMBED_CHARS = 2000
"""Characters of a record (heading path, then text) embedded; the rest is not."""
MAX_NETWORK_SECONDS = 120.0
"""Upper bound of one network adapter call, whatever deadline the caller has."""
_BATCH = 64


class ModelUnavailable(Exception):
    """A model cannot be used; the message says why, fit to show the user."""


class ModelIdentity(BaseModel):
    """What made a set of vectors; two identities match when kind, name, dim and print do."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["model2vec", "openai"]
    name: str = Field(description="The model's name (model2vec config or folder; API model).")
    dim: int = Field(description="Vector dimensions.")
    fingerprint: str = Field(
        description="model2vec: SHA-256 of model.safetensors, tokenizer.json and the normalize "
        "flag; openai: the model name (the endpoint is not part of it: the same model may be "
        "served from another host).")

    def same_model(self, other: ModelIdentity) -> bool:
        """Whether vectors of ``other`` can be compared with vectors of this model."""
        # A dim of 0 is not known yet (an endpoint that has not answered).
        return (self.kind, self.name, self.fingerprint) == (
            other.kind, other.name, other.fingerprint) and (
            self.dim == other.dim or 0 in (self.dim, other.dim))

    def label(self) -> str:
        """A short human description, e.g. ``model2vec potion-base-8M (256-d)``."""
        return f"{self.kind} {self.name} ({self.dim}-d)"


class Embedder(Protocol):
    """What search asks of an embedding model."""

    identity: ModelIdentity

    def embed(self, texts: Sequence[str], *, timeout: float | None = None) -> np.ndarray:
        """L2-normalised float32 rows, one per text (a zero row for a text with no tokens)."""
        ...


# --------------------------------------------------------------------------- safetensors
def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """The tensors of a ``.safetensors`` file, read with the ``safetensors`` library (its own
    header and bounds checks); ModelUnavailable with the library's reason when it refuses."""
    from safetensors import safe_open

    try:
        with safe_open(str(path), framework="numpy") as fh:
            return {name: fh.get_tensor(name) for name in fh.keys()}  # noqa: SIM118
    except Exception as exc:  # safetensors raises its own SafetensorError (and OSError)
        raise ModelUnavailable(f"{Path(path).name} is not a readable safetensors file "
                               f"({_reason(exc)})") from None


def _reason(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return (text[:200] or type(exc).__name__)


# --------------------------------------------------------------------------- tokenizer
class _Tokenizer:
    """A Hugging Face ``tokenizers`` tokenizer, used as model2vec uses it: no special tokens,
    unknown tokens dropped, at most ``max_length`` tokens."""

    def __init__(self, doc: str, max_length: int | None) -> None:
        from tokenizers import Tokenizer

        try:
            self._tok = Tokenizer.from_str(doc)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # an Exception, or pyo3's PanicException for a bad field
            raise ModelUnavailable(f"tokenizer.json is not a tokenizer the tokenizers "
                                   f"library reads ({_reason(exc)})") from None
        self._tok.no_padding()
        if max_length is not None:
            self._tok.enable_truncation(max_length)
        else:
            self._tok.no_truncation()
        self.size = self._tok.get_vocab_size(with_added_tokens=False)
        self.unk_id = _unk_id(self._tok, doc)
        self._median: int | None = None

    @property
    def median_length(self) -> int:
        """The median token length in characters (model2vec cuts a text to max_length × this
        before tokenising); worked out on first use, as it reads the whole vocabulary."""
        if self._median is None:
            tok = self._tok
            lengths = sorted(len(tok.id_to_token(i) or "") for i in range(self.size))
            self._median = max(int(_median(lengths)), 1) if lengths else 1
        return self._median

    def ids(self, text: str) -> list[int]:
        """Token ids of ``text`` (no special tokens, the unknown token dropped)."""
        ids = self._tok.encode(text, add_special_tokens=False).ids
        unk = self.unk_id
        return [i for i in ids if i != unk] if unk is not None else list(ids)

    def batch_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """:meth:`ids` of many texts at once (the library tokenises them in parallel)."""
        unk = self.unk_id
        out = self._tok.encode_batch_fast(list(texts), add_special_tokens=False)
        return [[i for i in e.ids if i != unk] if unk is not None else list(e.ids)
                for e in out]


def _median(values: list[int]) -> float:
    n = len(values)
    mid = n // 2
    return float(values[mid]) if n % 2 else (values[mid - 1] + values[mid]) / 2


def _unk_id(tok: Any, doc: str) -> int | None:
    """The unknown token's id (model2vec drops it): WordPiece, BPE and WordLevel name it,
    Unigram gives its id."""
    name = getattr(tok.model, "unk_token", None)
    if name:
        return tok.token_to_id(name)
    # The Unigram model's "unk_id": found in the text (parsing a 10 MB vocabulary twice
    # would double the load time); a vocabulary entry is never a key followed by ":".
    found = _UNK_ID.search(doc)
    return int(found.group(1)) if found else None


_UNK_ID = re.compile(r'"unk_id"\s*:\s*(\d+)')


# --------------------------------------------------------------------------- static model
@dataclass
class StaticModel:
    """A model2vec static-embedding model in memory (load with :func:`load_static_model`)."""

    identity: ModelIdentity
    vectors: np.ndarray
    tokenizer: _Tokenizer
    weights: np.ndarray | None
    mapping: np.ndarray | None
    max_length: int | None = MAX_TOKENS

    def embed(self, texts: Sequence[str], *, timeout: float | None = None) -> np.ndarray:
        """Mean of each text's token rows (weighted, through the vocabulary mapping), as
        model2vec's ``encode`` computes it, L2-normalised; ``timeout`` is ignored (local)."""
        import numpy as np

        out = np.zeros((len(texts), self.identity.dim), dtype=np.float32)
        cut = None if self.max_length is None else self.max_length * self.tokenizer.median_length
        batch = [text[:cut] if cut is not None else text for text in texts]
        for n, ids_list in enumerate(self.tokenizer.batch_ids(batch)):
            ids = np.asarray(ids_list, dtype=np.int64)
            ids = ids[(ids >= 0) & (ids < self.tokenizer.size)]
            if not ids.size:
                continue
            rows = self.mapping[ids] if self.mapping is not None else ids
            block = self.vectors[rows].astype(np.float32)
            if self.weights is not None:
                block = block * self.weights[ids, None].astype(np.float32)
            out[n] = block.mean(axis=0)
        return _unit_rows(out)


def _unit_rows(matrix: np.ndarray) -> np.ndarray:
    import numpy as np

    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.maximum(norms, 1e-12)).astype(np.float32)


def load_static_model(folder: Path | str) -> StaticModel:
    """Load a model2vec folder (see the module docstring) with ``tokenizers`` and
    ``safetensors``; never downloads.

    Raises:
        ModelUnavailable: a file is missing or unreadable, or the libraries refuse it; the
            message names what.
    """
    import numpy as np

    root = Path(folder).expanduser()
    if not root.is_dir():
        raise ModelUnavailable(f"no model folder at {root}")
    files = {name: root / name for name in ("config.json", "tokenizer.json",
                                            "model.safetensors")}
    missing = [name for name, path in files.items() if not path.is_file()]
    if missing:
        raise ModelUnavailable(f"the model folder {root} has no {', '.join(missing)} "
                               "(a model2vec folder has config.json, tokenizer.json and "
                               "model.safetensors)")
    try:
        config = json.loads(files["config.json"].read_text(encoding="utf-8"))
        tok_bytes = files["tokenizer.json"].read_bytes()
        tok_doc = tok_bytes.decode("utf-8")
    except (UnicodeDecodeError, ValueError, OSError) as exc:
        raise ModelUnavailable(f"unreadable config.json or tokenizer.json in {root} "
                               f"({type(exc).__name__})") from None
    if not isinstance(config, dict):
        raise ModelUnavailable(f"config.json in {root} is not a JSON object")
    max_length = config.get("max_length", MAX_TOKENS)
    if max_length is not None and (not isinstance(max_length, int) or max_length < 1):
        max_length = MAX_TOKENS
    tokenizer = _Tokenizer(tok_doc, max_length)
    tensors = read_safetensors(files["model.safetensors"])
    matrix = tensors.get("embeddings", tensors.get("0"))
    if matrix is None or matrix.ndim != 2:
        raise ModelUnavailable("model.safetensors has no 2-D 'embeddings' tensor")
    mapping = tensors.get("mapping")
    weights = tensors.get("weights")
    rows_needed = tokenizer.size if mapping is None else int(mapping.max(initial=-1)) + 1
    if matrix.shape[0] < rows_needed or (mapping is not None and len(mapping) < tokenizer.size):
        raise ModelUnavailable(f"model.safetensors has {matrix.shape[0]} rows for a vocabulary "
                               f"of {tokenizer.size} tokens")
    normalize = bool(config.get("normalize", True))
    digest = hashlib.sha256()
    digest.update(files["model.safetensors"].read_bytes())
    digest.update(tok_bytes)
    digest.update(b"normalize=1" if normalize else b"normalize=0")
    name = str(config.get("model_name") or root.name)
    identity = ModelIdentity(kind="model2vec", name=name, dim=int(matrix.shape[1]),
                             fingerprint="sha256:" + digest.hexdigest())
    return StaticModel(identity=identity, vectors=matrix, tokenizer=tokenizer,
                       weights=None if weights is None else weights.reshape(-1),
                       mapping=None if mapping is None else mapping.reshape(-1).astype(np.int64),
                       max_length=max_length)


# --------------------------------------------------------------------------- network
def endpoint_url(base: str, suffix: str) -> str:
    """``base`` when it already ends in ``/suffix``, else ``base`` + ``/suffix``."""
    base = base.rstrip("/")
    return base if base.endswith("/" + suffix) else f"{base}/{suffix}"


class OpenAIEmbeddings:
    """An OpenAI-compatible ``/v1/embeddings`` endpoint (OpenAI, Ollama, LM Studio, vLLM…).

    Args:
        url: the API base (``http://localhost:11434/v1``) or the full ``…/embeddings`` URL.
        model: the model name sent with every request.
        key_name: the secret's name (environment, then the OS keyring); None sends no key.
        dim: the dimensions expected (from the package); None learns them from the answer.
        transport: an httpx transport (tests pass ``httpx.MockTransport``).
    """

    def __init__(self, url: str, model: str, *, key_name: str | None = None,
                 dim: int | None = None, transport: Any = None) -> None:
        self.url = endpoint_url(url, "embeddings")
        self.model = model
        self.key_name = key_name
        self._transport = transport
        self.identity = ModelIdentity(kind="openai", name=model, dim=dim or 0,
                                      fingerprint=model)

    def embed(self, texts: Sequence[str], *, timeout: float | None = None) -> np.ndarray:
        """Embed ``texts`` in batches; each request within ``min(timeout, 120)`` seconds.

        Raises:
            CoreError: the endpoint's typed errors (TRANSPORT_ERROR, API_ERROR, RATE_LIMITED,
                DEADLINE_EXCEEDED), or API_ERROR for an answer without the vectors asked for.
        """
        import numpy as np

        from ...core.errors import Code, CoreError

        rows: list[list[float]] = []
        for start in range(0, len(texts), _BATCH):
            batch = [t[:EMBED_CHARS] or " " for t in texts[start:start + _BATCH]]
            body = post_json_sync(self.url, {"model": self.model, "input": batch},
                                  key_name=self.key_name, timeout=timeout,
                                  transport=self._transport)
            try:
                data = sorted(body["data"], key=lambda d: d.get("index", 0))
                got = [[float(x) for x in d["embedding"]] for d in data]
            except (KeyError, TypeError, ValueError, AttributeError):
                raise CoreError(Code.API_ERROR, "The embeddings endpoint answered without "
                                "data[].embedding.", details={"url": _safe(self.url)}) from None
            if len(got) != len(batch) or len({len(v) for v in got}) > 1:
                raise CoreError(Code.API_ERROR, "The embeddings endpoint answered with the "
                                "wrong number or shape of vectors.",
                                details={"asked": len(batch), "got": len(got)})
            rows.extend(got)
        matrix = np.asarray(rows, dtype=np.float32).reshape(len(texts), -1)
        dim = matrix.shape[1] if len(texts) else self.identity.dim
        if self.identity.dim and dim != self.identity.dim:
            raise CoreError(Code.API_ERROR, f"The endpoint's model answers {dim}-d vectors; "
                            f"the package's were {self.identity.dim}-d.",
                            remediation="Launch with the model the book was initialised with.")
        if not self.identity.dim:
            self.identity = self.identity.model_copy(update={"dim": int(dim)})
        return _unit_rows(matrix)


def _safe(url: str) -> str:
    import httpx

    u = httpx.URL(url)
    return f"{u.scheme}://{u.host}{u.path}"


def post_json_sync(url: str, payload: dict[str, Any], *, key_name: str | None,
                   timeout: float | None, transport: Any = None) -> Any:
    """POST ``payload`` through :class:`~readingroom.core.http.HttpClient` from sync code.

    Bounded by :data:`MAX_NETWORK_SECONDS` whatever ``timeout`` says. The key, when named, is
    resolved now (environment, then keyring) and only ever travels in the request header.

    Raises:
        CoreError: INVALID_ARGUMENT when a named key is not set; DEADLINE_EXCEEDED when the
            time ran out; the client's typed upstream errors otherwise.
    """
    import anyio
    import httpx

    from ... import __version__
    from ...core import secrets
    from ...core.errors import Code, CoreError
    from ...core.http import HeaderValue, HttpClient, Politeness

    limit = MAX_NETWORK_SECONDS if timeout is None else max(0.05, min(timeout,
                                                                      MAX_NETWORK_SECONDS))
    headers: dict[str, HeaderValue] = {}
    if key_name:
        secret = secrets.resolve(key_name)
        if secret is None:
            raise CoreError(Code.INVALID_ARGUMENT, f"The API key {key_name} is not set.",
                            details={"secret": key_name},
                            remediation=f"Set {key_name} in the environment or store it with "
                            f"`readingroom secrets set {key_name}`.")
        headers["Authorization"] = _Bearer(secret)

    async def call() -> Any:
        # A client per call: calls come from worker threads, each with its own event loop.
        async with HttpClient(politeness=Politeness(min_interval=0.0, serial=False,
                                                    max_retries=0),
                              timeout=limit, user_agent=f"readingroom-book-agent/{__version__}",
                              transport=transport) as client:
            with anyio.fail_after(limit):
                return await client.post_json(url, json=payload, headers=headers)

    try:
        return anyio.run(call)
    except TimeoutError:
        raise CoreError(Code.DEADLINE_EXCEEDED, f"{_safe(url)} did not answer within "
                        f"{limit:.1f} s.", details={"seconds": round(limit, 3)}) from None
    except httpx.HTTPError as exc:  # anything the client did not already type
        raise CoreError(Code.TRANSPORT_ERROR, f"The request to {_safe(url)} failed: "
                        f"{type(exc).__name__}.") from None


class _Bearer:
    """``Bearer <key>`` revealed only into the request (see core.http.Revealable)."""

    def __init__(self, secret: Any) -> None:
        self._secret = secret

    def reveal(self) -> str:
        return f"Bearer {self._secret.reveal()}"

    def __repr__(self) -> str:
        return "_Bearer('***')"
