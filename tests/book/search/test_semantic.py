"""Semantic search: the model2vec reader on a test-built model, stored vectors, hybrid search."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import numpy as np
import pytest

from readingroom.book.search.embeddings import (
    ModelUnavailable,
    load_static_model,
    read_safetensors,
)
from readingroom.book.search.fusion import RRF_K
from readingroom.book.search.index import BookIndex, build_index
from readingroom.book.search.semantic import (
    EMBEDDINGS_DIR,
    SemanticConfig,
    SemanticRuntime,
    VectorStore,
    hybrid_search,
    write_embeddings,
)

from .corpus import LABELS, RECORDS, ids
from .tiny_model import VOCAB, make_model, vectors, wordpiece_tokenizer, write_safetensors

IDS = [r.record_id for r in RECORDS]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_model(tmp_path_factory.mktemp("model") / "tiny")


@pytest.fixture(scope="module")
def book(tmp_path_factory: pytest.TempPathFactory, model_dir: Path):
    """The search corpus indexed, with its vectors from the tiny model."""
    folder = tmp_path_factory.mktemp("pkg")
    build_index(RECORDS, folder / "index.sqlite", unit_labels=LABELS)
    write_embeddings(RECORDS, folder, load_static_model(model_dir))
    with BookIndex.open(folder / "index.sqlite") as index:
        yield index, folder


def _runtime(model_dir: Path) -> SemanticRuntime:
    runtime = SemanticRuntime(SemanticConfig(model_dir=model_dir))
    assert runtime.wait(10)
    return runtime


# --- the model folder ---------------------------------------------------------------------


def test_safetensors_reader_reads_f32_f16_and_i8(tmp_path):
    data = {"a": np.arange(6, dtype="<f4").reshape(2, 3), "b": np.array([1.5, -2], "<f2"),
            "c": np.array([-3, 4], "i1")}
    write_safetensors(tmp_path / "m.safetensors", data)
    got = read_safetensors(tmp_path / "m.safetensors")
    assert got["a"].tolist() == data["a"].tolist() and got["a"].shape == (2, 3)
    assert got["b"].tolist() == [1.5, -2.0] and got["c"].tolist() == [-3, 4]


def test_safetensors_reader_refuses_a_truncated_file(tmp_path):
    write_safetensors(tmp_path / "m.safetensors", {"a": np.zeros((4, 4), "<f4")})
    blob = (tmp_path / "m.safetensors").read_bytes()
    (tmp_path / "m.safetensors").write_bytes(blob[:-10])
    with pytest.raises(ModelUnavailable, match=r"not a readable safetensors file"):
        read_safetensors(tmp_path / "m.safetensors")


def test_wordpiece_tokens_subwords_unknown_words_dropped_and_cjk_split(model_dir):
    tok = load_static_model(model_dir).tokenizer
    assert tok.ids("Electric currents!") == [VOCAB.index("electric"), VOCAB.index("current"),
                                              VOCAB.index("##s")]
    assert tok.ids("zebra") == []  # unknown: [UNK] is dropped, as model2vec does
    assert tok.ids("古い電燈") == [VOCAB.index("電"), VOCAB.index("燈")]


def test_unigram_tokenizer_takes_the_best_segmentation(tmp_path):
    pieces = [["<unk>", 0.0], ["\u2581electric", -1.0], ["\u2581elec", -2.0], ["tric", -2.0],
              ["\u2581current", -1.0], ["s", -3.0]]
    tokenizer = {"normalizer": {"type": "Lowercase"},
                 "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581",
                                   "prepend_scheme": "always", "split": True},
                 "model": {"type": "Unigram", "unk_id": 0, "vocab": pieces}}
    folder = tmp_path / "uni"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    (folder / "tokenizer.json").write_text(json.dumps(tokenizer))
    write_safetensors(folder / "model.safetensors", {"embeddings": np.eye(6, 8, dtype="<f4")})
    model = load_static_model(folder)
    assert model.tokenizer.ids("Electric Currents") == [1, 4, 5]  # not ▁elec + tric
    assert model.identity.name == "uni" and model.identity.dim == 8


def test_embedding_is_the_normalised_mean_of_token_rows(model_dir):
    model = load_static_model(model_dir)
    rows = vectors()
    want = rows[[VOCAB.index("banana"), VOCAB.index("bread")]].mean(axis=0)
    got = model.embed(["banana bread"])[0]
    assert np.allclose(got, want / np.linalg.norm(want), atol=1e-6)
    assert np.linalg.norm(got) == pytest.approx(1.0)
    assert not model.embed(["zebra"]).any()  # no known token: a zero row, not noise


def test_weights_and_mapping_tensors_are_applied(tmp_path):
    rows = vectors()
    mapping = np.arange(len(VOCAB), dtype="<i4")
    mapping[VOCAB.index("bread")] = VOCAB.index("cat")  # bread now reads the cat row
    weights = np.ones(len(VOCAB), "<f4")
    weights[VOCAB.index("banana")] = 3.0
    folder = make_model(tmp_path / "q", extra={"mapping": mapping, "weights": weights})
    got = load_static_model(folder).embed(["banana bread"])[0]
    want = 3.0 * rows[VOCAB.index("banana")] + rows[VOCAB.index("cat")]
    assert np.allclose(got, want / np.linalg.norm(want), atol=1e-6)


def test_identity_changes_with_the_weights_not_with_the_folder(tmp_path, model_dir):
    first = load_static_model(model_dir).identity
    same = load_static_model(make_model(tmp_path / "copy")).identity
    other = load_static_model(make_model(tmp_path / "other", noise_seed=1)).identity
    assert first.kind == "model2vec" and first.name == "tiny-topics" and first.dim == 8
    assert first.same_model(same) and not first.same_model(other)
    assert first.fingerprint.startswith("sha256:") and first.fingerprint != other.fingerprint


@pytest.mark.parametrize(("damage", "reason"), [
    (lambda f: (f / "model.safetensors").unlink(), "no model.safetensors"),
    (lambda f: (f / "tokenizer.json").write_text(json.dumps(
        {"model": {"type": "NoSuchModel", "vocab": {}}})), "tokenizers library"),
    (lambda f: (f / "tokenizer.json").write_text(json.dumps(
        {**wordpiece_tokenizer(), "normalizer": {"type": "Precompiled"}})), "Precompiled"),
    (lambda f: write_safetensors(f / "model.safetensors",
                                 {"embeddings": np.zeros((3, 8), "<f4")}), "3 rows"),
])
def test_unusable_model_folders_say_why(tmp_path, damage, reason):
    folder = make_model(tmp_path / "m")
    damage(folder)
    with pytest.raises(ModelUnavailable, match=reason):
        load_static_model(folder)
    with pytest.raises(ModelUnavailable, match="no model folder"):
        load_static_model(tmp_path / "absent")


# --- the vectors in the package -----------------------------------------------------------


def test_vectors_are_stored_with_the_model_identity(book, model_dir):
    _index, folder = book
    meta = json.loads((folder / EMBEDDINGS_DIR / "model.json").read_text())
    assert meta["identity"] == load_static_model(model_dir).identity.model_dump()
    assert meta["records"] == len(RECORDS)
    store = VectorStore.open(folder, IDS)
    assert store is not None and store.vectors.shape == (len(RECORDS), 8)
    norms = np.linalg.norm(store.vectors, axis=1)
    # r0003 (⼀つの⽊がある) has no token the tiny model knows: a zero row, never similar.
    assert norms[3] == 0 and np.allclose(np.delete(norms, 3), 1.0, atol=1e-5)


def test_vectors_of_other_records_are_refused(book):
    _index, folder = book
    with pytest.raises(ModelUnavailable, match="do not match"):
        VectorStore.open(folder, list(reversed(IDS)))
    assert VectorStore.open(folder / "nowhere", IDS) is None


# --- hybrid search ------------------------------------------------------------------------


def test_semantic_finds_what_no_word_of_the_query_matches(book, model_dir):
    index, folder = book
    assert index.search("voltage").hits == []  # no record has the word
    result = hybrid_search(index, "voltage", store=lambda: VectorStore.open(folder, IDS),
                           runtime=_runtime(model_dir))
    assert result.modes.semantic == "ok" and result.modes.lexical == "ok"
    assert set(ids(result)[:3]) == {"r0000", "r0006", "r0008"}  # the electricity records
    hit = result.hits[0]
    assert hit.matched_by == ["semantic"] and "lexical" not in hit.ranks
    assert hit.ranks["semantic"] == 1 and hit.scores["semantic"] > 0.5
    assert hit.score == pytest.approx(1 / (RRF_K + 1))
    assert result.mode_details
    assert result.mode_details.fusion == f"reciprocal-rank fusion, k={RRF_K}"


def test_a_record_both_rankings_find_comes_first_and_says_so(book, model_dir):
    index, folder = book
    result = hybrid_search(index, "banana", store=lambda: VectorStore.open(folder, IDS),
                           runtime=_runtime(model_dir))
    top = result.hits[0]
    assert top.record_id == "r0008" and top.matched_by == ["lexical", "semantic"]
    assert top.ranks["lexical"] == 1 and top.ranks["semantic"] == 1 and top.ranks["fused"] == 1
    assert top.score == pytest.approx(2 / (RRF_K + 1))
    assert "«Banana»" in top.snippet and top.matched_terms == ["banana"]


def test_hybrid_narrowing_hints_and_strict_bind_semantic_candidates(book, model_dir):
    index, folder = book
    store = lambda: VectorStore.open(folder, IDS)  # noqa: E731
    runtime = _runtime(model_dir)
    narrowed = hybrid_search(index, "voltage", store=store, runtime=runtime,
                             hints={"pages": "6-7"})
    assert ids(narrowed) == ["r0006"]
    strict = hybrid_search(index, "electric", strict=True, store=store, runtime=runtime)
    assert all("lexical" in h.matched_by for h in strict.hits)
    assert set(ids(strict)) == set(ids(index.search("electric", strict=True)))


def test_hybrid_results_are_deterministic(book, model_dir):
    index, folder = book
    store = lambda: VectorStore.open(folder, IDS)  # noqa: E731
    runtime = _runtime(model_dir)
    runs = [hybrid_search(index, "electric cake city", store=store, runtime=runtime,
                          top_k=9).model_dump() for _ in range(3)]
    assert runs[0] == runs[1] == runs[2]


def test_semantic_off_is_the_lexical_result(book, model_dir):
    index, folder = book
    result = hybrid_search(index, "electric", semantic="off",
                           store=lambda: VectorStore.open(folder, IDS),
                           runtime=_runtime(model_dir))
    assert result.modes.semantic == "off" and ids(result) == ids(index.search("electric"))
    assert all(h.matched_by == ["lexical"] for h in result.hits)


def test_warming_model_gives_lexical_results_and_says_warming(book, model_dir):
    index, folder = book
    gate = threading.Event()

    def slow_loader():
        gate.wait(10)
        return load_static_model(model_dir)

    runtime = SemanticRuntime(loader=slow_loader)
    runtime.start()
    result = hybrid_search(index, "electric", store=lambda: VectorStore.open(folder, IDS),
                           runtime=runtime)
    assert result.modes.semantic == "warming"
    assert "loading in the background" in (result.mode_details.semantic_reason or "")
    assert ids(result) == ids(index.search("electric"))
    gate.set()
    assert runtime.wait(10)
    later = hybrid_search(index, "electric", store=lambda: VectorStore.open(folder, IDS),
                          runtime=runtime)
    assert later.modes.semantic == "ok"


def test_missing_model_is_unavailable_with_the_reason(book, tmp_path):
    index, folder = book
    runtime = SemanticRuntime(SemanticConfig(model_dir=tmp_path / "not-there"))
    assert runtime.wait(10)
    result = hybrid_search(index, "electric", store=lambda: VectorStore.open(folder, IDS),
                           runtime=runtime)
    assert result.modes.semantic == "unavailable"
    assert "no model folder" in (result.mode_details.semantic_reason or "")
    assert ids(result) == ids(index.search("electric"))


def test_another_model_than_the_packages_is_unavailable(book, tmp_path):
    index, folder = book
    other = _runtime(make_model(tmp_path / "other", noise_seed=3))
    result = hybrid_search(index, "voltage", store=lambda: VectorStore.open(folder, IDS),
                           runtime=other)
    assert result.modes.semantic == "unavailable" and result.hits == []
    assert "were made with" in (result.mode_details.semantic_reason or "")


def test_a_package_without_vectors_is_unavailable(book, model_dir):
    index, _folder = book
    result = hybrid_search(index, "electric", store=lambda: None, runtime=_runtime(model_dir))
    assert result.modes.semantic == "unavailable"
    assert "no embeddings" in (result.mode_details.semantic_reason or "")


def test_no_model_chosen_is_off_unless_asked_for(book):
    index, _folder = book
    assert hybrid_search(index, "electric").modes.semantic == "off"
    asked = hybrid_search(index, "electric", semantic="on")
    assert asked.modes.semantic == "unavailable"
    assert "no semantic model was chosen" in (asked.mode_details.semantic_reason or "")
