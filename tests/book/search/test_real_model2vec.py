"""A real model2vec model from the package index: loads, matches model2vec, serves hybrid search.

The model is the one the ``tokenlearn-static-model`` package ships (``static_model/model``:
``config.json``, an int8 ``model.safetensors`` with vocabulary quantization — a ``mapping``
and ``weights`` — and a Unigram ``tokenizer.json`` with a ``Precompiled`` normalizer). It is a
test dependency only, read from its installed package, never copied into the project; the
package states no licence. The hand-written reader refused it ("the normalizer 'Precompiled',
which this reader does not implement"); the reader on the ``tokenizers`` and ``safetensors``
libraries loads it, and its vectors are model2vec's own (``model2vec`` is a test extra for
that comparison).
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from readingroom.book.search.embeddings import StaticModel, load_static_model
from readingroom.book.search.semantic import SemanticConfig, SemanticRuntime
from readingroom.book.service import BookService
from tests.book.make_epub_classes import make_book

# Reads the big real sample books (linear-algebra.epub and the like): left out of the quick tier.
pytestmark = pytest.mark.slow


def _model_folder() -> Path:
    spec = importlib.util.find_spec("static_model")
    if spec is None or not spec.submodule_search_locations:
        reason = ("the test dependency tokenlearn-static-model is not installed "
                  "(pip install -e .[test])")
        if os.environ.get("READINGROOM_REQUIRE_SAMPLES") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    return Path(next(iter(spec.submodule_search_locations))) / "model"


@pytest.fixture(scope="module")
def folder() -> Path:
    return _model_folder()


@pytest.fixture(scope="module")
def model(folder) -> StaticModel:
    return load_static_model(folder)


SENTENCES = [
    "The committee met in the long room above the harbour and read the letters aloud.",
    "Photosynthesis converts light into chemical energy.",
    "Die Katze schläft auf dem warmen Ofen, während draußen der Schnee fällt.",
    "Ein topologischer Raum ist eine Menge mit einer Topologie.",
    "山路を登りながら、こう考えた。智に働けば角が立つ。",
    "東京の天気は晴れです。",
    "x",
]


def test_the_real_model_loads_through_the_libraries(model, folder):
    assert (folder / "tokenizer.json").read_text(encoding="utf-8").count('"Precompiled"')
    assert model.identity.kind == "model2vec" and model.identity.dim == 64
    assert model.mapping is not None and model.weights is not None  # vocabulary quantization
    assert str(model.vectors.dtype) == "int8"


def test_vectors_equal_model2vecs_own_encode(model, folder):
    np = pytest.importorskip("numpy")
    m2v = pytest.importorskip("model2vec")
    long_text = " ".join(SENTENCES) * 80  # past model2vec's cut (max_length × median token)
    texts = [*SENTENCES, long_text]
    reference = m2v.StaticModel.from_pretrained(str(folder)).encode(texts)
    reference = reference / np.maximum(np.linalg.norm(reference, axis=1, keepdims=True), 1e-12)
    cosines = (model.embed(texts) * reference).sum(axis=1)
    assert cosines.min() >= 0.999, dict(zip(texts, cosines.round(5), strict=True))


CHAPTERS = [
    ("baking", "<h1>Baking</h1><p>The baker kneaded the dough and put the loaves of bread "
     "into the hot oven before dawn.</p>"),
    ("astronomy", "<h1>Astronomy</h1><p>Through the telescope we watched the planets and the "
     "distant stars on a clear night.</p>"),
    ("sailing", "<h1>Sailing</h1><p>The sailors raised the sails and the little boat left "
     "the harbour with the evening wind.</p>"),
    ("medicine", "<h1>Medicine</h1><p>The doctor examined the patient and prescribed a "
     "medicine for the fever.</p>"),
    ("money", "<h1>Money</h1><p>The bank lent money to the merchants, who paid interest on "
     "every loan.</p>"),
]


class _Loaded(SemanticConfig):
    """The model already in memory (the test loads the real model once)."""

    def __init__(self, folder: Path, model: StaticModel) -> None:
        super().__init__(model_dir=folder)
        object.__setattr__(self, "_model", model)

    def load(self, transport=None):
        return self._model


@pytest.fixture(scope="module")
def service(tmp_path_factory, folder, model):
    path = tmp_path_factory.mktemp("realmodel")
    book = make_book(path / "topics.epub", CHAPTERS)
    env = BookService(path / "data").init(book, book_id="topics",
                                          semantic=_Loaded(folder, model))
    assert env.data["capabilities"]["semantic"]["model"]["dim"] == 64
    service = BookService(path / "data",
                          semantic=SemanticRuntime(loader=lambda: model))
    service.warm_up(wait=None)
    return service


@pytest.mark.parametrize(("query", "chapter"), [
    ("pastry cook", "Baking"), ("galaxy cosmos", "Astronomy"), ("physician", "Medicine"),
    ("currency", "Money"),
])
def test_hybrid_search_finds_by_meaning_what_lexical_search_misses(service, query, chapter):
    lexical = service.search("topics", query, semantic="off")
    assert lexical.items == []  # not one of the query's words is in the book
    env = service.search("topics", query, semantic="on")
    assert env.data["modes"]["semantic"] == "ok", env.data.get("mode_details")
    first = env.items[0]
    assert first["heading_path"] == [chapter] and first["matched_by"] == ["semantic"]
