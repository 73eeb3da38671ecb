"""Embedding adapters: a local model2vec folder (numpy only) and an OpenAI-compatible endpoint.

Both turn texts into L2-normalised float32 rows and carry a :class:`ModelIdentity`, which is
stored in the package next to the record vectors and compared with the model a server is
launched with: vectors of one model are never queried with another.

The model2vec folder layout read here (what the model2vec loaders read):

- ``config.json``: optional ``normalize`` (default true) and ``model_name``;
- ``tokenizer.json``: a Hugging Face ``tokenizers`` document; its normalizer, pre-tokenizer
  and model (``WordPiece`` or ``Unigram``) are reimplemented here in Python, others are
  refused with the reason;
- ``model.safetensors``: tensor ``embeddings`` (or ``0``), 2-D, F32, F16 or I8, one row per
  token id; optional ``weights`` (a scale per token id) and ``mapping`` (token id → row).

A text is encoded as model2vec does: tokens without special tokens, unknown tokens dropped,
at most :data:`MAX_TOKENS`, the (weighted) mean of their rows, L2-normalised when the config
says so (and always for search: cosine similarity is a dot product of normalised rows).

Nothing here downloads anything: a missing file is a :class:`ModelUnavailable` naming it.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import struct
import unicodedata
from collections.abc import Callable, Sequence
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
_DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4", "I8": "i1",
           "U8": "u1"}


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """The tensors of a ``.safetensors`` file (8-byte little-endian header length, a JSON
    header of ``{name: {dtype, shape, data_offsets}}`` relative to the data after it)."""
    import numpy as np

    data = Path(path).read_bytes()
    if len(data) < 8:
        raise ModelUnavailable(f"{path.name} is too short to be a safetensors file.")
    (length,) = struct.unpack("<Q", data[:8])
    if length > len(data) - 8:
        raise ModelUnavailable(f"{path.name} has a header longer than the file.")
    try:
        header = json.loads(data[8:8 + length].decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise ModelUnavailable(f"{path.name} has an unreadable header.") from None
    body = memoryview(data)[8 + length:]
    tensors: dict[str, np.ndarray] = {}
    for name, spec in header.items():
        if name == "__metadata__":
            continue
        dtype = _DTYPES.get(spec.get("dtype"))
        if dtype is None:
            raise ModelUnavailable(f"Tensor {name!r} has the unsupported dtype "
                                   f"{spec.get('dtype')!r}.")
        start, end = spec["data_offsets"]
        shape = tuple(int(s) for s in spec["shape"])
        if not 0 <= start <= end <= len(body):
            raise ModelUnavailable(f"Tensor {name!r} lies outside {path.name}.")
        array = np.frombuffer(body[start:end], dtype=dtype)
        if array.size != math.prod(shape):
            raise ModelUnavailable(f"Tensor {name!r} does not have the shape it declares.")
        tensors[name] = array.reshape(shape)
    return tensors


# --------------------------------------------------------------------------- tokenizer
def _is_cjk(cp: int) -> bool:
    # The ranges BERT's "handle_chinese_chars" pads with spaces.
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF
            or 0x2A700 <= cp <= 0x2B73F or 0x2B740 <= cp <= 0x2B81F or 0x2B820 <= cp <= 0x2CEAF
            or 0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F)


def _is_punct(ch: str) -> bool:
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def _strip_accents(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFD", text)
                   if unicodedata.category(c) != "Mn")


def _normalizer(spec: dict[str, Any] | None) -> Callable[[str], str]:
    if spec is None:
        return lambda s: s
    kind = spec.get("type")
    if kind == "Sequence":
        steps = [_normalizer(s) for s in spec.get("normalizers", [])]

        def run(text: str) -> str:
            for step in steps:
                text = step(text)
            return text
        return run
    if kind == "BertNormalizer":
        lower = spec.get("lowercase", True)
        strip = spec.get("strip_accents")
        strip = lower if strip is None else strip

        def bert(text: str) -> str:
            out = []
            for ch in text:
                cp = ord(ch)
                if spec.get("clean_text", True):
                    if cp == 0 or cp == 0xFFFD or (unicodedata.category(ch).startswith("C")
                                                   and ch not in "\t\n\r"):
                        continue
                    if ch.isspace():
                        ch = " "
                if spec.get("handle_chinese_chars", True) and _is_cjk(cp):
                    ch = f" {ch} "
                out.append(ch)
            text = "".join(out)
            if strip:
                text = _strip_accents(text)
            return text.lower() if lower else text
        return bert
    if kind in ("NFC", "NFD", "NFKC", "NFKD"):
        form: Any = kind
        return lambda s: unicodedata.normalize(form, s)
    if kind == "Lowercase":
        return str.lower
    if kind == "StripAccents":
        return _strip_accents
    if kind == "Strip":
        left, right = spec.get("strip_left", True), spec.get("strip_right", True)
        return lambda s: (s.lstrip() if left else s).rstrip() if right else (
            s.lstrip() if left else s)
    if kind == "Prepend":
        prefix = spec.get("prepend", "")
        return lambda s: prefix + s if s else s
    if kind == "Replace":
        pattern, content = _pattern(spec.get("pattern", {})), spec.get("content", "")
        return lambda s: pattern.sub(lambda _m: content, s)
    raise ModelUnavailable(f"tokenizer.json uses the normalizer {kind!r}, which this reader "
                           "does not implement.")


def _pattern(spec: dict[str, str]) -> re.Pattern[str]:
    if "String" in spec:
        return re.compile(re.escape(spec["String"]))
    if "Regex" in spec:
        return re.compile(spec["Regex"])
    raise ModelUnavailable("tokenizer.json has a pattern that is neither String nor Regex.")


PreTok = Callable[[list[str]], list[str]]


def _split_each(fn: Callable[[str], list[str]]) -> PreTok:
    return lambda pieces: [out for piece in pieces for out in fn(piece) if out]


def _isolate_punct(word: str) -> list[str]:
    out: list[str] = []
    cur = ""
    for ch in word:
        if _is_punct(ch):
            if cur:
                out.append(cur)
            out.append(ch)
            cur = ""
        else:
            cur += ch
    if cur:
        out.append(cur)
    return out


def _pre_tokenizer(spec: dict[str, Any] | None) -> PreTok:
    if spec is None:
        return lambda pieces: pieces
    kind = spec.get("type")
    if kind == "Sequence":
        steps = [_pre_tokenizer(s) for s in spec.get("pretokenizers", [])]

        def run(pieces: list[str]) -> list[str]:
            for step in steps:
                pieces = step(pieces)
            return pieces
        return run
    if kind == "BertPreTokenizer":
        return _split_each(lambda s: [p for w in s.split() for p in _isolate_punct(w)])
    if kind == "WhitespaceSplit":
        return _split_each(str.split)
    if kind == "Whitespace":
        word = re.compile(r"\w+|[^\w\s]+")
        return _split_each(word.findall)
    if kind == "Punctuation":
        return _split_each(_isolate_punct)
    if kind == "Digits":
        digits = re.compile(r"\d|\D+" if spec.get("individual_digits") else r"\d+|\D+")
        return _split_each(digits.findall)
    if kind == "Metaspace":
        rep = spec.get("replacement", "\u2581")
        scheme = spec.get("prepend_scheme")
        if scheme is None:
            scheme = "always" if spec.get("add_prefix_space", True) else "never"
        split = spec.get("split", True)

        def meta(pieces: list[str]) -> list[str]:
            out = []
            for n, piece in enumerate(pieces):
                text = piece.replace(" ", rep)
                prepend = scheme == "always" or (scheme == "first" and n == 0)
                if prepend and not text.startswith(rep):
                    text = rep + text
                if split:
                    parts = [p for p in re.split(f"(?={re.escape(rep)})", text) if p]
                    out.extend(parts)
                elif text:
                    out.append(text)
            return out
        return meta
    raise ModelUnavailable(f"tokenizer.json uses the pre-tokenizer {kind!r}, which this reader "
                           "does not implement.")


class _Tokenizer:
    """A Python reading of a ``tokenizers`` document: WordPiece or Unigram, to token ids."""

    def __init__(self, doc: dict[str, Any]) -> None:
        model = doc.get("model") or {}
        self.kind = model.get("type")
        self.normalize = _normalizer(doc.get("normalizer"))
        self.pre = _pre_tokenizer(doc.get("pre_tokenizer"))
        if self.kind == "WordPiece":
            self.vocab: dict[str, int] = dict(model["vocab"])
            self.unk_id = self.vocab.get(model.get("unk_token", "[UNK]"))
            self.prefix = model.get("continuing_subword_prefix", "##")
            self.max_chars = int(model.get("max_input_chars_per_word", 100))
            self.size = max(self.vocab.values(), default=-1) + 1
        elif self.kind == "Unigram":
            pieces = model["vocab"]
            self.vocab = {p: i for i, (p, _s) in enumerate(pieces)}
            self.scores = [float(s) for _p, s in pieces]
            unk = model.get("unk_id")
            self.unk_id = int(unk) if unk is not None else None
            self.longest = max((len(p) for p, _s in pieces), default=1)
            self.size = len(pieces)
            # An unknown character costs more than any known piece (as sentencepiece does).
            self.unk_score = min(self.scores, default=0.0) - 10.0
        else:
            raise ModelUnavailable(f"tokenizer.json has a {self.kind!r} model; this reader "
                                   "implements WordPiece and Unigram (model2vec's own).")

    def ids(self, text: str) -> list[int]:
        """Token ids of ``text`` without special tokens; unknown tokens are left out."""
        words = self.pre([self.normalize(text)])
        out: list[int] = []
        for word in words:
            ids = self._wordpiece(word) if self.kind == "WordPiece" else self._viterbi(word)
            out.extend(i for i in ids if i >= 0 and i != self.unk_id)
            if len(out) >= MAX_TOKENS:
                break
        return out[:MAX_TOKENS]

    def _wordpiece(self, word: str) -> list[int]:
        if len(word) > self.max_chars:
            return [-1]
        ids, start = [], 0
        while start < len(word):
            end = len(word)
            found = None
            while start < end:
                piece = word[start:end] if start == 0 else self.prefix + word[start:end]
                if piece in self.vocab:
                    found = self.vocab[piece]
                    break
                end -= 1
            if found is None:  # the whole word is unknown, as BERT decides
                return [-1]
            ids.append(found)
            start = end
        return ids

    def _viterbi(self, text: str) -> list[int]:
        n = len(text)
        best = [0.0] + [-math.inf] * n
        back: list[tuple[int, int | None]] = [(0, None)] * (n + 1)
        for end in range(1, n + 1):
            for start in range(max(0, end - self.longest), end):
                if best[start] == -math.inf:
                    continue
                piece_id = self.vocab.get(text[start:end])
                if piece_id is not None:
                    score = best[start] + self.scores[piece_id]
                elif end - start == 1:
                    score, piece_id = best[start] + self.unk_score, None
                else:
                    continue
                if score > best[end]:
                    best[end], back[end] = score, (start, piece_id)
        ids: list[int] = []
        end = n
        while end > 0:
            start, piece_id = back[end]
            ids.append(piece_id if piece_id is not None else -1)  # -1: unknown character
            end = start
        ids.reverse()
        return ids


# --------------------------------------------------------------------------- static model
@dataclass
class StaticModel:
    """A model2vec static-embedding model in memory (load with :func:`load_static_model`)."""

    identity: ModelIdentity
    vectors: np.ndarray
    tokenizer: _Tokenizer
    weights: np.ndarray | None
    mapping: np.ndarray | None

    def embed(self, texts: Sequence[str], *, timeout: float | None = None) -> np.ndarray:
        """Mean of each text's token rows, L2-normalised; ``timeout`` is ignored (local)."""
        import numpy as np

        out = np.zeros((len(texts), self.identity.dim), dtype=np.float32)
        for n, text in enumerate(texts):
            ids = np.asarray(self.tokenizer.ids(text[:EMBED_CHARS * 2]), dtype=np.int64)
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
    """Load a model2vec folder (see the module docstring); never downloads.

    Raises:
        ModelUnavailable: a file is missing or unreadable, or it uses a tokenizer this reader
            does not implement; the message names what.
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
        tokenizer = _Tokenizer(json.loads(tok_bytes.decode("utf-8")))
    except (UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
        raise ModelUnavailable(f"unreadable config.json or tokenizer.json in {root} "
                               f"({type(exc).__name__})") from None
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
                       mapping=None if mapping is None else mapping.reshape(-1).astype(np.int64))


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
