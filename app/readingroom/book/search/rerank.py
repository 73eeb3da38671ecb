"""Optional reranking through a Cohere/Jina-style ``/rerank`` endpoint, within the deadline.

The request is ``{model, query, documents, top_n}``; the answer ``{results: [{index,
relevance_score}]}`` (the shape Cohere, Jina, Voyage and most self-hosted rerankers share).
Each call says what happened (:class:`RerankOutcome`): ``off`` (not asked for), ``unavailable``
(no endpoint, or it failed, with the reason), ``skipped`` (there was not time enough, or
nothing to rerank, with the reason) or ``ok``.

Per call: ``off`` never reranks; ``auto`` reranks when an endpoint is configured and its usual
time (a running average of its answers, :data:`FIRST_ESTIMATE_S` before the first) fits in what
is left of the deadline; ``on`` always tries while at least :data:`MIN_BUDGET_S` is left, and
abandons the call when the deadline comes (``skipped``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

__all__ = [
    "FIRST_ESTIMATE_S",
    "MIN_BUDGET_S",
    "RERANK_CHARS",
    "HttpReranker",
    "RerankMode",
    "RerankOutcome",
    "RerankState",
    "Reranker",
    "rerank",
]

RerankMode = Literal["off", "auto", "on"]
"""The per-call switch."""
RerankState = Literal["off", "unavailable", "skipped", "ok"]
"""What happened to one call's rerank."""

FIRST_ESTIMATE_S = 2.0
"""What ``auto`` assumes a rerank takes before one has been timed."""
MIN_BUDGET_S = 0.25
"""Below this much time left, even ``on`` does not start a rerank."""
RERANK_CHARS = 2000
"""Characters of each record sent to the reranker."""
_MARGIN_S = 0.1  # kept back to build the answer after the reranker has replied


class Reranker(Protocol):
    """What search asks of a reranker."""

    name: str

    def estimate(self) -> float:
        """Seconds a call is expected to take."""
        ...

    def rerank(self, query: str, documents: Sequence[str], *,
               timeout: float) -> list[tuple[int, float]]:
        """``(document index, relevance)`` best first."""
        ...


@dataclass(frozen=True)
class RerankOutcome:
    """One call's rerank: its state, why, and the new order when it ran."""

    state: RerankState
    reason: str | None = None
    order: list[tuple[int, float]] | None = None
    seconds: float | None = None


class HttpReranker:
    """A Cohere/Jina-style ``/rerank`` endpoint.

    Args:
        url: the full ``…/rerank`` URL, or a base to which ``/rerank`` is added.
        model: the model name sent with every request.
        key_name: the secret's name (environment, then the OS keyring); None sends no key.
        transport: an httpx transport (tests pass ``httpx.MockTransport``).
    """

    def __init__(self, url: str, model: str, *, key_name: str | None = None,
                 transport: Any = None) -> None:
        from .embeddings import endpoint_url

        self.url = endpoint_url(url, "rerank")
        self.model = model
        self.name = model
        self.key_name = key_name
        self._transport = transport
        self._estimate: float | None = None
        self._lock = threading.Lock()

    def estimate(self) -> float:
        """The running average of this endpoint's answers (:data:`FIRST_ESTIMATE_S` first)."""
        with self._lock:
            return FIRST_ESTIMATE_S if self._estimate is None else self._estimate

    def rerank(self, query: str, documents: Sequence[str], *,
               timeout: float) -> list[tuple[int, float]]:
        """Ask the endpoint; a typed CoreError (see :func:`.embeddings.post_json_sync`) on
        failure."""
        from ...core.errors import Code, CoreError
        from .embeddings import post_json_sync

        began = time.monotonic()
        body = post_json_sync(self.url, {
            "model": self.model, "query": query,
            "documents": [d[:RERANK_CHARS] for d in documents], "top_n": len(documents),
        }, key_name=self.key_name, timeout=timeout, transport=self._transport)
        spent = time.monotonic() - began
        with self._lock:
            self._estimate = spent if self._estimate is None else 0.7 * self._estimate + 0.3 * spent
        try:
            pairs = [(int(r["index"]), float(r["relevance_score"])) for r in body["results"]]
        except (KeyError, TypeError, ValueError):
            raise CoreError(Code.API_ERROR, "The rerank endpoint answered without "
                            "results[].index and relevance_score.") from None
        if any(not 0 <= i < len(documents) for i, _s in pairs) or len(
                {i for i, _s in pairs}) != len(pairs):
            raise CoreError(Code.API_ERROR, "The rerank endpoint answered with indexes that are "
                            "not the documents sent.")
        return sorted(pairs, key=lambda p: (-p[1], p[0]))


def rerank(reranker: Reranker | None, mode: RerankMode, query: str, documents: Sequence[str],
           *, remaining: float | None) -> RerankOutcome:
    """Rerank ``documents`` for ``query`` if ``mode`` and the time left allow.

    Args:
        reranker: the configured endpoint, or None.
        mode: ``off``, ``auto`` or ``on`` (see the module docstring).
        documents: the candidates' texts, in their current order.
        remaining: seconds left before the caller's deadline; None for no deadline (the
            network adapter's own 120 s maximum still holds).
    """
    from ...core.errors import Code, CoreError

    if mode == "off":
        return RerankOutcome("off")
    if reranker is None:
        # Not chosen at launch: "off" unless this call insisted on it.
        return RerankOutcome("unavailable" if mode == "on" else "off",
                             "no rerank endpoint is configured (launch with --rerank-url and "
                             "--rerank-model)")
    if not documents:
        return RerankOutcome("skipped", "nothing to rerank (no hits)")
    budget = None if remaining is None else remaining - _MARGIN_S
    if budget is not None:
        need = reranker.estimate() if mode == "auto" else MIN_BUDGET_S
        if budget < need:
            return RerankOutcome("skipped", f"the deadline would be missed: {max(budget, 0):.2f}"
                                 f" s left, a rerank takes about {need:.2f} s")
    began = time.monotonic()
    try:
        order = reranker.rerank(query, documents,
                                timeout=budget if budget is not None else 120.0)
    except CoreError as err:
        if err.code is Code.DEADLINE_EXCEEDED:
            return RerankOutcome("skipped", f"the reranker did not answer before the deadline "
                                 f"({err.message})", seconds=time.monotonic() - began)
        return RerankOutcome("unavailable", f"the reranker failed: {err.code}: {err.message}",
                             seconds=time.monotonic() - began)
    return RerankOutcome("ok", order=order, seconds=round(time.monotonic() - began, 4))
