"""Receipts: the one way every server records a search in the shared ledger.

:func:`deposit` builds the entry (redacting secrets from the parameters and hashing query and
parameters), writes it in a worker thread so the event loop never waits on the ledger's lock,
and puts the :class:`~readingroom.core.envelope.Receipt` and any ``RECEIPT_NOT_DEPOSITED`` /
``RECEIPT_WRITE_FAILED`` diagnostic on the envelope. It never raises: a search is not lost for
want of a receipt.

The receipt records what the user is told. The envelope is serialised first, exactly as the
reply will be (:meth:`Envelope.to_data`); one that cannot be (a defect) is answered
``INTERNAL_ERROR`` by :mod:`readingroom.core.mcpkit`, and its receipt says so, with no total
and no results. The wait for the ledger is bounded (:data:`DEPOSIT_LOCK_TIMEOUT`), and a
receipt whose search was answered without it (the call was cancelled or ran out of time) is
never written afterwards.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Mapping, Sequence
from typing import Any

import anyio

from . import ledger
from .clock import Clock, SystemClock
from .envelope import Envelope, Level, Receipt, utc_now_iso
from .errors import Code
from .redaction import DEFAULT_SECRET_NAMES, redact
from .settings import ENV_RECEIPT_LOG

__all__ = ["DEPOSIT_LOCK_TIMEOUT", "deposit", "query_hash"]

log = logging.getLogger("readingroom.receipt")

DEPOSIT_LOCK_TIMEOUT = 5.0
"""The longest a search waits for the ledger's lock (an append holds it for milliseconds)."""


def query_hash(query: str, params: Mapping[str, str]) -> str:
    """SHA-256 hex over the canonical JSON of ``{"query": query, "params": params}``.

    Args:
        query: the normalised query string (e.g. the CQL sent).
        params: the request parameters sent (redact secrets first).
    """
    canonical = ledger.canonical_json({"query": query, "params": dict(params)})
    return hashlib.sha256(canonical).hexdigest()


async def deposit(
    env: Envelope,
    *,
    query: str,
    params: Mapping[str, Any],
    providers: Sequence[str],
    endpoint: str | None,
    outcome: str,
    result_ids: Sequence[str] = (),
    extra: Mapping[str, Any] | None = None,
    secret_names: Sequence[str] = (),
    clock: Clock | None = None,
    environ: Mapping[str, str] | None = None,
    lock_timeout: float = DEPOSIT_LOCK_TIMEOUT,
) -> Receipt:
    """Deposit the receipt of the search ``env`` answers, and record it on ``env``.

    Args:
        env: the envelope (success or failure) about to be sent.
        query: the normalised query sent upstream (e.g. the CQL).
        params: the request parameters sent; secret values are redacted before hashing.
        providers: the upstream sets searched.
        endpoint: the upstream URL (no query string).
        outcome: ``ok``, ``empty`` or the error code.
        result_ids: identifiers of the records returned, in order.
        extra: server-specific fields of the ledger line (e.g. ``normalized_terms``).
        secret_names: parameter names to redact besides the suite's defaults.
        clock: where ``issued_at`` comes from (tests pin it).
        environ: where ``MCP_RECEIPT_LOG`` is read (default ``os.environ``).
        lock_timeout: the longest wait for the ledger's lock, in seconds.
    """
    names = (*DEFAULT_SECRET_NAMES, *secret_names)
    safe_params = dict(redact(params, names))
    qhash = query_hash(query, safe_params)
    issued = utc_now_iso((clock or SystemClock()).now())
    ids = [str(i) for i in result_ids]
    total = env.result.total if env.result else None
    returned = env.result.returned if env.result else 0
    try:
        env.to_data()
    except Exception:  # the reply will be INTERNAL_ERROR (mcpkit), and so is this receipt
        log.exception("the envelope of %s cannot be serialised", env.operation)
        outcome, total, returned, ids = str(Code.INTERNAL_ERROR), None, 0, []
    entry: dict[str, Any] = {
        "server": env.server,
        "operation": env.operation,
        "issued_at": issued,
        "query": query,
        **(extra or {}),
        "params": safe_params,
        "providers": list(providers),
        "endpoint": endpoint,
        "query_hash": qhash,
        "result_ids": ids,
        "total": total,
        "returned": returned,
        "outcome": outcome,
    }
    answered = threading.Event()
    try:
        result = await anyio.to_thread.run_sync(
            lambda: ledger.deposit(entry, env=environ, lock_timeout=lock_timeout,
                                   proceed=lambda: not answered.is_set()),
            abandon_on_cancel=True,
        )
    finally:
        # Cancelled (a deadline): the thread may still be waiting for the lock; once it
        # gets it, it writes nothing, since the search was answered without this receipt.
        answered.set()
    env.receipt = Receipt(issued_at=issued, query_hash=qhash, result_ids=ids,
                          deposited=result.deposited, ledger_hash=result.ledger_hash)
    if result.code is Code.RECEIPT_NOT_DEPOSITED:
        env.diagnose(Level.info, Code.RECEIPT_NOT_DEPOSITED, result.message,
                     hint=f"Set {ENV_RECEIPT_LOG} to keep a verifiable record of searches.")
    elif result.code is Code.RECEIPT_WRITE_FAILED:
        log.warning("receipt not written: %s", result.message)
        env.diagnose(Level.warning, Code.RECEIPT_WRITE_FAILED, result.message)
    return env.receipt
