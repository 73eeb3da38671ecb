"""Network adapters against httpx.MockTransport: embeddings endpoint, /rerank, deadlines."""

from __future__ import annotations

import json
import time

import httpx
import numpy as np
import pytest

from readingroom.book.search.embeddings import OpenAIEmbeddings
from readingroom.book.search.rerank import FIRST_ESTIMATE_S, HttpReranker, rerank
from readingroom.core.errors import Code, CoreError

KEY = "RR_TEST_EMBED_KEY"


def _transport(handler):
    seen: list[httpx.Request] = []

    def record(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return handler(request)

    return httpx.MockTransport(record), seen


def _embeddings_answer(request: httpx.Request) -> httpx.Response:
    body = json.loads(request.content)
    data = [{"index": i, "embedding": [float(len(t)), 1.0, 0.0]}
            for i, t in reversed(list(enumerate(body["input"])))]
    return httpx.Response(200, json={"data": data, "model": body["model"]})


def test_embeddings_endpoint_request_order_and_key_from_the_environment(monkeypatch):
    monkeypatch.setenv(KEY, "sk-test-123")
    transport, seen = _transport(_embeddings_answer)
    emb = OpenAIEmbeddings("http://127.0.0.1:9/v1", "nomic-embed", key_name=KEY,
                           transport=transport)
    rows = emb.embed(["ab", "abcd"])
    assert seen[0].url == "http://127.0.0.1:9/v1/embeddings"
    assert seen[0].headers["authorization"] == "Bearer sk-test-123"
    assert json.loads(seen[0].content) == {"model": "nomic-embed", "input": ["ab", "abcd"]}
    # Answers come back out of order: they are placed by index, then normalised.
    want = np.array([[2, 1, 0], [4, 1, 0]], dtype=np.float32)
    assert np.allclose(rows, want / np.linalg.norm(want, axis=1, keepdims=True))
    assert emb.identity.dim == 3 and emb.identity.kind == "openai"
    assert "sk-test" not in repr(emb.__dict__)


def test_a_named_key_that_is_not_set_is_refused_before_sending(monkeypatch):
    monkeypatch.delenv(KEY, raising=False)
    monkeypatch.setattr("readingroom.core.secrets._read_keyring", lambda name: None)
    transport, seen = _transport(_embeddings_answer)
    with pytest.raises(CoreError) as err:
        OpenAIEmbeddings("http://x/v1", "m", key_name=KEY, transport=transport).embed(["a"])
    assert err.value.code is Code.INVALID_ARGUMENT and KEY in err.value.message
    assert seen == []


@pytest.mark.parametrize(("answer", "code"), [
    (httpx.Response(500), Code.TRANSPORT_ERROR),
    (httpx.Response(401), Code.API_ERROR),
    (httpx.Response(200, json={"nothing": []}), Code.API_ERROR),
    (httpx.Response(200, content=b"<html>"), Code.API_ERROR),
])
def test_embeddings_failures_are_typed(answer, code):
    transport, _ = _transport(lambda request: answer)
    with pytest.raises(CoreError) as err:
        OpenAIEmbeddings("http://x/v1/embeddings", "m", transport=transport).embed(["a"])
    assert err.value.code is code


def _rerank_answer(request: httpx.Request) -> httpx.Response:
    body = json.loads(request.content)
    scores = [d.count("cat") for d in body["documents"]]
    results = [{"index": i, "relevance_score": s} for i, s in enumerate(scores)]
    results.sort(key=lambda r: -r["relevance_score"])
    return httpx.Response(200, json={"results": results})


def test_rerank_ok_reorders_by_relevance():
    transport, seen = _transport(_rerank_answer)
    rr = HttpReranker("http://127.0.0.1:9/v1", "rerank-1", transport=transport)
    outcome = rerank(rr, "auto", "cat", ["dog", "cat cat", "cat"], remaining=None)
    assert outcome.state == "ok" and [i for i, _ in outcome.order or []] == [1, 2, 0]
    assert seen[0].url == "http://127.0.0.1:9/v1/rerank"
    assert json.loads(seen[0].content) == {"model": "rerank-1", "query": "cat",
                                           "documents": ["dog", "cat cat", "cat"], "top_n": 3}
    assert rr.estimate() < FIRST_ESTIMATE_S  # learnt from the answer


def test_rerank_off_and_not_configured():
    assert rerank(None, "off", "q", ["a"], remaining=None).state == "off"
    assert rerank(None, "auto", "q", ["a"], remaining=None).state == "off"
    asked = rerank(None, "on", "q", ["a"], remaining=None)
    assert asked.state == "unavailable" and "no rerank endpoint" in (asked.reason or "")


def test_auto_skips_when_the_deadline_would_be_missed_and_sends_nothing():
    transport, seen = _transport(_rerank_answer)
    rr = HttpReranker("http://x/rerank", "m", transport=transport)
    outcome = rerank(rr, "auto", "cat", ["cat"], remaining=1.0)  # first estimate is 2 s
    assert outcome.state == "skipped" and "deadline" in (outcome.reason or "") and seen == []
    assert rerank(rr, "on", "cat", ["cat"], remaining=1.0).state == "ok"  # on tries anyway


def test_on_abandons_a_rerank_that_outlasts_the_deadline():
    async def slow(request: httpx.Request) -> httpx.Response:
        import anyio

        await anyio.sleep(5)
        return httpx.Response(200, json={"results": []})

    rr = HttpReranker("http://x/rerank", "m", transport=httpx.MockTransport(slow))
    began = time.monotonic()
    outcome = rerank(rr, "on", "cat", ["cat"], remaining=0.6)
    assert outcome.state == "skipped" and "before the deadline" in (outcome.reason or "")
    assert time.monotonic() - began < 2


def test_rerank_failures_are_unavailable_with_the_reason():
    transport, _ = _transport(lambda request: httpx.Response(200, json={"results": [
        {"index": 7, "relevance_score": 1.0}]}))
    outcome = rerank(HttpReranker("http://x", "m", transport=transport), "on", "q", ["a"],
                     remaining=None)
    assert outcome.state == "unavailable" and "API_ERROR" in (outcome.reason or "")
    assert rerank(HttpReranker("http://x", "m"), "on", "q", [], remaining=None).state == "skipped"
