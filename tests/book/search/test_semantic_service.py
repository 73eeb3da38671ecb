"""The Core with semantic search chosen: init stores vectors, search and status say each mode."""

from __future__ import annotations

import json
import threading

import httpx
import pytest

from readingroom.book.search.embeddings import load_static_model
from readingroom.book.search.rerank import HttpReranker
from readingroom.book.search.semantic import SemanticConfig, SemanticRuntime
from readingroom.book.service import BookService
from readingroom.core.errors import Code, CoreError

from .tiny_model import make_model

BOOK = """# Power

## Wires
The electric current runs through the fence and the lamp.

## Kitchen
Banana bread and a cake, baked in the kitchen.

## Pets
A cat and other animals sleep here.
"""


@pytest.fixture
def setup(tmp_path):
    model = make_model(tmp_path / "tiny")
    src = tmp_path / "power.md"
    src.write_text(BOOK, encoding="utf-8")
    data = tmp_path / "data"
    BookService(data).init(src, book_id="power", semantic=SemanticConfig(model_dir=model))
    return data, model, src


def _service(data, model, **kw) -> BookService:
    service = BookService(data, semantic=SemanticConfig(model_dir=model), **kw)
    service.warm_up(wait=None)
    return service


def test_init_stores_vectors_and_the_model_identity(setup):
    data, model, _src = setup
    pkg = BookService(data).registry.get("power")
    sem = pkg.manifest["capabilities"]["semantic"]
    assert sem["model"] == load_static_model(model).identity.model_dump()
    assert sem["records"] == pkg.manifest["counts"]["records"]
    assert (pkg.path / "embeddings" / "vectors.npy").is_file()


def test_search_reports_ok_and_hits_say_what_matched(setup):
    data, model, _src = setup
    env = _service(data, model).search("power", "voltage")
    assert env.data["modes"] == {"lexical": "ok", "lexical_engine": env.data["modes"][
        "lexical_engine"], "semantic": "ok", "rerank": "off"}
    assert env.items[0]["heading_path"][-1] == "Wires"
    assert env.items[0]["matched_by"] == ["semantic"] and env.items[0]["ranks"]["semantic"] == 1
    assert env.query.input["semantic"] == "auto"


def test_without_a_launch_model_search_and_status_are_lexical_only(setup):
    data, _model, _src = setup
    service = BookService(data)
    env = service.search("power", "electric")
    assert env.data["modes"]["semantic"] == "off" and env.data["modes"]["rerank"] == "off"
    assert all(h["matched_by"] == ["lexical"] for h in env.items)
    assert service.status("power").data["search_modes"] == {
        "lexical": "ok", "semantic": "off", "rerank": "off"}
    asked = service.search("power", "electric", semantic="on")
    assert asked.data["modes"]["semantic"] == "unavailable"
    assert any(d.code == Code.CAPABILITY_UNAVAILABLE for d in asked.diagnostics)


def test_status_reports_warming_then_ok(setup):
    data, model, _src = setup
    gate = threading.Event()

    def loader():
        gate.wait(10)
        return load_static_model(model)

    runtime = SemanticRuntime(loader=loader)
    service = BookService(data, semantic=runtime)
    service.warm_up()
    assert service.status("power").data["search_modes"]["semantic"] == "warming"
    env = service.search("power", "electric")
    assert env.data["modes"]["semantic"] == "warming" and env.items
    gate.set()
    runtime.wait(10)
    status = service.status("power").data["search_modes"]
    assert status["semantic"] == "ok" and status["semantic_detail"]["package_embeddings"]


def test_missing_model_is_reported_by_search_and_status(setup, tmp_path):
    data, _model, _src = setup
    service = _service(data, tmp_path / "gone")
    env = service.search("power", "electric")
    assert env.data["modes"]["semantic"] == "unavailable"
    assert "no model folder" in env.data["mode_details"]["semantic_reason"]
    status = service.status("power").data["search_modes"]
    assert status["semantic"] == "unavailable" and "no model folder" in status[
        "semantic_detail"]["reason"]


def test_a_package_made_without_vectors_is_unavailable(setup, tmp_path):
    data, model, src = setup
    BookService(data).init(src, book_id="plain")
    service = _service(data, model)
    assert service.search("plain", "electric").data["modes"]["semantic"] == "unavailable"
    assert service.status("plain").data["search_modes"]["semantic"] == "unavailable"


def test_init_with_a_missing_model_fails_and_registers_nothing(tmp_path):
    src = tmp_path / "b.md"
    src.write_text(BOOK, encoding="utf-8")
    service = BookService(tmp_path / "data")
    with pytest.raises(CoreError) as err:
        service.init(src, book_id="b", semantic=SemanticConfig(model_dir=tmp_path / "none"))
    assert err.value.code is Code.CAPABILITY_UNAVAILABLE
    assert service.registry.list_ids() == []


def test_bad_mode_arguments_are_refused(setup):
    data, model, _src = setup
    with pytest.raises(CoreError) as err:
        _service(data, model).search("power", "electric", rerank="always")
    assert err.value.code is Code.INVALID_ARGUMENT


def _embed(request: httpx.Request) -> httpx.Response:
    """A fake embeddings endpoint: a vector from the topic words it sees."""
    body = json.loads(request.content)
    topics = [("electric", "voltage", "lamp"), ("banana", "cake", "kitchen"), ("cat",)]
    data = [{"index": i, "embedding": [float(sum(w in t.lower() for w in words)) + 0.01
                                       for words in topics]}
            for i, t in enumerate(body["input"])]
    return httpx.Response(200, json={"data": data})


def test_openai_compatible_endpoint_at_init_and_query(tmp_path, monkeypatch):
    monkeypatch.setenv("RR_FAKE_KEY", "k-1")
    src = tmp_path / "b.md"
    src.write_text(BOOK, encoding="utf-8")
    config = SemanticConfig(url="http://127.0.0.1:9/v1", model="fake-embed",
                            key_name="RR_FAKE_KEY", transport=httpx.MockTransport(_embed))
    BookService(tmp_path / "data").init(src, book_id="b", semantic=config)
    service = BookService(tmp_path / "data", semantic=config)
    service.warm_up(wait=None)
    env = service.search("b", "voltage")
    assert env.data["modes"]["semantic"] == "ok"
    assert env.items[0]["heading_path"][-1] == "Wires"
    assert env.data["mode_details"]["semantic_model"] == "openai fake-embed (3-d)"
    other = SemanticConfig(url="http://127.0.0.1:9/v1", model="other-embed",
                           transport=httpx.MockTransport(_embed))
    mismatch = BookService(tmp_path / "data", semantic=other)
    mismatch.warm_up(wait=None)
    assert mismatch.search("b", "voltage").data["modes"]["semantic"] == "unavailable"


def test_rerank_through_the_service(setup):
    data, model, _src = setup

    def answer(request: httpx.Request) -> httpx.Response:
        docs = json.loads(request.content)["documents"]
        order = sorted(range(len(docs)), key=lambda i: -docs[i].count("cake"))
        return httpx.Response(200, json={"results": [
            {"index": i, "relevance_score": float(docs[i].count("cake"))} for i in order]})

    reranker = HttpReranker("http://127.0.0.1:9", "rr", transport=httpx.MockTransport(answer))
    service = _service(data, model, reranker=reranker)
    env = service.search("power", "electric banana", rerank="on")
    assert env.data["modes"]["rerank"] == "ok"
    assert env.items[0]["heading_path"][-1] == "Kitchen" and "rerank" in env.items[0]["ranks"]
    skipped = service.search("power", "electric banana", rerank="auto", deadline=0.0)
    assert skipped.data["modes"]["rerank"] == "skipped"
    assert "deadline" in skipped.data["mode_details"]["rerank_reason"]
    assert service.search("power", "electric", rerank="off").data["modes"]["rerank"] == "off"
