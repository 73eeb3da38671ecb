"""A tiny model2vec folder built by the tests: 8-d topic vectors over a few dozen tokens.

The safetensors file is written here independently of the reader under test (header length,
JSON header, raw little-endian data), so a test that loads it checks the reader against the
format, not against itself.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np

# Dimensions: 0 electricity, 1 food, 2 animals, 3 cities, 4 maths, 5-7 noise.
TOPICS = {
    "electric": 0, "electricity": 0, "current": 0, "voltage": 0, "fence": 0, "lamp": 0,
    "電": 0, "燈": 0, "banana": 1, "bread": 1, "kitchen": 1, "cake": 1, "猫": 2, "cat": 2,
    "animals": 2, "東": 3, "京": 3, "tokyo": 3, "city": 3, "theorem": 4, "definition": 4,
    "proof": 4,
}
VOCAB = ["[PAD]", "[UNK]", *TOPICS, "the", "of", "and", "a", "##s", "##ing", "story"]
DIM = 8


def vectors(noise_seed: int = 0) -> np.ndarray:
    """One row per token: its topic axis plus a little fixed noise."""
    rng = np.random.default_rng(noise_seed)
    rows = rng.normal(0, 0.05, (len(VOCAB), DIM)).astype(np.float32)
    for token, axis in TOPICS.items():
        rows[VOCAB.index(token), axis] += 1.0
    rows[0] = 0.0
    return rows


def write_safetensors(path: Path, tensors: dict[str, np.ndarray]) -> None:
    """The safetensors layout: u64 LE header size, JSON header, concatenated raw data."""
    header, blobs, offset = {}, [], 0
    names = {np.dtype("<f4"): "F32", np.dtype("<f2"): "F16", np.dtype("<i4"): "I32",
             np.dtype("i1"): "I8"}
    for name, array in tensors.items():
        raw = np.ascontiguousarray(array).tobytes()
        header[name] = {"dtype": names[array.dtype], "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    head = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(head)) + head + b"".join(blobs))


def wordpiece_tokenizer(vocab: list[str] = VOCAB) -> dict:
    """A BERT-style tokenizer.json: BertNormalizer, BertPreTokenizer, WordPiece."""
    return {
        "version": "1.0", "added_tokens": [],
        "normalizer": {"type": "BertNormalizer", "clean_text": True,
                       "handle_chinese_chars": True, "strip_accents": None, "lowercase": True},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": 100,
                  "vocab": {tok: i for i, tok in enumerate(vocab)}},
    }


def make_model(folder: Path, *, name: str = "tiny-topics", noise_seed: int = 0,
               tokenizer: dict | None = None, dtype: str = "<f4",
               extra: dict[str, np.ndarray] | None = None) -> Path:
    """Write a model2vec folder (config.json, tokenizer.json, model.safetensors)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps({"model_name": name, "normalize": True}))
    (folder / "tokenizer.json").write_text(json.dumps(tokenizer or wordpiece_tokenizer()),
                                           encoding="utf-8")
    tensors = {"embeddings": vectors(noise_seed).astype(dtype), **(extra or {})}
    write_safetensors(folder / "model.safetensors", tensors)
    return folder
