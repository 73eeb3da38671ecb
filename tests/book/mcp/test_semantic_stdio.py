"""Semantic search and rerank through ``book-agent mcp`` as a real stdio subprocess.

Two ways of choosing a model at launch, as a user would: the test-built tiny model2vec folder
(``--semantic-model``), and a loopback fake of an OpenAI-compatible embeddings endpoint
(``--embeddings-url``, a real HTTP server on 127.0.0.1). Every ``book_search`` answer and
``book_status`` must say what ran: ``ok``, ``unavailable`` with the
reason when the model is missing, ``off`` when a call switches it off.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from readingroom.book.search.semantic import SemanticConfig
from readingroom.book.service import BookService
from readingroom.core.rawstdio import RawStdioClient
from tests.book.mcp.fake_endpoints import FakeEndpoints
from tests.book.mcp.library import book_server, envelope
from tests.book.search.tiny_model import make_model

# Starts real server or command processes: left out of the quick tier (tests/conftest.py).
pytestmark = pytest.mark.stdio

BOOK = """# Power

## Wires
The electric current runs through the fence and the lamp.

## Kitchen
Banana bread and a cake, baked in the kitchen.

## Pets
A cat and other animals sleep here.
"""
LOOPBACK = {"NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}


def call(client: RawStdioClient, name: str, **arguments) -> dict:
    return envelope(client.call_tool(name, arguments))


def settled(client: RawStdioClient, book_id: str = "power") -> dict:
    """book_status once the model has stopped warming (the load is in the server's thread, so
    ask until it says; each answer is a round trip, no sleep)."""
    for _ in range(5000):
        status = call(client, "book_status", book_id=book_id)
        if status["data"]["server"]["search"]["semantic"]["state"] != "warming":
            return status
    raise AssertionError("the model never finished loading")


def _source(root: Path) -> Path:
    src = root / "power.md"
    src.write_text(BOOK, encoding="utf-8")
    return src


@pytest.fixture(scope="module")
def local(tmp_path_factory) -> tuple[Path, Path]:
    """A data folder whose book ``power`` was embedded with the tiny model, and the model."""
    root = tmp_path_factory.mktemp("semantic-local")
    model = make_model(root / "tiny")
    data = root / "data"
    BookService(data).init(_source(root), book_id="power",
                           semantic=SemanticConfig(model_dir=model))
    BookService(data).init(_source(root), book_id="plain")
    return data, model


def test_local_model_search_is_hybrid_and_says_ok(local):
    data, model = local
    with book_server(data, "--semantic-model", str(model)) as client:
        client.initialize()
        settled(client)
        # "voltage" is in no record: only the model's topic axis can find the Wires section.
        found = call(client, "book_search", book_id="power", query="voltage", semantic="on")
        modes = found["data"]["modes"]
        assert (modes["lexical"], modes["semantic"], modes["rerank"]) == ("ok", "ok", "off")
        top = found["items"][0]
        assert top["heading_path"][-1] == "Wires" and top["matched_by"] == ["semantic"]
        assert found["query"]["input"]["semantic"] == "on"
        both = call(client, "book_search", book_id="power", query="electric lamp")
        assert both["items"][0]["matched_by"] == ["lexical", "semantic"]
        assert both["items"][0]["ranks"]["fused"] == 1
        off = call(client, "book_search", book_id="power", query="voltage", semantic="off")
        assert off["data"]["modes"]["semantic"] == "off" and off["items"] == []
        assert "semantic=off" in off["data"]["mode_details"]["semantic_reason"]
        status = call(client, "book_status", book_id="power")
        assert status["data"]["search_modes"]["semantic"] == "ok"
        runtime = status["data"]["server"]["search"]["semantic"]
        assert runtime["state"] == "ok" and "tiny-topics" in runtime["model"]
        plain = call(client, "book_search", book_id="plain", query="electric", semantic="on")
        assert plain["data"]["modes"]["semantic"] == "unavailable"
        assert "no embeddings" in plain["data"]["mode_details"]["semantic_reason"]
        assert any(d["code"] == "CAPABILITY_UNAVAILABLE" for d in plain["diagnostics"])


def test_a_bad_mode_value_is_an_invalid_argument(local):
    data, model = local
    with book_server(data, "--semantic-model", str(model)) as client:
        client.initialize()
        result = client.call_tool("book_search", {"book_id": "power", "query": "lamp",
                                                  "semantic": "always"})
        assert result["isError"] is True
        assert envelope(result)["error"]["code"] == "INVALID_ARGUMENT"


def test_a_missing_model_is_unavailable_with_the_reason(local, tmp_path):
    data, _model = local
    with book_server(data, "--semantic-model", str(tmp_path / "gone")) as client:
        client.initialize()
        settled(client)
        found = call(client, "book_search", book_id="power", query="electric", semantic="on")
        assert found["data"]["modes"]["semantic"] == "unavailable"
        assert "no model folder" in found["data"]["mode_details"]["semantic_reason"]
        assert found["items"], "lexical results still come back"
        status = call(client, "book_status", book_id="power")
        assert status["data"]["search_modes"]["semantic"] == "unavailable"
        assert status["data"]["server"]["search"]["semantic"]["state"] == "unavailable"


def test_without_a_model_search_is_lexical_and_says_off(local):
    data, _model = local
    with book_server(data) as client:
        client.initialize()
        found = call(client, "book_search", book_id="power", query="electric")
        assert found["data"]["modes"]["semantic"] == "off"
        status = call(client, "book_status", book_id="power")
        assert status["data"]["server"]["search"]["semantic"]["state"] == "off"
        asked = call(client, "book_search", book_id="power", query="electric", semantic="on",
                     rerank="on")
        assert asked["data"]["modes"]["semantic"] == "unavailable"
        assert asked["data"]["modes"]["rerank"] == "unavailable"


@pytest.fixture(scope="module")
def endpoint_library(tmp_path_factory):
    """A book embedded through the loopback endpoint, and the running fake."""
    root = tmp_path_factory.mktemp("semantic-endpoint")
    model = make_model(root / "tiny")
    with FakeEndpoints(model, key="s3cret") as fake:
        os.environ["FAKE_EMBED_KEY"] = "s3cret"
        try:
            data = root / "data"
            BookService(data).init(_source(root), book_id="power", semantic=SemanticConfig(
                url=fake.base, model="fake-embed", key_name="FAKE_EMBED_KEY"))
        finally:
            del os.environ["FAKE_EMBED_KEY"]
        yield data, fake


def _endpoint_args(fake: FakeEndpoints, key_env: str = "FAKE_EMBED_KEY") -> list[str]:
    return ["--embeddings-url", fake.base, "--embeddings-model", "fake-embed",
            "--embeddings-key-env", key_env, "--rerank-url", fake.base, "--rerank-model",
            "fake-rerank", "--rerank-key-env", key_env]


def test_loopback_embeddings_endpoint_and_rerank(endpoint_library):
    data, fake = endpoint_library
    env = {**LOOPBACK, "FAKE_EMBED_KEY": "s3cret"}
    before = len(fake.log)
    with book_server(data, *_endpoint_args(fake), env=env) as client:
        client.initialize()
        settled(client)
        found = call(client, "book_search", book_id="power", query="voltage", semantic="on",
                     rerank="off")
        modes = found["data"]["modes"]
        assert (modes["semantic"], modes["rerank"]) == ("ok", "off")
        assert found["items"][0]["heading_path"][-1] == "Wires"
        assert found["items"][0]["matched_by"] == ["semantic"]
        ranked = call(client, "book_search", book_id="power", query="banana cake",
                      rerank="on")
        assert ranked["data"]["modes"]["rerank"] == "ok"
        assert ranked["items"][0]["heading_path"][-1] == "Kitchen"
        assert ranked["items"][0]["ranks"]["rerank"] == 1
        assert ranked["data"]["mode_details"]["rerank_model"] == "fake-rerank"
        status = call(client, "book_status", book_id="power")
        assert status["data"]["search_modes"]["rerank"] == "ok"
    seen = fake.log[before:]
    assert {s.path for s in seen} == {"/v1/embeddings", "/v1/rerank"}
    assert all(s.authorized for s in seen), "the key travelled in the Authorization header"
    assert all(s.body["model"] in ("fake-embed", "fake-rerank") for s in seen)


def test_endpoint_without_its_key_is_unavailable_and_sends_nothing(endpoint_library):
    data, fake = endpoint_library
    before = len(fake.log)
    with book_server(data, *_endpoint_args(fake, "FAKE_EMBED_KEY_UNSET"),
                     env=LOOPBACK) as client:
        client.initialize()
        settled(client)
        found = call(client, "book_search", book_id="power", query="electric", semantic="on",
                     rerank="on")
        assert found["data"]["modes"]["semantic"] == "unavailable"
        assert "FAKE_EMBED_KEY_UNSET" in found["data"]["mode_details"]["semantic_reason"]
        assert found["data"]["modes"]["rerank"] == "unavailable"
        assert found["items"], "lexical results still come back"
    assert fake.log[before:] == []


def test_launch_refuses_half_given_model_options(local):
    data, model = local
    import subprocess

    for args in (["--embeddings-url", "http://127.0.0.1:9/v1"],
                 ["--semantic-model", str(model), "--embeddings-url", "http://x/v1",
                  "--embeddings-model", "m"],
                 ["--rerank-url", "http://127.0.0.1:9/v1"],
                 ["--rerank-model", "m"]):
        with book_server(data, *args, stderr=subprocess.PIPE) as client:
            assert client.close() == 2
