"""A loopback fake of an OpenAI-compatible embeddings endpoint and a Cohere-style reranker.

A real HTTP server on 127.0.0.1 (not a mock transport): the book-agent server process reaches
it through its own HTTP client, as it would reach Ollama or LM Studio. Embeddings come from the
test-built tiny model, so they are deterministic and meaningful (topic axes); the reranker
orders documents by how many query words each contains. Every request is logged with its path
and whether it carried the expected key.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from readingroom.book.search.embeddings import load_static_model
from readingroom.core.loopback import SHUTDOWN_POLL_S

__all__ = ["FakeEndpoints", "Seen"]


@dataclass(frozen=True)
class Seen:
    """One request as the fake received it."""

    path: str
    authorized: bool
    body: dict[str, Any] = field(repr=False)


class FakeEndpoints:
    """``POST /v1/embeddings`` and ``POST /v1/rerank`` on a loopback port (a context manager).

    Args:
        model_dir: the tiny model2vec folder whose vectors the fake answers with.
        key: the API key expected as ``Authorization: Bearer KEY`` (None: none expected).
    """

    def __init__(self, model_dir: Path, *, key: str | None = None) -> None:
        self.model = load_static_model(model_dir)
        self.key = key
        self.log: list[Seen] = []
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                size = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(size) or b"{}")
                authorized = fake.key is None or (
                    self.headers.get("Authorization") == f"Bearer {fake.key}")
                with fake._lock:
                    fake.log.append(Seen(self.path, authorized, body))
                if not authorized:
                    return self._send(401, {"error": "bad key"})
                if self.path == "/v1/embeddings":
                    rows = fake.model.embed(body["input"])
                    return self._send(200, {"object": "list", "model": body["model"], "data": [
                        {"object": "embedding", "index": i, "embedding": row.tolist()}
                        for i, row in enumerate(rows)]})
                if self.path == "/v1/rerank":
                    words = set(body["query"].lower().split())
                    scores = [sum(w in doc.lower() for w in words) / (1 + len(words))
                              for doc in body["documents"]]
                    order = sorted(range(len(scores)), key=lambda i: (-scores[i], -i))
                    return self._send(200, {"results": [
                        {"index": i, "relevance_score": scores[i]} for i in order]})
                return self._send(404, {"error": "no such endpoint"})

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                raw = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, *_args: Any) -> None:
                pass  # the test reads fake.log; stderr stays quiet

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        args=(SHUTDOWN_POLL_S,), daemon=True)

    @property
    def base(self) -> str:
        """The API base, ``http://127.0.0.1:PORT/v1``."""
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def paths(self) -> list[str]:
        """The paths requested so far, in order."""
        with self._lock:
            return [s.path for s in self.log]

    def __enter__(self) -> FakeEndpoints:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
